// spec.waf: the AWS WAF (v2) web ACL of a MyIngress's load balancer. Skylift records the ACL it
// associated in the load balancer's skylift.dev/waf-acl tag, and disassociates only that one: an
// ACL attached by someone else (Firewall Manager, another team's tooling) is never removed. The
// WAFv2 SDK is loaded by the first object that names or recorded an ACL, never by a process
// without one (issue 16).
import {
  AddTagsCommand,
  RemoveTagsCommand,
  type ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import type { WAFV2Client } from '@aws-sdk/client-wafv2';
import { awsCall } from '../../providers/aws/calls.ts';
import type { AwsClients } from '../../providers/aws/clients.ts';
import { LazyClient } from '../../providers/aws/lazyClient.ts';
import { wafv2ErrorTable } from '../../providers/wafv2/errors.ts';
import type { IngressUpdate } from './deps.ts';
import { elbv2Call } from './elbv2.ts';
import { wafAclTag, webAclPlan, type WebAclSeen } from './webAclPlan.ts';

/** WAFv2, only for load balancers with a web ACL: one client per set of AWS clients, made on first use. */
const wafv2Client = new LazyClient<WAFV2Client>('wafv2', async (config) => {
  const { WAFV2Client } = await import('@aws-sdk/client-wafv2');
  return new WAFV2Client({ ...config });
});

/** The WAFv2 client of `aws`, made (and its SDK loaded) by the first call. */
export function wafv2Of(aws: AwsClients): () => Promise<WAFV2Client> {
  return () => wafv2Client.of(aws);
}

/**
 * A load balancer's web ACL: reading which one is attached, and the update step that carries out
 * a {@link webAclPlan}. Each call is idempotent; failures become typed errors named after the step.
 */
export class WebAcls {
  private readonly elbv2: ElasticLoadBalancingV2Client;
  private readonly wafv2: () => Promise<WAFV2Client>;

  constructor(deps: {
    readonly elbv2: ElasticLoadBalancingV2Client;
    readonly wafv2: () => Promise<WAFV2Client>;
  }) {
    this.elbv2 = deps.elbv2;
    this.wafv2 = deps.wafv2;
  }

  /** The web ACL associated with the load balancer `arn`. Read-only. */
  async attached(arn: string): Promise<WebAclSeen> {
    const out = await awsCall('read web ACL of load balancer', wafv2ErrorTable, async () => {
      const client = await this.wafv2();
      const { GetWebACLForResourceCommand } = await import('@aws-sdk/client-wafv2');
      return client.send(new GetWebACLForResourceCommand({ ResourceArn: arn }));
    });
    return { arn: out.WebACL?.ARN };
  }

  /**
   * Brings the web ACL to the spec (see webAclPlan), given what observe saw attached (undefined:
   * not read) and the tags: the record first, then the association; a disassociation, then the
   * record dropped. Reports each change to the update.
   */
  async sync(
    u: IngressUpdate,
    attached: WebAclSeen | undefined,
    tags: Readonly<Record<string, string>>,
  ): Promise<void> {
    const plan = webAclPlan(u.mr.spec, tags[wafAclTag], attached);
    if (plan.record !== undefined) {
      const record = [{ Key: wafAclTag, Value: plan.record }];
      await elbv2Call('record web ACL', () =>
        this.elbv2.send(new AddTagsCommand({ ResourceArns: [u.arn], Tags: record })),
      );
      u.applied.addedTags(record);
    }
    if (plan.associate !== undefined) {
      const acl = plan.associate;
      await awsCall('associate web ACL', wafv2ErrorTable, async () => {
        const client = await this.wafv2();
        const { AssociateWebACLCommand } = await import('@aws-sdk/client-wafv2');
        return client.send(new AssociateWebACLCommand({ WebACLArn: acl, ResourceArn: u.arn }));
      });
      u.applied.webAcl({ arn: acl });
      u.done.push(`web ACL ${acl}`);
    }
    if (plan.disassociate === true) {
      await awsCall('disassociate web ACL', wafv2ErrorTable, async () => {
        const client = await this.wafv2();
        const { DisassociateWebACLCommand } = await import('@aws-sdk/client-wafv2');
        return client.send(new DisassociateWebACLCommand({ ResourceArn: u.arn }));
      });
      u.applied.webAcl({ arn: undefined });
      u.done.push('web ACL removed');
    }
    if (plan.dropRecord === true) {
      await elbv2Call('drop web ACL record', () =>
        this.elbv2.send(new RemoveTagsCommand({ ResourceArns: [u.arn], TagKeys: [wafAclTag] })),
      );
      u.applied.removedTags([wafAclTag]);
      if (plan.disassociate !== true) u.done.push('web ACL record dropped');
    }
  }
}
