// A shared resource: one provider resource whose parts come from many Kubernetes objects, its
// members (MyIngresses of a group sharing one load balancer, HTTPRoutes attached to a Gateway; an
// Aurora cluster's instances, a blue/green deployment's two sides). This module is the pure core
// of the facility, the rules every such kind follows:
//
// - precedence: members are ordered oldest first, then by namespace/name (the Gateway API's rule
//   for conflicting routes), so the outcome never depends on the order events arrived in;
// - exclusive claims: what a member claims (a host and path on a port, a priority) is granted to
//   the first member in precedence that claims it; a later member claiming any of it is refused
//   whole (Conflict: nothing of it is applied, nothing of the holder's is overwritten);
// - attribution: every child made for a member carries the group's tag and the member's uid, so a
//   member that left (deleted, moved to another group, refused) has its children found and
//   removed at the next reconcile of the group, whatever the order of events and crashes;
// - lifecycle: the shared resource exists while a member stays; the last member out deletes it,
//   and a leaving member is let go only once nothing of it is left in the provider.
//
// Knows no kind and no provider; sends nothing.
import { planChildSet, type ChildSetOptions, type ChildSetResult, type ObservedChild } from './childSet.ts';

/** Tag on a shared resource and on each of its children: the group (`<kind>/<group key>`). */
export const sharedGroupTagKey = 'skylift.dev/group';
/** Tag on a child of a shared resource: the uid of the member it was made for. */
export const sharedMemberTagKey = 'skylift.dev/member';

/** One object contributing to a shared resource, and what it contributes. */
export interface SharedMember<C> {
  /** `namespace/name` (or `name` for a cluster-scoped member). */
  readonly key: string;
  readonly uid: string;
  /** Its creationTimestamp (RFC 3339), the first criterion of precedence. */
  readonly createdAt: string;
  /** Leaving: being deleted, or naming another group now. Its claims are free; its children go. */
  readonly leaving: boolean;
  /** What it asks of the shared resource, typed by the kind. */
  readonly contribution: C;
}

/**
 * The precedence of two members: negative when `a` comes first — older first, then the smaller
 * key. A total order for distinct keys. Pure.
 */
export function memberPrecedence(
  a: Pick<SharedMember<unknown>, 'createdAt' | 'key'>,
  b: Pick<SharedMember<unknown>, 'createdAt' | 'key'>,
): number {
  const ta = Date.parse(a.createdAt);
  const tb = Date.parse(b.createdAt);
  if (ta !== tb) return (Number.isNaN(ta) ? Infinity : ta) < (Number.isNaN(tb) ? Infinity : tb) ? -1 : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** A member refused because an earlier one holds what it claims. */
export interface MemberRefusal {
  readonly member: string;
  /** The first of its claims found held, as the kind wrote it (e.g. `443 shop.example.com /api`). */
  readonly claim: string;
  /** The member holding it (its key). */
  readonly heldBy: string;
}

/** Who got what they claimed. */
export interface ClaimSettlement<C> {
  /** The members that stay and got every claim, in precedence order. */
  readonly granted: readonly SharedMember<C>[];
  /** The members that stay and were refused (each once, with its first held claim). */
  readonly refused: readonly MemberRefusal[];
}

/**
 * Settles the members' exclusive claims: in precedence order, a member that stays gets all its
 * claims unless an earlier granted member holds one of them — then it is refused whole. Leaving
 * members claim nothing. A member claiming the same thing twice does not conflict with itself.
 * Pure and deterministic (the order of `members` does not matter).
 */
export function settleClaims<C>(
  members: readonly SharedMember<C>[],
  claimsOf: (contribution: C) => Iterable<string>,
): ClaimSettlement<C> {
  const held = new Map<string, string>();
  const granted: SharedMember<C>[] = [];
  const refused: MemberRefusal[] = [];
  for (const m of [...members].filter((x) => !x.leaving).sort(memberPrecedence)) {
    const claims = [...new Set(claimsOf(m.contribution))];
    const taken = claims.find((c) => held.has(c));
    if (taken !== undefined) {
      refused.push({ member: m.key, claim: taken, heldBy: held.get(taken) ?? '' });
      continue;
    }
    for (const c of claims) held.set(c, m.key);
    granted.push(m);
  }
  return { granted, refused };
}

/** What the shared resource itself needs: to exist, to go, or nothing. */
export type SharedResourceStep = 'ensure' | 'delete' | 'none';

/**
 * The shared resource exists while any member stays (refused members count: they are waiting for
 * their claim, and the resource keeps serving the others); with none staying it is deleted, or
 * left absent. Pure.
 */
export function sharedResourceStep(
  members: readonly Pick<SharedMember<unknown>, 'leaving'>[],
  exists: boolean,
): SharedResourceStep {
  if (members.some((m) => !m.leaving)) return 'ensure';
  return exists ? 'delete' : 'none';
}

/**
 * The leaving members that may be let go now (their finalizers removed): those no observed child
 * is attributed to; and when no member stays, only once the shared resource is gone (the last
 * one out waits for it). `attributed`: the member uids the observed children carry. Pure.
 */
export function releasableMembers<C>(
  members: readonly SharedMember<C>[],
  attributed: ReadonlySet<string>,
  resourceExists: boolean,
): SharedMember<C>[] {
  const lastOut = !members.some((m) => !m.leaving);
  if (lastOut && resourceExists) return [];
  return members.filter((m) => m.leaving && !attributed.has(m.uid));
}

/** A child as a shared resource wants it: its value and the member it is made for. */
export interface AttributedChild<V> {
  readonly member: string;
  readonly value: V;
}

/** A child as observed: its value, the member uid and group its tags carry (undefined: none). */
export interface ObservedSharedChild<V> {
  readonly value: V;
  readonly member: string | undefined;
  readonly group: string | undefined;
}

/**
 * Plans a shared resource's children: `wanted` are the granted members' children by key, each
 * attributed to its member; an observed child is the group's when it carries the group's tag
 * (`group`), and is then replaced when its value or its member differ, deleted when no granted
 * member wants its key (a member that left, was refused, or dropped it); a child without the tag
 * is another owner's and never touched (a conflict when wanted). Limits and order as
 * `planChildSet`'s; `equal` compares values (members are compared by uid). Pure.
 */
export function planSharedChildren<K, V>(
  group: string,
  wanted: Iterable<readonly [K, AttributedChild<V>]>,
  observed: Iterable<readonly [K, ObservedSharedChild<V>]>,
  options: ChildSetOptions<V> = {},
): ChildSetResult<K, AttributedChild<V>> {
  const equalValue = options.equal ?? Object.is;
  const seen: [K, ObservedChild<AttributedChild<V>>][] = [];
  for (const [k, o] of observed)
    seen.push([k, { value: { member: o.member ?? '', value: o.value }, ours: o.group === group }]);
  return planChildSet(wanted, seen, {
    ...(options.order !== undefined ? { order: options.order } : {}),
    ...(options.limits !== undefined ? { limits: options.limits } : {}),
    equal: (w, o) => w.member === o.member && equalValue(w.value, o.value),
  });
}

/** The uids the observed children are attributed to (the group's children only). Pure. */
export function attributedMembers<V>(group: string, observed: Iterable<ObservedSharedChild<V>>): Set<string> {
  const out = new Set<string>();
  for (const o of observed) if (o.group === group && o.member !== undefined) out.add(o.member);
  return out;
}
