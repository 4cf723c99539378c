// Deleting a MyIngress's AWS side: its rules, listeners and load balancer,
// then the target groups AWS leaves behind, then the managed security group.
import {
  DeleteListenerCommand,
  DeleteLoadBalancerCommand,
  DeleteRuleCommand,
  DescribeListenersCommand,
  DescribeLoadBalancerAttributesCommand,
  DescribeRulesCommand,
  ModifyLoadBalancerAttributesCommand,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { TerminalError } from '../../runtime/errors.ts';
import type { MyIngress } from './api.ts';
import type { MyIngressAdapterDeps } from './deps.ts';
import { elbv2Call, ignoreNotFound } from './elbv2.ts';
import type { MyIngressDetails } from './observation.ts';
import type { TagLookupContext, TargetGroups } from './targetGroups.ts';
import type { SecurityGroups } from './securityGroup.ts';

type TeardownDeps = Pick<MyIngressAdapterDeps, 'elbv2' | 'describer'>;

/**
 * Deletes what a MyIngress has in AWS, one step at a time: never waits for
 * AWS, reports `gone: false` until a later call finds everything deleted.
 * Idempotent (what is already gone counts as deleted); refuses with a
 * TerminalError while the load balancer's deletion protection is on.
 */
export class Teardown {
  private readonly d: TeardownDeps;
  private readonly targetGroups: TargetGroups;
  private readonly securityGroups: SecurityGroups;

  constructor(deps: TeardownDeps, targetGroups: TargetGroups, securityGroups: SecurityGroups) {
    this.d = deps;
    this.targetGroups = targetGroups;
    this.securityGroups = securityGroups;
  }

  /**
   * Deletes the load balancer observe found (with its rules and listeners),
   * and once AWS no longer lists it, the object's target groups (the
   * leftovers observe found, or those it owns: recorded, at its names, or
   * tagged with the object's ownership). `gone` once all are deleted.
   */
  async delete(mr: MyIngress, d: MyIngressDetails, ctx: TagLookupContext): Promise<{ gone: boolean }> {
    // Observe has just described the load balancer; no need to ask AWS again.
    if (
      d.found === 'loadBalancer' &&
      !(await this.deleteLoadBalancer(
        d.lb.LoadBalancerArn ?? '',
        mr.spec.attributes?.deletionProtection === true,
      ))
    )
      return { gone: false };
    // AWS keeps target groups after their load balancer is gone: delete ours explicitly.
    const leftovers = d.found === 'leftovers' ? d.leftoverTargetGroups : undefined;
    for (const tgArn of leftovers ?? (await this.targetGroups.owned(mr, ctx))) {
      const deleted = await this.targetGroups.delete(tgArn);
      if (!deleted) return { gone: false };
    }
    // The managed security group last: AWS refuses while the load balancer's network interfaces
    // still hold it (a RequeueAfter until they are released). Looked for by name even when the
    // spec names groups: one left by an earlier switch to spec.securityGroups goes too.
    const sg = d.found === 'leftovers' ? d.leftoverSecurityGroup : undefined;
    if (sg !== undefined) await this.securityGroups.deleteGroup(sg);
    else await this.securityGroups.delete(mr);
    return { gone: true };
  }

  /**
   * Deletes the load balancer's rules, listeners and itself; true once AWS no longer lists it.
   * `protect`: the spec still asks for deletion protection.
   */
  private async deleteLoadBalancer(arn: string, protect: boolean): Promise<boolean> {
    await this.unprotect(arn, protect);
    await this.deleteListeners(arn);
    await ignoreNotFound('delete load balancer', () =>
      this.d.elbv2.send(new DeleteLoadBalancerCommand({ LoadBalancerArn: arn })),
    );
    return (await this.d.describer.describe(arn)) === undefined;
  }

  /**
   * When deletion protection is on in AWS: turns it off if the spec no longer asks for it (the
   * advice the Terminal message gives works while the object is being deleted), else a
   * TerminalError: AWS would refuse, so Skylift does not try.
   */
  private async unprotect(arn: string, protect: boolean): Promise<void> {
    const attrs =
      (
        await elbv2Call('describe attributes', () =>
          this.d.elbv2.send(new DescribeLoadBalancerAttributesCommand({ LoadBalancerArn: arn })),
        )
      ).Attributes ?? [];
    if (!attrs.some((a) => a.Key === 'deletion_protection.enabled' && a.Value === 'true')) return;
    if (!protect) {
      await elbv2Call('turn off deletion protection', () =>
        this.d.elbv2.send(
          new ModifyLoadBalancerAttributesCommand({
            LoadBalancerArn: arn,
            Attributes: [{ Key: 'deletion_protection.enabled', Value: 'false' }],
          }),
        ),
      );
      return;
    }
    throw new TerminalError(
      'deletion protection is on for this load balancer: set spec.attributes.deletionProtection to false (or turn it off in AWS) and Skylift will finish deleting it',
    );
  }

  /** Deletes every listener of the load balancer, each after its rules (the default rule goes with it). */
  private async deleteListeners(arn: string): Promise<void> {
    const elb = this.d.elbv2;
    const listeners =
      (
        await elbv2Call('describe listeners', () =>
          elb.send(new DescribeListenersCommand({ LoadBalancerArn: arn })),
        )
      ).Listeners ?? [];
    for (const l of listeners) {
      if (l.ListenerArn === undefined) continue;
      const larn = l.ListenerArn;
      const rules =
        (await elbv2Call('describe rules', () => elb.send(new DescribeRulesCommand({ ListenerArn: larn }))))
          .Rules ?? [];
      for (const r of rules) {
        if (r.IsDefault === true || r.RuleArn === undefined) continue;
        const rarn = r.RuleArn;
        await ignoreNotFound('delete rule', () => elb.send(new DeleteRuleCommand({ RuleArn: rarn })));
      }
      await ignoreNotFound('delete listener', () =>
        elb.send(new DeleteListenerCommand({ ListenerArn: larn })),
      );
    }
  }
}
