// What each MyIngress's load balancer children were last seen, or made, to be.
// Kept in the adapter — one per set of AWS clients, so never shared between
// accounts or regions — so that a resync can describe the load balancer alone
// and recall the rest until the next full look (docs/myingress.md#what-a-resync-checks).
import { createHash } from 'node:crypto';
import type { Listener, Rule, TargetGroup } from '@aws-sdk/client-elastic-load-balancing-v2';
import type { OwnershipTags } from '../../apis/managed.ts';
import { ChildMemory, type ChildRecord } from '../../runtime/childMemory.ts';
import type { MyIngressSpec } from './api.ts';
import type { WebAclSeen } from './webAclPlan.ts';
import type { ManagedGroupLook } from './securityGroupPlan.ts';

/**
 * One backend's target group as known: the group (undefined: none), its registered targets,
 * `ip:port`, its tags and its attributes (undefined: not known, as for a group a create found
 * under its name).
 */
export interface KnownTargetGroup {
  readonly tg: TargetGroup | undefined;
  readonly registered: readonly string[];
  readonly tags?: Readonly<Record<string, string>> | undefined;
  /** Its attributes (DescribeTargetGroupAttributes, or as an update set them); undefined: not known. */
  readonly attributes?: Readonly<Record<string, string>> | undefined;
}

/** A load balancer's children and tags. */
export interface Children {
  /** The Skylift ownership its tags carry; undefined when none. */
  readonly ownership: OwnershipTags | undefined;
  readonly tags: Readonly<Record<string, string>>;
  readonly listeners: readonly Listener[];
  /** Each listener's rules by listener ARN, the default rule left out. */
  readonly rules: ReadonlyMap<string, readonly Rule[]>;
  /** By backend, `service:port`. */
  readonly targetGroups: ReadonlyMap<string, KnownTargetGroup>;
  /** The attributes AWS lists (one it does not list has its default). */
  readonly attributes: ReadonlyMap<string, string>;
  /** The web ACL attached, when it was read (only for spec.waf or Skylift's record: webAclNeeded). */
  readonly webAcl?: WebAclSeen | undefined;
  /** The managed security group, when it was read (managedGroupLookNeeded). */
  readonly securityGroup?: ManagedGroupLook | undefined;
}

/** What is remembered of one object's load balancer: its children, for which spec, since when, how known. */
export interface Remembered extends ChildRecord<Children> {
  /** The load balancer's ARN: a record of another load balancer is not recalled. */
  readonly arn: string;
}

/** A load balancer's children when it has just been created: none, its tags those it was created with. Pure. */
export function newLoadBalancerChildren(
  tags: Readonly<Record<string, string>>,
  ownership: OwnershipTags,
  securityGroup?: ManagedGroupLook,
): Children {
  return {
    ownership,
    tags,
    listeners: [],
    rules: new Map(),
    targetGroups: new Map(),
    attributes: new Map(),
    // A new load balancer has no web ACL.
    webAcl: { arn: undefined },
    securityGroup,
  };
}

/** The children of what observe saw (the ownership its tags carry included). Pure. */
export function childrenOf(o: {
  readonly ownership: OwnershipTags | undefined;
  readonly tags: Readonly<Record<string, string>>;
  readonly listeners: readonly Listener[];
  readonly rules: ReadonlyMap<string, readonly Rule[]>;
  readonly targetGroups: readonly {
    readonly want: { readonly key: string };
    readonly tg: TargetGroup | undefined;
    readonly registered: readonly string[];
    readonly tags?: Readonly<Record<string, string>> | undefined;
    readonly attributes?: Readonly<Record<string, string>> | undefined;
  }[];
  readonly attributes: ReadonlyMap<string, string>;
  readonly webAcl?: WebAclSeen | undefined;
  readonly securityGroup?: ManagedGroupLook | undefined;
}): Children {
  return {
    ownership: o.ownership,
    tags: o.tags,
    listeners: o.listeners,
    rules: o.rules,
    targetGroups: new Map(
      o.targetGroups.map((t) => [
        t.want.key,
        { tg: t.tg, registered: t.registered, tags: t.tags, attributes: t.attributes },
      ]),
    ),
    attributes: o.attributes,
    webAcl: o.webAcl,
    securityGroup: o.securityGroup,
  };
}

/** A key that changes when the spec does (a digest of it). Pure. */
export function specKey(spec: MyIngressSpec): string {
  return createHash('sha256').update(JSON.stringify(spec)).digest('base64');
}

/**
 * Per object (by uid), what its load balancer's children were last known to be: a child memory
 * (runtime/childMemory.ts) whose parent is the load balancer (by ARN), recalled while established
 * less than `fullCheckMs` ago (0: never — every look is a full one). Past that, the target groups
 * (with the targets Skylift last left registered) are kept until the object is forgotten, so a
 * full look can still tell endpoints that moved (AWS as Skylift left it) from targets changed by
 * hand (drift).
 */
export class IngressMemory extends ChildMemory<Remembered, Children['targetGroups']> {
  constructor(fullCheckMs: number) {
    super({ fullCheckMs, parentOf: (r) => r.arn, lastLeftOf: (r) => r.children.targetGroups });
  }
}
