// What a MyIngressGroup's load balancer should be, from the group and its members: who is admitted,
// who holds which host and path (the engine's settleClaims), and one merged MyIngress spec whose
// rules are the granted members' in order — the spec the MyIngress machinery then applies as it
// would a MyIngress's own. Pure: no AWS, no Kubernetes.
import {
  forwardBackends,
  type ActionSpec,
  type MyIngress,
  type MyIngressSpec,
  type RuleSpec,
} from '../api.ts';
import { settleClaims, type SharedMember } from '../../../runtime/sharedResource.ts';
import { selectorMatches } from '../../../tenancy/selection.ts';
import { MemberState, type GroupMemberStatus, type MyIngressGroup } from './api.ts';

/**
 * The name a member's backend Service goes by in the merged spec: `namespace/member/service`.
 * Unique per member (no Kubernetes name holds a `/`), so each member has target groups of its own
 * (named from it: names.ts hashes the whole), and readable in the group's status. Pure.
 */
export function groupBackendName(namespace: string, member: string, service: string): string {
  return `${namespace}/${member}/${service}`;
}

/**
 * The namespace, member and Service of a merged backend name; undefined for any other name. A
 * member's Service of another namespace (a Gateway route's, which a ReferenceGrant allows) is named
 * `otherNamespace/service` in the member, so `namespace/member/otherNamespace/service` here: the
 * Service's namespace is the other one. Pure.
 */
export function parseGroupBackendName(
  name: string,
): { namespace: string; member: string; memberNamespace: string; service: string } | undefined {
  const parts = name.split('/');
  if (parts.length === 4) {
    const [memberNamespace = '', member = '', namespace = '', service = ''] = parts;
    return namespace !== '' && member !== '' && service !== '' && memberNamespace !== ''
      ? { namespace, member, memberNamespace, service }
      : undefined;
  }
  if (parts.length !== 3) return undefined;
  const [namespace = '', member = '', service = ''] = parts;
  return namespace !== '' && member !== '' && service !== ''
    ? { namespace, member, memberNamespace: namespace, service }
    : undefined;
}

/**
 * The claims of a member's rules: `<port> <host> <path>` for each host × path of each rule (a rule
 * without hosts claims host `*`, without paths path `*`); hosts in lower case (DNS names are not
 * case-sensitive). A rule with headers, queryStrings or methods claims its host and path only
 * under those conditions: a fourth part, the conditions in a canonical form without spaces (so two
 * members may route one path by different headers). `firstPort`: the port of the group's first
 * listener, a rule's default. Pure.
 */
export function claimKeys(rules: readonly RuleSpec[], firstPort: number): string[] {
  const out: string[] = [];
  for (const r of rules) {
    const port = r.listenerPort ?? firstPort;
    const more = matchClaim(r);
    for (const host of r.hosts !== undefined && r.hosts.length > 0 ? r.hosts : ['*'])
      for (const path of r.paths !== undefined && r.paths.length > 0 ? r.paths : ['*'])
        out.push(`${port} ${host.toLowerCase()} ${path}${more}`);
  }
  return out;
}

/** A rule's header, query string and method conditions as a claim's fourth part (`''` without). Pure. */
function matchClaim(r: RuleSpec): string {
  const headers = (r.headers ?? [])
    .map((h) => [h.name.toLowerCase(), [...h.values].map((v) => v.toLowerCase()).sort()] as const)
    .sort((a, b) => cmp(a[0], b[0]));
  const queries = (r.queryStrings ?? []).map((q) => `${q.key ?? ''}=${q.value}`.toLowerCase()).sort();
  const methods = [...(r.methods ?? [])].sort();
  if (headers.length === 0 && queries.length === 0 && methods.length === 0) return '';
  return ` ${encodeURIComponent(JSON.stringify({ headers, queries, methods }))}`;
}

/** Whether the group admits a namespace with these labels (undefined: not known yet, refused). Pure. */
export function admits(group: MyIngressGroup, labels: Readonly<Record<string, string>> | undefined): boolean {
  const a = group.spec.allowedNamespaces;
  if (a.from === 'All') return true;
  return labels !== undefined && a.selector !== undefined && selectorMatches(a.selector, labels);
}

/** A member as the group sees it: the shared-resource member with its MyIngress. */
export type GroupMember = SharedMember<MyIngress>;

/**
 * A MyIngress as a member of `group`: leaving when it is being deleted or names another group
 * (it still carries this group's children until they are removed). Pure.
 */
export function groupMember(m: MyIngress, group: string): GroupMember {
  return {
    key: `${m.metadata.namespace ?? ''}/${m.metadata.name}`,
    uid: m.metadata.uid ?? '',
    createdAt: m.metadata.creationTimestamp ?? '',
    leaving: m.metadata.deletionTimestamp !== undefined || m.spec.group?.name !== group,
    contribution: m,
  };
}

/** What a group's load balancer should be, and how its members stand. */
export interface GroupPlan {
  /** The merged spec: the group's load balancer fields and listeners, the granted members' rules. */
  readonly spec: MyIngressSpec;
  /** Every member that stays, with its state (rule counts of the granted ones). */
  readonly members: GroupMemberStatus[];
  /** The granted members, in rule order. */
  readonly granted: readonly MyIngress[];
  /** The member uid each merged rule (`<port>/<priority>`) and target group (`<service>:<port>`) is made for. */
  readonly attribution: ReadonlyMap<string, string>;
  /** True when any member stays (refused ones included): the load balancer must exist. */
  readonly wanted: boolean;
}

/**
 * How a front end other than MyIngress plans its members (the Gateway API's routes): which claims a
 * member makes (default claimKeys: a host and path is one member's), the order of members
 * (default memberOrder), and a rule's rank — rules go by rank (higher first) across members, then
 * by member order and the member's own priority (default: every rule ranks 0, so members' rules
 * stay together). Pure functions.
 */
export interface GroupPlanOptions {
  readonly claims?: (member: MyIngress, firstPort: number) => string[];
  readonly order?: (a: MyIngress, b: MyIngress) => number;
  readonly rank?: (member: MyIngress, rule: RuleSpec) => number;
  /**
   * Why the tenancy of a member's namespace refuses it (group/tenancy.ts), or undefined when it
   * does not (default: none refused).
   */
  readonly refusal?: (namespace: string) => string | undefined;
}

/** The order members' rules go in: spec.group.order (default 0), then namespace, then name. Pure. */
export function memberOrder(a: MyIngress, b: MyIngress): number {
  const oa = a.spec.group?.order ?? 0;
  const ob = b.spec.group?.order ?? 0;
  if (oa !== ob) return oa - ob;
  const ka = `${a.metadata.namespace ?? ''}/${a.metadata.name}`;
  const kb = `${b.metadata.namespace ?? ''}/${b.metadata.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/**
 * Plans a group's load balancer from the group and the MyIngresses filed under it (those naming
 * it now, and those that named it and may still have children on it). `namespaceLabels`: a
 * namespace's labels (undefined: unknown, which admits only under `from: All`). A member's rules
 * are checked in this order: its namespace admitted, its namespace's tenancy not refusing it
 * (`options.refusal`: Forbidden), its ports the group's listeners, its claims
 * free (the older member keeps a claim: settleClaims). The granted members' rules get priorities
 * 1, 2, … per listener in member order (memberOrder), each member's by its own priority; their
 * forwards name `groupBackendName`s. Pure and deterministic (the order of `members` does not matter).
 */
export function planGroup(
  group: MyIngressGroup,
  members: readonly MyIngress[],
  namespaceLabels: (namespace: string) => Readonly<Record<string, string>> | undefined,
  options: GroupPlanOptions = {},
): GroupPlan {
  const order = options.order ?? memberOrder;
  const claims = options.claims ?? ((mr: MyIngress, port: number) => claimKeys(mr.spec.rules ?? [], port));
  const g = group.spec;
  // A listener's Secrets become ACM ARNs in the adapter (certificates.ts), not here.
  const listeners = g.listeners.map(({ certificateRefs: _refs, ...l }) => ({
    ...l,
    defaultAction: l.defaultAction ?? { fixedResponse: { statusCode: 404 } },
  }));
  const ports = new Set(listeners.map((l) => l.port));
  const firstPort = listeners[0]?.port ?? 0;
  const all = members.map((m) => groupMember(m, group.metadata.name));
  const states = new Map<string, GroupMemberStatus>();
  const status = (m: MyIngress, state: MemberState, message?: string): GroupMemberStatus => ({
    namespace: m.metadata.namespace ?? '',
    name: m.metadata.name,
    uid: m.metadata.uid ?? '',
    ...(m.metadata.generation !== undefined ? { observedGeneration: m.metadata.generation } : {}),
    state,
    ...(message !== undefined ? { message } : {}),
    rules: 0,
  });
  const candidates: GroupMember[] = [];
  for (const m of all) {
    if (m.leaving) continue;
    const mr = m.contribution;
    const ns = mr.metadata.namespace ?? '';
    if (!admits(group, namespaceLabels(ns))) {
      states.set(m.uid, status(mr, MemberState.NotAdmitted, notAdmittedMessage(group, ns)));
      continue;
    }
    const refused = options.refusal?.(ns);
    if (refused !== undefined) {
      states.set(m.uid, status(mr, MemberState.Forbidden, refused));
      continue;
    }
    const bad = (mr.spec.rules ?? []).find((r) => !ports.has(r.listenerPort ?? firstPort));
    if (bad !== undefined) {
      states.set(
        m.uid,
        status(
          mr,
          MemberState.Invalid,
          `a rule names listener port ${bad.listenerPort ?? firstPort}, but MyIngressGroup ${group.metadata.name} listens on ${[...ports].join(', ')}: correct spec.rules[].listenerPort`,
        ),
      );
      continue;
    }
    candidates.push(m);
  }
  const settled = settleClaims(candidates, (mr) => claims(mr, firstPort));
  for (const r of settled.refused) {
    const m = candidates.find((c) => c.key === r.member);
    if (m !== undefined)
      states.set(m.uid, status(m.contribution, MemberState.Conflict, conflictMessage(group, r.claim)));
  }
  const granted = settled.granted.map((m) => m.contribution).sort(order);
  // Every granted rule, by rank (higher first), then member order, then the member's own priority.
  const rank = options.rank;
  const entries = granted.flatMap((mr, memberIndex) =>
    [...(mr.spec.rules ?? [])]
      .sort((a, b) => a.priority - b.priority)
      .map((r, own) => ({ mr, r, memberIndex, own, rank: rank?.(mr, r) ?? 0 })),
  );
  entries.sort((a, b) => b.rank - a.rank || a.memberIndex - b.memberIndex || a.own - b.own);
  const attribution = new Map<string, string>();
  const next = new Map<number, number>();
  const rules: RuleSpec[] = [];
  for (const { mr, r } of entries) {
    const ns = mr.metadata.namespace ?? '';
    const uid = mr.metadata.uid ?? '';
    const port = r.listenerPort ?? firstPort;
    const priority = (next.get(port) ?? 0) + 1;
    next.set(port, priority);
    const action = memberAction(r.action, ns, mr.metadata.name);
    for (const fwd of forwardBackends(action.forward)) attribution.set(`${fwd.name}:${fwd.port}`, uid);
    attribution.set(`${port}/${priority}`, uid);
    rules.push({
      priority,
      listenerPort: port,
      ...(r.hosts !== undefined ? { hosts: r.hosts } : {}),
      ...(r.paths !== undefined ? { paths: r.paths } : {}),
      ...(r.headers !== undefined ? { headers: r.headers } : {}),
      ...(r.queryStrings !== undefined ? { queryStrings: r.queryStrings } : {}),
      ...(r.methods !== undefined ? { methods: r.methods } : {}),
      action,
    });
  }
  for (const mr of granted)
    states.set(mr.metadata.uid ?? '', {
      ...status(mr, MemberState.Attached),
      rules: (mr.spec.rules ?? []).length,
    });
  const { allowedNamespaces: _allowed, listeners: _listeners, ...lb } = g;
  const spec: MyIngressSpec = { ...lb, listeners, ...(rules.length > 0 ? { rules } : {}) };
  const members_ = all
    .filter((m) => !m.leaving)
    .map((m) => states.get(m.uid))
    .filter((s): s is GroupMemberStatus => s !== undefined)
    .sort((a, b) => (a.namespace === b.namespace ? cmp(a.name, b.name) : cmp(a.namespace, b.namespace)));
  return { spec, members: members_, granted, attribution, wanted: all.some((m) => !m.leaving) };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A member's action with its Services named as the merged spec names them (`forward.service`, or
 * each of a weighted forward's `forward.services`, weights kept). Pure.
 */
export function memberAction(a: ActionSpec, namespace: string, member: string): ActionSpec {
  const f = a.forward;
  if (f === undefined) return a;
  const rename = <T extends { name: string }>(s: T): T => ({
    ...s,
    name: groupBackendName(namespace, member, s.name),
  });
  if (f.services !== undefined) return { forward: { services: f.services.map(rename) } };
  return f.service !== undefined ? { forward: { service: rename(f.service) } } : a;
}

/**
 * Why a namespace is refused, and who can change that: whoever may edit MyIngressGroup objects
 * (a cluster administrator). Pure.
 */
export function notAdmittedMessage(group: MyIngressGroup, namespace: string): string {
  const a = group.spec.allowedNamespaces;
  const admitted =
    a.from === 'All'
      ? 'every namespace'
      : `the namespaces whose labels match ${JSON.stringify(a.selector ?? {})}`;
  return `MyIngressGroup ${group.metadata.name} admits ${admitted}, not namespace ${namespace}; a cluster administrator (whoever may edit MyIngressGroup objects) can change its spec.allowedNamespaces, or name another group in spec.group`;
}

/**
 * Why a member is refused a claim: the claim (port, host, path) and "another member" — never its
 * name, which may be another team's. Pure.
 */
export function conflictMessage(group: MyIngressGroup, claim: string): string {
  const [port = '', host = '', path = '', more] = claim.split(' ');
  const under = more !== undefined ? ` (with the same headers, queryStrings and methods)` : '';
  return `listener port ${port}, host ${host}, path ${path}${under} is claimed by another member of MyIngressGroup ${group.metadata.name}, which claimed it first; nothing of this object is on the load balancer until it claims other hosts or paths (or the other member gives it up)`;
}
