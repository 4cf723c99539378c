// The MyIngress adapter for one set of AWS clients. Loaded with `import()` at the kind's first
// object (controller.ts), so that the ELBv2 SDK, which the adapter's parts import, is loaded only
// by a process that serves a MyIngress (issue 16).
import type { AwsClients } from '../../providers/aws/clients.ts';
import { LoadBalancerDescriber, TagDescriber } from '../../providers/elbv2/describeBatcher.ts';
import type { Clock } from '../../runtime/clock.ts';
import type { ExternalClient } from '../../runtime/adapter.ts';
import { explainErrors } from '../../runtime/explainErrors.ts';
import { explainRefusal } from '../refusals.ts';
import { MyIngressAdapter, type MyIngressDetails, type MyIngressField } from './adapter.ts';
import type { MyIngress } from './api.ts';
import { myingressRefusals } from './awsRefusals.ts';
import type { MyIngressAdapterDeps } from './deps.ts';

/** What the adapter reads from the cluster (the controller's caches) and how often it looks. */
export type MyIngressClusterDeps = Omit<
  MyIngressAdapterDeps,
  'elbv2' | 'elbv2Create' | 'ec2' | 'describer' | 'tagDescriber'
>;

/**
 * Builds the adapter for `aws`, with its own describe batchers (one per identity and region).
 * Loads the ELBv2 clients of `aws` (and the SDK, the first time); EC2 is loaded only by a lookup
 * that needs it. Starts nothing. Elastic Load Balancing's terminal refusals name the spec field and
 * a fix (awsRefusals.ts).
 */
export async function myIngressAdapterFor(
  aws: AwsClients,
  clock: Clock,
  cluster: MyIngressClusterDeps,
): Promise<ExternalClient<MyIngress, MyIngressDetails, MyIngressField>> {
  const [elbv2, elbv2Create] = await Promise.all([aws.elbv2(), aws.elbv2Create()]);
  return explainErrors(
    new MyIngressAdapter({
      ...cluster,
      elbv2,
      elbv2Create,
      ec2: () => aws.ec2(),
      describer: new LoadBalancerDescriber(elbv2, clock),
      tagDescriber: new TagDescriber(elbv2, clock),
    }),
    (err, mr) => explainRefusal(err, myingressRefusals, mr.spec),
  );
}
