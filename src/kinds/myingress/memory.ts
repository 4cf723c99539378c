// What each MyIngress's load balancer children were last seen, or made, to be.
// Kept in the adapter — one per set of AWS clients, so never shared between
// accounts or regions — so that a resync can describe the load balancer alone
// and recall the rest until the next full look (docs/myingress.md#what-a-resync-checks).
import { createHash } from 'node:crypto';
import type { Listener, Rule, TargetGroup } from '@aws-sdk/client-elastic-load-balancing-v2';
import type { OwnershipTags } from '../../apis/managed.ts';
import type { MyIngressSpec } from './api.ts';
import type { WebAclSeen } from './webAclPlan.ts';
import type { ManagedGroupLook } from './securityGroupPlan.ts';

/** How a record's children came to be known. */
export type ChildrenOrigin =
  /** Described in full (every listener, rule, target group, target, attribute and tag). */
  | 'described'
  /**
   * The load balancer was just created, in this process, from CreateLoadBalancer's own answer: it
   * has no children yet. (AWS answers a repeated identical CreateLoadBalancer with the existing load
   * balancer; were that one to have children, the update's creates would fail on them — a taken
   * port or priority — and the failed update makes the next look a full one.)
   */
  | 'created'
  /** Known as one of the above, then changed by an update that succeeded: what the update left. */
  | 'applied';

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

/** What is remembered of one object's load balancer. */
export interface Remembered {
  /** The load balancer's ARN: a record of another load balancer is not recalled. */
  readonly arn: string;
  /** The spec the children were known for (specKey): a changed spec is looked at in full. */
  readonly specKey: string;
  /** When a full look or the create last established the children (the engine's clock, ms). */
  readonly knownSince: number;
  readonly origin: ChildrenOrigin;
  readonly children: Children;
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
 * Per object (by uid), what its load balancer's children were last known to
 * be. A record is recalled only for the same load balancer and spec, and only
 * while its children were established less than `fullCheckMs` ago (0: never —
 * every look is a full one); older records are dropped. Holds no promise that
 * AWS still agrees: the caller decides what to re-read. Not thread-safe (the
 * work queue never hands one object to two workers).
 *
 * Beside the records, the targets Skylift last left registered in each target group are kept
 * until the object is forgotten — past the full-check period, and when every look is a full one —
 * so a full look can still tell endpoints that moved (AWS as Skylift left it) from targets changed
 * by hand (drift).
 */
export class IngressMemory {
  private readonly records = new Map<string, Remembered>();
  private readonly left = new Map<
    string,
    { readonly arn: string; readonly targetGroups: Children['targetGroups'] }
  >();
  private readonly fullCheckMs: number;
  private sweptAt = Number.NEGATIVE_INFINITY;

  constructor(fullCheckMs: number) {
    this.fullCheckMs = fullCheckMs;
  }

  /** The record of `uid` for load balancer `arn` and spec `key`, while still fresh at `now`; else undefined. */
  recall(uid: string, arn: string, key: string, now: number): Remembered | undefined {
    const r = this.records.get(uid);
    if (r === undefined) return undefined;
    if (!this.fresh(r, now)) {
      this.records.delete(uid);
      return undefined;
    }
    return r.arn === arn && r.specKey === key ? r : undefined;
  }

  /**
   * The target groups (with their registered targets) `uid`'s load balancer `arn` was last known
   * to have, however long ago and for whichever spec; undefined when not known since the object
   * was last forgotten.
   */
  lastLeft(uid: string, arn: string): Children['targetGroups'] | undefined {
    const l = this.left.get(uid);
    return l?.arn === arn ? l.targetGroups : undefined;
  }

  /** Records what `uid`'s load balancer's children are now; drops records gone stale (at most once a period). */
  remember(uid: string, record: Remembered, now: number): void {
    this.left.set(uid, { arn: record.arn, targetGroups: record.children.targetGroups });
    if (this.fullCheckMs <= 0) return;
    this.records.set(uid, record);
    if (now - this.sweptAt < this.fullCheckMs) return;
    this.sweptAt = now;
    for (const [k, r] of this.records) if (!this.fresh(r, now)) this.records.delete(k);
  }

  /** Forgets `uid` (its children are unknown again: an update under way or failed, a deletion). */
  forget(uid: string): void {
    this.records.delete(uid);
    this.left.delete(uid);
  }

  /** How many objects are remembered. */
  get size(): number {
    return this.records.size;
  }

  private fresh(r: Remembered, now: number): boolean {
    return now - r.knownSince < this.fullCheckMs;
  }
}
