// What an update leaves in AWS: the children observe handed it, changed as
// each step reports what it created, modified or deleted. Remembered once the
// update has succeeded, so the next look need not describe them again.
import type { Listener, Rule, TargetGroup } from '@aws-sdk/client-elastic-load-balancing-v2';
import { ownershipFromTags } from '../../apis/managed.ts';
import { ChildSetState, NestedChildSetState } from '../../runtime/childSetState.ts';
import type { Children, KnownTargetGroup } from './memory.ts';
import type { WebAclSeen } from './webAclPlan.ts';
import type { ManagedGroupLook } from './securityGroupPlan.ts';

/**
 * A load balancer's children as one update changes them: keyed child sets
 * (runtime/childSetState.ts) of its tags, attributes, listeners (by ARN), rules (by ARN, per
 * listener ARN) and target groups (by backend, `service:port`), beside the web ACL and the
 * managed security group. Each step reports what AWS accepted, in the form it was sent (with
 * the ARN AWS gave); `children()` is the result. Mutable; knows nothing of AWS itself.
 */
export class AppliedChildren {
  private readonly tags: ChildSetState<string, string>;
  private readonly ownershipBefore: Children['ownership'];
  private tagged = false;
  private readonly listeners: ChildSetState<string, Listener>;
  private readonly rules: NestedChildSetState<string, string, Rule>;
  private readonly targetGroups: ChildSetState<string, KnownTargetGroup>;
  private readonly attributes: ChildSetState<string, string>;
  private attachedWebAcl: WebAclSeen | undefined;
  private managedGroup: ManagedGroupLook | undefined;

  /** Starts from the children observed (copied). */
  constructor(from: Children) {
    this.tags = new ChildSetState(Object.entries(from.tags));
    this.ownershipBefore = from.ownership;
    this.listeners = new ChildSetState(from.listeners.map((l) => [l.ListenerArn ?? '', l]));
    this.rules = new NestedChildSetState(
      [...from.rules].map(([larn, rs]) => [larn, rs.map((r) => [r.RuleArn ?? '', r] as const)]),
    );
    this.targetGroups = new ChildSetState(from.targetGroups);
    this.attributes = new ChildSetState(from.attributes);
    this.attachedWebAcl = from.webAcl;
    this.managedGroup = from.securityGroup;
  }

  /** The managed security group as an update left it (`group` undefined: deleted). */
  securityGroup(look: ManagedGroupLook): void {
    this.managedGroup = look;
  }

  /** The web ACL associated with (or, `arn` undefined, disassociated from) the load balancer. */
  webAcl(seen: WebAclSeen): void {
    this.attachedWebAcl = seen;
  }

  /** Tags added to the load balancer (ownership tags among them, when adopting). */
  addedTags(tags: readonly { Key: string; Value: string }[]): void {
    for (const t of tags) this.tags.set(t.Key, t.Value);
    this.tagged = true;
  }

  /** Tags removed from the load balancer. */
  removedTags(keys: readonly string[]): void {
    for (const k of keys) this.tags.delete(k);
  }

  /** Attributes set on the load balancer. */
  setAttributes(attrs: Iterable<readonly [string, string]>): void {
    for (const [k, v] of attrs) this.attributes.set(k, v);
  }

  /**
   * A backend's target group as it now is (created or modified), its registered targets, its
   * tags and its attributes (undefined: not known).
   */
  targetGroup(
    key: string,
    tg: TargetGroup,
    registered: readonly string[],
    tags: Readonly<Record<string, string>> | undefined,
    attributes?: Readonly<Record<string, string>>,
  ): void {
    this.targetGroups.set(key, { tg, registered: [...registered].sort(), tags, attributes });
  }

  /** A listener created or modified. */
  listener(l: Listener): void {
    this.listeners.set(l.ListenerArn ?? '', l);
  }

  /** A listener deleted (its rules go with it). */
  listenerDeleted(arn: string): void {
    this.listeners.delete(arn);
    this.rules.deleteSet(arn);
  }

  /** A rule created or modified on listener `listenerArn`. */
  rule(listenerArn: string, r: Rule): void {
    this.rules.set(listenerArn, r.RuleArn ?? '', r);
  }

  /** A rule deleted from listener `listenerArn`. */
  ruleDeleted(listenerArn: string, ruleArn: string): void {
    this.rules.delete(listenerArn, ruleArn);
  }

  /** The children once every step so far has been carried out. A new value each call. */
  children(): Children {
    const tags = Object.fromEntries(this.tags.toMap());
    return {
      ownership: this.tagged ? ownershipFromTags(tags) : this.ownershipBefore,
      tags,
      listeners: this.listeners.values(),
      rules: this.rules.toMap(),
      targetGroups: this.targetGroups.toMap(),
      attributes: this.attributes.toMap(),
      webAcl: this.attachedWebAcl,
      securityGroup: this.managedGroup,
    };
  }
}
