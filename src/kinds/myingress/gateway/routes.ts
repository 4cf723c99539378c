// A route (HTTPRoute or GRPCRoute) on one Gateway, as an ALB serves it: for each of the route's
// parentRefs naming the Gateway, whether it attaches (Accepted) and whether its backends resolve
// (ResolvedRefs), with the Gateway API's reasons; and the rules it brings to the Gateway's shared
// load balancer, as the rules of a MyIngress member of the Gateway's group (never stored: the group
// plan takes it as one). The two kinds share everything but their matches and filters (a
// RouteDialect each); a GRPCRoute's backends are target groups of protocol version GRPC. What an
// ALB cannot do — or Skylift does not map yet — refuses the route on that parent with
// `UnsupportedValue`, naming the field; nothing is silently dropped. Pure.
import type { KubeObject } from '../../../apis/meta.ts';
import {
  gatewayApiGroup,
  type Gateway,
  type GRPCRoute,
  type GRPCRouteMatch,
  type HTTPBackendRef,
  type HTTPRoute,
  type HTTPRouteFilter,
  type HTTPRouteMatch,
  type ParentReference,
  type ReferenceGrant,
  type RouteKind,
  type RouteParentStatus,
} from '../../../apis/gatewayApi.ts';
import {
  maxForwardWeight,
  maxTargetGroupsPerForward,
  ruleConditionLimits,
  type ActionSpec,
  type MyIngress,
  type RuleSpec,
} from '../api.ts';
import { hostnameSpecificity, intersectHostname, routeHostnamesOn } from './hostnames.ts';
import { listenerAdmits, listenerTakes, type ListenerVerdict, type Verdict } from './listeners.ts';
import { parentGateway } from './names.ts';
import { MemberState, type GroupMemberStatus } from '../group/api.ts';

/** A Service as a route's backend reads it: its ports. */
export interface RouteService extends KubeObject {
  spec?: { ports?: { port: number; name?: string }[] };
}

/** What the translation reads besides the route: the Gateway's world, from caches. */
export interface RouteWorld {
  readonly gateway: Gateway;
  /** The verdicts on the Gateway's listeners (listeners.ts). */
  readonly listeners: readonly ListenerVerdict[];
  /** The group the Gateway's load balancer is (the member's spec.group.name). */
  readonly groupName: string;
  /** A namespace's labels (undefined: unknown). */
  readonly namespaceLabels: (namespace: string) => Readonly<Record<string, string>> | undefined;
  /** A Service, or undefined when it does not exist. */
  readonly service: (namespace: string, name: string) => RouteService | undefined;
  /** The ReferenceGrants of a namespace. */
  readonly grants: (namespace: string) => readonly ReferenceGrant[];
  /**
   * The routes of both kinds naming the Gateway (for the rule between an HTTPRoute and a GRPCRoute
   * sharing a listener and a hostname: otherKindWinner); absent, none.
   */
  readonly routes?: readonly GatewayRoute[];
}

/** What Skylift says of a route on one of its parentRefs naming the Gateway. */
export interface ParentVerdict {
  readonly parentRef: ParentReference;
  readonly accepted: Verdict;
  readonly resolvedRefs: Verdict;
  /** The listeners (by name) it attached to. */
  readonly listeners: readonly string[];
}

/** A route on one Gateway. */
export interface RouteOnGateway {
  /** One verdict per parentRef naming the Gateway, in spec order. */
  readonly parents: readonly ParentVerdict[];
  /** The route as a member of the Gateway's group, when any parentRef attached; else undefined. */
  readonly member: MyIngress | undefined;
  /** Each member rule's precedence among all the Gateway's rules (higher first). */
  readonly ranks: ReadonlyMap<RuleSpec, number>;
}

/** A route as the translation reads it, whatever its kind: parents, hostnames, rules of matches `M`. */
export interface RouteOf<M> extends KubeObject {
  spec: {
    parentRefs?: ParentReference[];
    hostnames?: string[];
    rules?: {
      matches?: M[];
      filters?: HTTPRouteFilter[];
      backendRefs?: HTTPBackendRef[];
    }[];
  };
  status?: { parents?: RouteParentStatus[] };
}

/** A route of a kind Skylift serves, with its kind (list items may lack `kind`). */
export type GatewayRoute =
  | { readonly kind: 'HTTPRoute'; readonly route: HTTPRoute }
  | { readonly kind: 'GRPCRoute'; readonly route: GRPCRoute };

/** The conditions of a rule beside hosts and paths. */
type RuleMatch = Pick<RuleSpec, 'headers' | 'queryStrings' | 'methods'>;

/**
 * What differs between route kinds: how a match is checked (throwing Unsupported for what an ALB
 * cannot express) and becomes path patterns, other conditions and a rank; what a rule's filters
 * become (an action that answers the request, or undefined to forward to the backends; throwing
 * Unsupported for filters an ALB cannot apply); the backends' target group protocol version.
 */
interface RouteDialect<M> {
  readonly kind: RouteKind;
  /** The match of a rule that names none: every request. */
  readonly catchAll: M;
  check(m: M, at: string): void;
  paths(m: M): string[];
  conditions(m: M): RuleMatch;
  rank(host: string | undefined, m: M): number;
  /** The match's conditions beside host and path, in words (e.g. `the method, 2 headers and 0 queryParams`). */
  describe(m: M): string;
  filterAction(filters: readonly HTTPRouteFilter[], at: string): ActionSpec | undefined;
  readonly protocolVersion?: 'GRPC';
}

const accepted: Verdict = { status: 'True', reason: 'Accepted', message: 'Route is accepted' };
const resolved: Verdict = { status: 'True', reason: 'ResolvedRefs', message: 'All references are resolved' };

/** A refusal of the whole route on a parent, for a value Skylift cannot serve. */
class Unsupported extends Error {}

/**
 * The HTTPRoute on the Gateway `w.gateway`: a verdict for each parentRef naming it (sectionName and
 * port select listeners; a listener must be usable, admit the route's namespace and kind, and
 * share a hostname with the route) and, when any attached, the member rules: one rule per match,
 * listener port and hostname (two, one path pattern each, when a PathPrefix's two patterns would
 * take the rule over AWS's condition values per rule), with the match's header, query string and
 * method conditions (albMatch), whose precedence (`ranks`) follows the Gateway API's order — the
 * more specific hostname, then an Exact path, the longer path, a method, more header and query
 * matches (the group orders equal ranks by the route's age, then namespace and name, then the
 * rule's position). Deterministic and pure.
 */
export function routeOnGateway(route: HTTPRoute, w: RouteWorld): RouteOnGateway {
  return onGateway(route, httpDialect, w);
}

/**
 * The GRPCRoute on the Gateway `w.gateway`, as routeOnGateway an HTTPRoute, on the listeners that
 * take GRPCRoutes (HTTPS ones): each method match an ALB path pattern (grpcPaths) with its header
 * conditions, ranked by the GRPCRoute's precedence (grpcMatchRank); its backends target groups of
 * protocol version GRPC. Refused (UnsupportedValue, naming the field): a RegularExpression method
 * or header match, and any filter (none of GRPCRoute's is one an ALB applies). The member is named
 * `GRPCRoute:<name>` (no Kubernetes name holds a `:`), so an HTTPRoute of the same name is another
 * member with target groups of its own. Deterministic and pure.
 */
export function grpcRouteOnGateway(route: GRPCRoute, w: RouteWorld): RouteOnGateway {
  return onGateway(route, grpcDialect, w);
}

/** A route of either kind on the Gateway `w.gateway` (routeOnGateway, grpcRouteOnGateway). Pure. */
export function anyRouteOnGateway(r: GatewayRoute, w: RouteWorld): RouteOnGateway {
  return r.kind === 'GRPCRoute' ? grpcRouteOnGateway(r.route, w) : routeOnGateway(r.route, w);
}

/** The name of a route's member in its Gateway's group: its own, kind-prefixed for a GRPCRoute. Pure. */
export function memberName(kind: RouteKind, name: string): string {
  return kind === 'HTTPRoute' ? name : `${kind}:${name}`;
}

/** The translation of a route of any kind (see routeOnGateway), its kind's parts from `d`. Pure. */
function onGateway<M>(route: RouteOf<M>, d: RouteDialect<M>, w: RouteWorld): RouteOnGateway {
  const ns = route.metadata.namespace ?? '';
  const gwKey = `${w.gateway.metadata.namespace ?? ''}/${w.gateway.metadata.name}`;
  const refs = (route.spec.parentRefs ?? []).filter((p) => parentGateway(p, ns) === gwKey);
  const backends = resolveBackends(route, d, w);
  const parents: ParentVerdict[] = [];
  const attached = new Map<string, ListenerVerdict>();
  for (const p of refs) {
    const found = withoutOtherKindConflicts(route, d.kind, attachTo(route, d.kind, p, w), w);
    if ('refused' in found) {
      parents.push({ parentRef: p, accepted: found.refused, resolvedRefs: backends.verdict, listeners: [] });
      continue;
    }
    parents.push({
      parentRef: p,
      accepted: backends.unsupported ?? accepted,
      resolvedRefs: backends.verdict,
      listeners: backends.unsupported === undefined ? found.listeners.map((l) => l.listener.name) : [],
    });
    // Rules go only to listeners on the load balancer (attached ones whose certificates resolve).
    if (backends.unsupported === undefined)
      for (const l of found.listeners) if (l.usable) attached.set(l.listener.name, l);
  }
  if (attached.size === 0) return { parents, member: undefined, ranks: new Map() };
  const ranks = new Map<RuleSpec, number>();
  const rules: RuleSpec[] = [];
  for (const l of [...attached.values()].sort((a, b) => a.listener.port - b.listener.port)) {
    const hosts = routeHostnamesOn(l.listener.hostname, route.spec.hostnames);
    const hostList: (string | undefined)[] = hosts.anyHost ? [undefined] : hosts.hosts;
    for (const [ri, r] of (route.spec.rules ?? []).entries()) {
      const matches = r.matches !== undefined && r.matches.length > 0 ? r.matches : [d.catchAll];
      for (const m of matches)
        for (const host of hostList) {
          const more = d.conditions(m);
          const paths = d.paths(m);
          // Over AWS's values per rule, a PathPrefix's two patterns go to two rules (they are ORed);
          // resolveBackends refused a match that does not fit even so.
          const split =
            conditionValues(host !== undefined ? 1 : 0, paths.length, more) >
            ruleConditionLimits.valuesPerRule;
          for (const p of split ? paths.map((x) => [x]) : [paths]) {
            const rule: RuleSpec = {
              priority: rules.length + 1,
              listenerPort: l.listener.port,
              ...(host !== undefined ? { hosts: [host] } : {}),
              paths: p,
              ...more,
              action: backends.actions[ri] ?? internalError,
            };
            rules.push(rule);
            ranks.set(rule, d.rank(host, m));
          }
        }
    }
  }
  const member: MyIngress = {
    apiVersion: 'skylift.dev/v1alpha1',
    kind: 'MyIngress',
    metadata: {
      namespace: ns,
      name: memberName(d.kind, route.metadata.name),
      ...(route.metadata.uid !== undefined ? { uid: route.metadata.uid } : {}),
      ...(route.metadata.generation !== undefined ? { generation: route.metadata.generation } : {}),
      ...(route.metadata.creationTimestamp !== undefined
        ? { creationTimestamp: route.metadata.creationTimestamp }
        : {}),
    },
    spec: { group: { name: w.groupName }, rules },
  };
  return { parents, member, ranks };
}

/** A fixed 500: what a rule without a usable backend answers (the Gateway API requires it). */
const internalError: ActionSpec = { fixedResponse: { statusCode: 500 } };

/** The listeners a parentRef attaches the route to, or why none. */
function attachTo<M>(
  route: RouteOf<M>,
  kind: RouteKind,
  p: ParentReference,
  w: RouteWorld,
): { listeners: ListenerVerdict[] } | { refused: Verdict } {
  const ns = route.metadata.namespace ?? '';
  const gwNs = w.gateway.metadata.namespace ?? '';
  let candidates = [...w.listeners];
  if (p.sectionName !== undefined) candidates = candidates.filter((l) => l.listener.name === p.sectionName);
  if (p.port !== undefined) candidates = candidates.filter((l) => l.listener.port === p.port);
  if (candidates.length === 0)
    return {
      refused: {
        status: 'False',
        reason: 'NoMatchingParent',
        message: `Gateway ${gwNs}/${w.gateway.metadata.name} has no listener${p.sectionName !== undefined ? ` named ${p.sectionName}` : ''}${p.port !== undefined ? ` on port ${p.port}` : ''}`,
      },
    };
  const usable = candidates.filter((l) => l.attachable);
  const admitting = usable.filter(
    (l) => listenerAdmits(l.listener, gwNs, ns, w.namespaceLabels(ns)) && listenerTakes(l, kind),
  );
  if (admitting.length === 0)
    return {
      refused: {
        status: 'False',
        reason: 'NotAllowedByListeners',
        message:
          usable.length === 0
            ? 'no listener it names is usable (see the Gateway’s listener conditions)'
            : `no listener it names admits ${kind}s of namespace ${ns} (the Gateway’s listeners[].allowedRoutes${kind === 'GRPCRoute' ? '; an ALB serves gRPC on HTTPS listeners only' : ''})`,
      },
    };
  const hostMatching = admitting.filter((l) => {
    const h = routeHostnamesOn(l.listener.hostname, route.spec.hostnames);
    return h.anyHost || h.hosts.length > 0;
  });
  if (hostMatching.length === 0)
    return {
      refused: {
        status: 'False',
        reason: 'NoMatchingListenerHostname',
        message: `none of spec.hostnames (${(route.spec.hostnames ?? []).join(', ')}) matches a listener hostname`,
      },
    };
  return { listeners: hostMatching };
}

/**
 * `found` without the listeners on which a route of the other kind (an HTTPRoute for a GRPCRoute,
 * and the reverse) attached there too shares a hostname with the route and wins: the Gateway API
 * accepts exactly one of the two, the older (by creationTimestamp, then `namespace/name`). The
 * other route counts as attached where its parentRefs, the listener's allowedRoutes and hostnames
 * let it (attachTo), whatever else is said of it. No listener left: refused, NotAllowedByListeners
 * (the specification names no reason for it), without naming the other route (it may be another
 * team's). Pure.
 */
function withoutOtherKindConflicts<M>(
  route: RouteOf<M>,
  kind: RouteKind,
  found: { listeners: ListenerVerdict[] } | { refused: Verdict },
  w: RouteWorld,
): { listeners: ListenerVerdict[] } | { refused: Verdict } {
  if ('refused' in found) return found;
  const others = (w.routes ?? []).filter(
    (o) => o.kind !== kind && o.route.metadata.deletionTimestamp === undefined && olderRoute(o.route, route),
  );
  if (others.length === 0) return found;
  const gwKey = `${w.gateway.metadata.namespace ?? ''}/${w.gateway.metadata.name}`;
  const lost = new Set<string>();
  for (const o of others) {
    const ns = o.route.metadata.namespace ?? '';
    for (const p of o.route.spec.parentRefs ?? []) {
      if (parentGateway(p, ns) !== gwKey) continue;
      const theirs = attachTo<unknown>(o.route, o.kind, p, w);
      if ('refused' in theirs) continue;
      for (const l of theirs.listeners)
        if (sharesHostname(l.listener.hostname, route.spec.hostnames, o.route.spec.hostnames))
          lost.add(l.listener.name);
    }
  }
  const listeners = found.listeners.filter((l) => !lost.has(l.listener.name));
  if (listeners.length > 0) return { listeners };
  const other = kind === 'HTTPRoute' ? 'GRPCRoute' : 'HTTPRoute';
  return {
    refused: {
      status: 'False',
      reason: 'NotAllowedByListeners',
      message: `an older ${other} on the same listener shares a hostname with this ${kind}; the Gateway API accepts only one of the two (the older, then the first by namespace/name)`,
    },
  };
}

/** Whether route `a` goes before route `b` (the older, then the first by `namespace/name`). Pure. */
function olderRoute(a: KubeObject, b: KubeObject): boolean {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb;
  const ka = `${a.metadata.namespace ?? ''}/${a.metadata.name}`;
  const kb = `${b.metadata.namespace ?? ''}/${b.metadata.name}`;
  return ka < kb;
}

/** Whether two routes' hostnames on a listener of hostname `listener` intersect (any host meets all). Pure. */
function sharesHostname(
  listener: string | undefined,
  a: readonly string[] | undefined,
  b: readonly string[] | undefined,
): boolean {
  const ha = routeHostnamesOn(listener, a);
  const hb = routeHostnamesOn(listener, b);
  if (ha.anyHost || hb.anyHost) return true;
  return ha.hosts.some((x) => hb.hosts.some((y) => intersectHostname(x, y) !== undefined));
}

/** What a route's backends resolve to: one action per rule, ResolvedRefs, and a refusal if any. */
interface ResolvedBackends {
  readonly actions: ActionSpec[];
  readonly verdict: Verdict;
  readonly unsupported: Verdict | undefined;
}

/**
 * Each rule's action from its filters and backendRefs: the resolved Service backends with weight
 * above 0 (default 1) forward — one to `forward.service`, several to `forward.services` with their
 * weights (scaled to AWS's 0-999 when larger; two refs to one Service port add up); none answers
 * 500. An unresolved backend among resolved ones is left out and its share goes to the others:
 * the Gateway API wants its share answered 500, but an ALB forward cannot mix a fixed response with
 * target groups, and a 500 for every request would punish the resolved ones. ResolvedRefs is False
 * with the first problem (InvalidKind, RefNotPermitted — another namespace's Service without a
 * ReferenceGrant from the route's kind —, BackendNotFound). A filter the dialect maps (an HTTPRoute's
 * RequestRedirect) answers instead of the backends. The backends' target groups are of the
 * dialect's protocol version. Refused (UnsupportedValue): filters the dialect refuses, backend
 * filters, more than 5 backends (an ALB forward's limit), and matches an ALB cannot express (the
 * dialect's check, or more condition values than an ALB rule takes). Pure.
 */
function resolveBackends<M>(route: RouteOf<M>, d: RouteDialect<M>, w: RouteWorld): ResolvedBackends {
  const ns = route.metadata.namespace ?? '';
  let verdict = resolved;
  const problem = (reason: string, message: string): void => {
    if (verdict.status === 'True') verdict = { status: 'False', reason, message };
  };
  try {
    const actions = (route.spec.rules ?? []).map((r, i) => {
      const at = `spec.rules[${i}]`;
      for (const [j, m] of (r.matches ?? []).entries()) {
        const mAt = `${at}.matches[${j}]`;
        d.check(m, mAt);
        // With a host and one path pattern (a PathPrefix's two go to two rules when needed).
        const values = conditionValues(1, 1, d.conditions(m));
        if (values > ruleConditionLimits.valuesPerRule)
          throw new Unsupported(
            `${mAt}: a hostname, a path, ${d.describe(m)} make ${values} condition values, more than the ${ruleConditionLimits.valuesPerRule} an ALB rule takes`,
          );
      }
      // A filter answering the request (a redirect): the rule's backends are not used (nor resolved).
      const answered = d.filterAction(r.filters ?? [], at);
      if (answered !== undefined) return answered;
      const usable: { ref: HTTPBackendRef; port: number }[] = [];
      for (const [j, b] of (r.backendRefs ?? []).entries()) {
        const bAt = `${at}.backendRefs[${j}]`;
        if ((b.filters ?? []).length > 0) throw new Unsupported(`${bAt}.filters: not served yet by Skylift`);
        if ((b.group ?? '') !== '' || (b.kind ?? 'Service') !== 'Service') {
          problem(
            'InvalidKind',
            `${bAt} is a ${b.group ?? ''}/${b.kind ?? ''}: Skylift routes to Services only`,
          );
          continue;
        }
        const bNs = b.namespace ?? ns;
        if (bNs !== ns) {
          if (!granted(w.grants(bNs), d.kind, ns, b.name)) {
            problem(
              'RefNotPermitted',
              `${bAt} names Service ${bNs}/${b.name}, and no ReferenceGrant in ${bNs} lets ${d.kind}s of ${ns} refer to it`,
            );
            continue;
          }
        }
        const svc = w.service(bNs, b.name);
        const port = b.port;
        if (
          svc === undefined ||
          port === undefined ||
          !(svc.spec?.ports ?? []).some((p) => p.port === port)
        ) {
          problem(
            'BackendNotFound',
            svc === undefined
              ? `${bAt}: Service ${bNs}/${b.name} does not exist`
              : `${bAt}: Service ${bNs}/${b.name} has no port ${port ?? '(none given)'}`,
          );
          continue;
        }
        // Another namespace's Service (a ReferenceGrant allows it) goes by `namespace/name`.
        usable.push({ ref: { ...b, name: bNs === ns ? b.name : `${bNs}/${b.name}` }, port });
      }
      return forwardAction(usable, at, d.protocolVersion);
    });
    return { actions, verdict, unsupported: undefined };
  } catch (err) {
    if (!(err instanceof Unsupported)) throw err;
    return {
      actions: [],
      verdict,
      unsupported: { status: 'False', reason: 'UnsupportedValue', message: err.message },
    };
  }
}

/**
 * A rule's action from its resolved backends (weight default 1): none with weight above 0 (or an
 * unresolved one alone) answers 500; one forwards to `forward.service`; several to
 * `forward.services`, two refs to one Service port adding up, weights above AWS's 999 scaled
 * down (a positive weight stays at least 1). Throws Unsupported for more than 5 Service ports. Pure.
 */
function forwardAction(
  usable: readonly { ref: HTTPBackendRef; port: number }[],
  at: string,
  protocolVersion: 'GRPC' | undefined,
): ActionSpec {
  const pv = protocolVersion !== undefined ? { protocolVersion } : {};
  const byPort = new Map<string, { name: string; port: number; weight: number }>();
  for (const { ref, port } of usable) {
    const key = `${ref.name}:${port}`;
    const w = ref.weight ?? 1;
    const before = byPort.get(key);
    byPort.set(key, { name: ref.name, port, weight: (before?.weight ?? 0) + w });
  }
  const backends = [...byPort.values()].filter((b) => b.weight > 0);
  if (backends.length === 0) return internalError;
  if (backends.length > maxTargetGroupsPerForward)
    throw new Unsupported(
      `${at}.backendRefs: ${backends.length} Service ports with weight above 0, more than the ${maxTargetGroupsPerForward} target groups an ALB forward action takes`,
    );
  if (backends.length === 1) {
    const [only] = backends;
    if (only !== undefined) return { forward: { service: { name: only.name, port: only.port, ...pv } } };
  }
  const max = Math.max(...backends.map((b) => b.weight));
  const scale = (w: number): number =>
    max <= maxForwardWeight ? w : Math.max(1, Math.round((w * maxForwardWeight) / max));
  return {
    forward: {
      services: backends.map((b) => ({ name: b.name, port: b.port, weight: scale(b.weight), ...pv })),
    },
  };
}

/** The headers of a match that count: the first of each name (case-insensitive), as the Gateway API says. Pure. */
function uniqueHeaders(m: HTTPRouteMatch): NonNullable<HTTPRouteMatch['headers']> {
  return firstOfEach(m.headers ?? [], (h) => h.name.toLowerCase());
}

/** The query params of a match that count: the first of each name (exact), as the Gateway API says. Pure. */
function uniqueQueryParams(m: HTTPRouteMatch): NonNullable<HTTPRouteMatch['queryParams']> {
  return firstOfEach(m.queryParams ?? [], (q) => q.name);
}

function firstOfEach<T>(items: readonly T[], key: (t: T) => string): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  for (const t of items) {
    if (seen.has(key(t))) continue;
    seen.add(key(t));
    out.push(t);
  }
  return out;
}

/** A query string key or value for an ALB: its `*` and `?` escaped with `\` (matched literally). Pure. */
export function albQueryLiteral(v: string): string {
  return v.replace(/[*?]/g, (c) => `\\${c}`);
}

/**
 * The header, query string and method conditions of a match (Exact, checked by checkMatch): one
 * header condition per header name with its value, one query pair per param (escaped: ALB reads
 * `*` and `?` as wildcards there), the method. ALB compares header and query values (and query
 * keys) case-insensitively where the Gateway API's Exact is case-sensitive: a value differing only
 * in case matches on an ALB too. Pure.
 */
export function albMatch(m: HTTPRouteMatch): Pick<RuleSpec, 'headers' | 'queryStrings' | 'methods'> {
  const headers = uniqueHeaders(m).map((h) => ({ name: h.name, values: [h.value] }));
  const queries = uniqueQueryParams(m).map((q) => ({
    key: albQueryLiteral(q.name),
    value: albQueryLiteral(q.value),
  }));
  return {
    ...(headers.length > 0 ? { headers } : {}),
    ...(queries.length > 0 ? { queryStrings: queries } : {}),
    ...(m.method !== undefined ? { methods: [m.method] } : {}),
  };
}

/** The condition values of a rule with `hosts` hosts, `paths` paths and the conditions `more`. Pure. */
function conditionValues(
  hosts: number,
  paths: number,
  more: Pick<RuleSpec, 'headers' | 'queryStrings' | 'methods'>,
): number {
  return (
    hosts +
    paths +
    (more.headers ?? []).reduce((n, h) => n + h.values.length, 0) +
    (more.queryStrings ?? []).length +
    (more.methods ?? []).length
  );
}

/**
 * The ALB redirect a RequestRedirect filter asks for: scheme → protocol, hostname → host, port
 * (absent: the scheme's well-known port when the scheme changes, else the request's), a full path
 * (ReplaceFullPath), the query kept, 301 or 302. Throws Unsupported for what an ALB redirect cannot
 * do (ReplacePrefixMatch, other status codes). Pure.
 */
export function redirectAction(f: HTTPRouteFilter, at: string): ActionSpec {
  const r = f.requestRedirect ?? {};
  const status = r.statusCode ?? 302;
  if (status !== 301 && status !== 302)
    throw new Unsupported(`${at}.requestRedirect.statusCode: ${status}; an ALB redirects with 301 or 302`);
  const scheme = r.scheme?.toLowerCase();
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https')
    throw new Unsupported(`${at}.requestRedirect.scheme: ${r.scheme ?? ''} (http or https)`);
  if (r.path !== undefined && r.path.type !== 'ReplaceFullPath')
    throw new Unsupported(
      `${at}.requestRedirect.path: ${r.path.type} is not served by an ALB redirect (ReplaceFullPath is)`,
    );
  const port =
    r.port !== undefined ? String(r.port) : scheme === 'https' ? '443' : scheme === 'http' ? '80' : '#{port}';
  return {
    redirect: {
      protocol: scheme !== undefined ? scheme.toUpperCase() : '#{protocol}',
      host: r.hostname ?? '#{host}',
      port,
      path: r.path?.replaceFullPath ?? '/#{path}',
      query: '#{query}',
      statusCode: status === 301 ? 'HTTP_301' : 'HTTP_302',
    },
  };
}

/** Throws Unsupported for a match an ALB rule cannot express (or Skylift does not map yet). */
function checkMatch(m: HTTPRouteMatch, at: string): void {
  if (m.path?.type === 'RegularExpression')
    throw new Unsupported(`${at}.path: RegularExpression is not served by Skylift (use Exact or PathPrefix)`);
  const v = m.path?.value ?? '/';
  if (/[*?]/.test(v))
    throw new Unsupported(`${at}.path: "${v}" has * or ?, which an ALB path pattern reads as wildcards`);
  if (v.length > 126) throw new Unsupported(`${at}.path: longer than an ALB path pattern (128 characters)`);
  checkHeaders(m.headers ?? [], at);
  const limit = ruleConditionLimits;
  for (const [k, q] of (m.queryParams ?? []).entries()) {
    const qAt = `${at}.queryParams[${k}]`;
    if ((q.type ?? 'Exact') !== 'Exact')
      throw new Unsupported(`${qAt}: ${q.type ?? ''} is not served by an ALB (use Exact)`);
    // ALB escapes * and ? with a backslash; what it makes of a backslash itself AWS does not say.
    if (q.name.includes('\\') || q.value.includes('\\'))
      throw new Unsupported(`${qAt}: a backslash, which an ALB query string condition reads as an escape`);
    if (
      albQueryLiteral(q.name).length > limit.valueLength ||
      albQueryLiteral(q.value).length > limit.valueLength
    )
      throw new Unsupported(
        `${qAt}: name or value longer than an ALB query string key or value (${limit.valueLength} characters, * and ? escaped)`,
      );
  }
}

/** Throws Unsupported for a header match an ALB http-header condition cannot express. */
function checkHeaders(headers: NonNullable<HTTPRouteMatch['headers']>, at: string): void {
  const limit = ruleConditionLimits;
  for (const [k, h] of headers.entries()) {
    const hAt = `${at}.headers[${k}]`;
    if ((h.type ?? 'Exact') !== 'Exact')
      throw new Unsupported(`${hAt}: ${h.type ?? ''} is not served by an ALB (use Exact)`);
    if (/[*?]/.test(h.value))
      throw new Unsupported(
        `${hAt}.value: "${h.value}" has * or ?, which an ALB header condition reads as wildcards (and cannot escape)`,
      );
    if (h.name.length > limit.headerNameLength)
      throw new Unsupported(
        `${hAt}.name: longer than an ALB header name (${limit.headerNameLength} characters)`,
      );
    if (h.value.length > limit.valueLength)
      throw new Unsupported(
        `${hAt}.value: longer than an ALB header value (${limit.valueLength} characters)`,
      );
  }
}

/** Whether a ReferenceGrant of the target namespace lets routes of `kind` in `from` refer to Service `name`. */
function granted(grants: readonly ReferenceGrant[], kind: RouteKind, from: string, name: string): boolean {
  return grants.some(
    (g) =>
      g.spec.from.some((f) => f.group === gatewayApiGroup && f.kind === kind && f.namespace === from) &&
      g.spec.to.some(
        (t) => t.group === '' && t.kind === 'Service' && (t.name === undefined || t.name === name),
      ),
  );
}

/**
 * The ALB path patterns of a match: Exact `/a` → `/a`; PathPrefix `/a` (or `/a/`) → `/a` and
 * `/a/*` (a prefix matches whole segments: not `/ab`); PathPrefix `/` (the default) → `/*`. Pure.
 */
export function albPaths(m: HTTPRouteMatch): string[] {
  const v = m.path?.value ?? '/';
  if (m.path?.type === 'Exact') return [v];
  const trimmed = v.replace(/\/+$/, '');
  return trimmed === '' ? ['/*'] : [trimmed, `${trimmed}/*`];
}

/**
 * A match's precedence on a hostname, higher first, as the Gateway API orders rules: the more
 * specific hostname (10 bits), an Exact path (1), the longer path (11), a method (1), more header
 * matches (5), more query matches (5); headers and query params counted as they are served (the
 * first of each name). Pure.
 */
export function matchRank(host: string | undefined, m: HTTPRouteMatch): number {
  const exact = m.path?.type === 'Exact' ? 1 : 0;
  const len = Math.min((m.path?.value ?? '/').replace(/\/+$/, '').length, 2047);
  const method = m.method !== undefined ? 1 : 0;
  const headers = Math.min(uniqueHeaders(m).length, 31);
  const queries = Math.min(uniqueQueryParams(m).length, 31);
  let rank = hostnameSpecificity(host);
  rank = rank * 2 + exact;
  rank = rank * 2048 + len;
  rank = rank * 2 + method;
  rank = rank * 32 + headers;
  rank = rank * 32 + queries;
  return rank;
}

/**
 * The Accepted reason of a route its namespace's TeamPolicy refuses (an implementation-specific
 * reason, which the Gateway API allows: none of its own says this; NotAllowedByListeners is the
 * Gateway's allowedRoutes).
 */
export const notAllowedByTeamPolicy = 'NotAllowedByTeamPolicy';

/**
 * A route's Accepted verdict when the Gateway's group lists it Forbidden (its namespace's tenancy
 * refuses it: group/tenancy.ts), with the group's message; undefined otherwise. Pure.
 */
export function tenancyVerdict(entry: GroupMemberStatus | undefined): Verdict | undefined {
  if (entry?.state !== MemberState.Forbidden) return undefined;
  return { status: 'False', reason: notAllowedByTeamPolicy, message: entry.message ?? '' };
}

/**
 * The ALB path pattern of a gRPC method match (a request's path is `/<service>/<method>`):
 * service and method → `/<service>/<method>`; a service alone → `/<service>/` then `*`; a method
 * alone → `/`, `*`, `/<method>` (any service); neither → every path. Exact only (checkGrpcMatch
 * refuses RegularExpression). Pure.
 */
export function grpcPaths(m: GRPCRouteMatch): string[] {
  const service = m.method?.service;
  const method = m.method?.method;
  if (service === undefined && method === undefined) return ['/*'];
  return [`/${service ?? '*'}/${method ?? '*'}`];
}

/**
 * A gRPC match's precedence, on the scale of matchRank so HTTPRoutes and GRPCRoutes on one listener
 * order together: the more specific hostname, then a service and method (an exact path), the
 * longer service (then method) — the GRPCRoute's order — and more header matches. Two matches whose
 * order the GRPCRoute specification fixes can both match one request only when they name the same
 * service or none, so the path's length orders them as it says. Pure.
 */
export function grpcMatchRank(host: string | undefined, m: GRPCRouteMatch): number {
  const service = m.method?.service;
  const method = m.method?.method;
  const prefix = service !== undefined ? `/${service}${method !== undefined ? `/${method}` : ''}` : '/';
  return matchRank(host, {
    path: { type: service !== undefined && method !== undefined ? 'Exact' : 'PathPrefix', value: prefix },
    ...(m.headers !== undefined ? { headers: m.headers } : {}),
  });
}

/** Throws Unsupported for a gRPC match an ALB rule cannot express. */
function checkGrpcMatch(m: GRPCRouteMatch, at: string): void {
  const mm = m.method;
  if (mm !== undefined) {
    if ((mm.type ?? 'Exact') !== 'Exact')
      throw new Unsupported(
        `${at}.method.type: ${mm.type ?? ''} is not served by an ALB (use Exact: the ALB matches the path /service/method)`,
      );
    for (const [f, v] of [
      ['service', mm.service],
      ['method', mm.method],
    ] as const)
      if (v !== undefined && /[*?/]/.test(v))
        throw new Unsupported(
          `${at}.method.${f}: "${v}" has *, ? or /, which an ALB path pattern cannot match literally`,
        );
    const path = grpcPaths(m)[0] ?? '';
    if (path.length > 128)
      throw new Unsupported(`${at}.method: /service/method longer than an ALB path pattern (128 characters)`);
  }
  checkHeaders(m.headers ?? [], at);
}

/** The header conditions of a gRPC match: one per header name (the first of each). Pure. */
function grpcConditions(m: GRPCRouteMatch): RuleMatch {
  const headers = firstOfEach(m.headers ?? [], (h) => h.name.toLowerCase()).map((h) => ({
    name: h.name,
    values: [h.value],
  }));
  return headers.length > 0 ? { headers } : {};
}

/** HTTPRoute: path, header, query param and method matches; RequestRedirect filters. */
const httpDialect: RouteDialect<HTTPRouteMatch> = {
  kind: 'HTTPRoute',
  catchAll: {},
  check: checkMatch,
  paths: albPaths,
  conditions: albMatch,
  rank: matchRank,
  describe: (m) =>
    `the method, ${uniqueHeaders(m).length} headers and ${uniqueQueryParams(m).length} queryParams`,
  filterAction: (filters, at) => {
    const redirect = filters.find((f) => f.type === 'RequestRedirect');
    const others = filters.filter((f) => f.type !== 'RequestRedirect');
    if (others.length > 0)
      throw new Unsupported(
        `${at}.filters: ${others.map((f) => f.type).join(', ')} ${others.length === 1 ? 'is' : 'are'} not served on an Application Load Balancer by Skylift (RequestRedirect is)`,
      );
    return redirect !== undefined
      ? redirectAction(redirect, `${at}.filters[${filters.indexOf(redirect)}]`)
      : undefined;
  },
};

/** GRPCRoute: method and header matches; no filter (none of its is one an ALB applies); GRPC target groups. */
const grpcDialect: RouteDialect<GRPCRouteMatch> = {
  kind: 'GRPCRoute',
  catchAll: {},
  check: checkGrpcMatch,
  paths: grpcPaths,
  conditions: grpcConditions,
  rank: grpcMatchRank,
  describe: (m) => `${grpcConditions(m).headers?.length ?? 0} headers`,
  filterAction: (filters, at) => {
    if (filters.length > 0)
      throw new Unsupported(
        `${at}.filters: ${filters.map((f) => f.type).join(', ')} ${filters.length === 1 ? 'is' : 'are'} not served on an Application Load Balancer (an ALB cannot modify gRPC requests or mirror them)`,
      );
    return undefined;
  },
  protocolVersion: 'GRPC',
};
