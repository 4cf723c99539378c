// What an update leaves in AWS: the children observe handed it, changed as
// each step reports what it created, modified or deleted. Remembered once the
// update has succeeded, so the next look need not describe them again.
import type { Listener, Rule, TargetGroup } from '@aws-sdk/client-elastic-load-balancing-v2';
import { ownershipFromTags } from '../../apis/managed.ts';
import type { Children, KnownTargetGroup } from './memory.ts';
import type { WebAclSeen } from './webAclPlan.ts';
import type { ManagedGroupLook } from './securityGroupPlan.ts';

/**
 * A load balancer's children as one update changes them. Each step reports
 * what AWS accepted, in the form it was sent (with the ARN AWS gave);
 * `children()` is the result. Knows nothing of AWS itself.
 */
export class AppliedChildren {
  private tags: Record<string, string>;
  private readonly ownershipBefore: Children['ownership'];
  private tagged = false;
  private readonly listeners: Map<string, Listener>;
  private readonly rules: Map<string, Map<string, Rule>>;
  private readonly targetGroups: Map<string, KnownTargetGroup>;
  private readonly attributes: Map<string, string>;
  private attachedWebAcl: WebAclSeen | undefined;
  private managedGroup: ManagedGroupLook | undefined;

  constructor(from: Children) {
    this.tags = { ...from.tags };
    this.ownershipBefore = from.ownership;
    this.listeners = new Map(from.listeners.map((l) => [l.ListenerArn ?? '', l]));
    this.rules = new Map(
      [...from.rules].map(([larn, rs]) => [larn, new Map(rs.map((r) => [r.RuleArn ?? '', r]))]),
    );
    this.targetGroups = new Map(from.targetGroups);
    this.attributes = new Map(from.attributes);
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
    for (const t of tags) this.tags[t.Key] = t.Value;
    this.tagged = true;
  }

  /** Tags removed from the load balancer. */
  removedTags(keys: readonly string[]): void {
    const gone = new Set(keys);
    this.tags = Object.fromEntries(Object.entries(this.tags).filter(([k]) => !gone.has(k)));
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
    this.rules.delete(arn);
  }

  /** A rule created or modified on listener `listenerArn`. */
  rule(listenerArn: string, r: Rule): void {
    const rs = this.rules.get(listenerArn) ?? new Map<string, Rule>();
    rs.set(r.RuleArn ?? '', r);
    this.rules.set(listenerArn, rs);
  }

  /** A rule deleted from listener `listenerArn`. */
  ruleDeleted(listenerArn: string, ruleArn: string): void {
    this.rules.get(listenerArn)?.delete(ruleArn);
  }

  /** The children once every step so far has been carried out. */
  children(): Children {
    return {
      ownership: this.tagged ? ownershipFromTags(this.tags) : this.ownershipBefore,
      tags: { ...this.tags },
      listeners: [...this.listeners.values()],
      rules: new Map([...this.rules].map(([larn, rs]) => [larn, [...rs.values()]])),
      targetGroups: new Map(this.targetGroups),
      attributes: new Map(this.attributes),
      webAcl: this.attachedWebAcl,
      securityGroup: this.managedGroup,
    };
  }
}
