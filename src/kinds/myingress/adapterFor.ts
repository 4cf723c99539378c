// The MyIngress adapter for one set of AWS clients. Loaded with `import()` at the kind's first
// object (controller.ts), so that the ELBv2 SDK, which the adapter's parts import, is loaded only
// by a process that serves a MyIngress (issue 16).
import type { ElasticLoadBalancingV2Client } from '@aws-sdk/client-elastic-load-balancing-v2';
import { ScopeKey } from '../../providers/aws/accountScope.ts';
import type { AwsClients } from '../../providers/aws/clients.ts';
import { AccountReaders } from '../../providers/aws/readers.ts';
import { taggedResourcesOf } from '../../providers/aws/taggedResources.ts';
import { LoadBalancerDescriber, TagDescriber } from '../../providers/elbv2/describeBatcher.ts';
import type { Clock } from '../../runtime/clock.ts';
import type { ExternalClient } from '../../runtime/adapter.ts';
import { explainErrors } from '../../runtime/explainErrors.ts';
import { explainRefusal } from '../refusals.ts';
import { MyIngressAdapter, type MyIngressDetails, type MyIngressField } from './adapter.ts';
import type { MyIngress } from './api.ts';
import { myingressRefusals } from './awsRefusals.ts';
import type { MyIngressAdapterDeps } from './deps.ts';
import { wafv2Of } from './webAcl.ts';
import { hostCertificates } from './acm.ts';

/** What the adapter reads from the cluster (the controller's caches) and how often it looks. */
export type MyIngressClusterDeps = Omit<
  MyIngressAdapterDeps,
  | 'elbv2'
  | 'elbv2Create'
  | 'ec2'
  | 'wafv2'
  | 'describer'
  | 'tagDescriber'
  | 'taggedResources'
  | 'certificates'
> & {
  /** How long one ACM certificate list answers host lookups in an account (settings.ts). */
  readonly certificateListMaxAgeMs: number;
};

/**
 * The ELBv2 describe batchers of one account and region, shared by every identity (role) of the
 * account and every namespace they serve: a resync of many MyIngresses asks for their load
 * balancers and tags in a few calls, whoever's they are. They read through any live identity.
 */
interface Elbv2Account {
  readonly readers: AccountReaders<ElasticLoadBalancingV2Client>;
  readonly describer: LoadBalancerDescriber;
  readonly tagDescriber: TagDescriber;
}

const elbv2AccountKey = new ScopeKey<Elbv2Account>('myingress/elbv2');

/**
 * Builds the adapter for `aws` (one identity in one account and region), with its account's shared
 * describe batchers ({@link Elbv2Account}); its writes are signed by `aws`.
 * Loads the ELBv2 clients of `aws` (and the SDK, the first time); EC2 is loaded only by a lookup
 * that needs it, WAFv2 by the first object with a web ACL, and the Tagging API by the first
 * full look or deletion (its target groups by ownership tag). Starts nothing. Elastic Load Balancing's terminal refusals name the spec field and
 * a fix (awsRefusals.ts).
 */
export async function myIngressAdapterFor(
  aws: AwsClients,
  clock: Clock,
  cluster: MyIngressClusterDeps,
): Promise<ExternalClient<MyIngress, MyIngressDetails, MyIngressField>> {
  const [elbv2, elbv2Create] = await Promise.all([aws.elbv2(), aws.elbv2Create()]);
  const account = aws.scope.memo(elbv2AccountKey, () => {
    const readers = new AccountReaders<ElasticLoadBalancingV2Client>('Elastic Load Balancing');
    const read = (): ElasticLoadBalancingV2Client => readers.current();
    return {
      readers,
      describer: new LoadBalancerDescriber(read, clock),
      tagDescriber: new TagDescriber(read, clock),
    };
  });
  account.readers.add(elbv2, () => !aws.destroyed);
  const { certificateListMaxAgeMs, ...clusterDeps } = cluster;
  return explainErrors(
    new MyIngressAdapter({
      ...clusterDeps,
      certificates: hostCertificates(aws, clock, certificateListMaxAgeMs),
      elbv2,
      elbv2Create,
      ec2: () => aws.ec2(),
      wafv2: wafv2Of(aws),
      describer: account.describer,
      tagDescriber: account.tagDescriber,
      taggedResources: taggedResourcesOf(aws),
    }),
    (err, mr) => explainRefusal(err, myingressRefusals, mr.spec),
  );
}
