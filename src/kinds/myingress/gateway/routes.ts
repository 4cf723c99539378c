// An HTTPRoute on one Gateway, as an ALB serves it: for each of the route's parentRefs naming the
// Gateway, whether it attaches (Accepted) and whether its backends resolve (ResolvedRefs), with the
// Gateway API's reasons; and the rules it brings to the Gateway's shared load balancer, as the
// rules of a MyIngress member of the Gateway's group (never stored: the group plan takes it as
// one). What an ALB cannot do — or Skylift does not map yet — refuses the route on that parent
// with `UnsupportedValue`, naming the field; nothing is silently dropped. Pure.
import type { KubeObject } from '../../../apis/meta.ts';
import {
  gatewayApiGroup,
  type Gateway,
  type HTTPBackendRef,
  type HTTPRoute,
  type HTTPRouteMatch,
  type ParentReference,
  type ReferenceGrant,
} from '../../../apis/gatewayApi.ts';
import type { ActionSpec, MyIngress, RuleSpec } from '../api.ts';
import { hostnameSpecificity, routeHostnamesOn } from './hostnames.ts';
import { listenerAdmits, type ListenerVerdict, type Verdict } from './listeners.ts';
import { parentGateway } from './names.ts';

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

const accepted: Verdict = { status: 'True', reason: 'Accepted', message: 'Route is accepted' };
const resolved: Verdict = { status: 'True', reason: 'ResolvedRefs', message: 'All references are resolved' };

/** A refusal of the whole route on a parent, for a value Skylift cannot serve. */
class Unsupported extends Error {}

/**
 * The route on the Gateway `w.gateway`: a verdict for each parentRef naming it (sectionName and
 * port select listeners; a listener must be usable, admit the route's namespace and kind, and
 * share a hostname with the route) and, when any attached, the member rules: one rule per match,
 * listener port and hostname, whose precedence (`ranks`) follows the Gateway API's order — the
 * more specific hostname, then an Exact path, the longer path, a method, more header and query
 * matches (the group orders equal ranks by the route's age, then namespace and name, then the
 * rule's position). Deterministic and pure.
 */
export function routeOnGateway(route: HTTPRoute, w: RouteWorld): RouteOnGateway {
  const ns = route.metadata.namespace ?? '';
  const gwKey = `${w.gateway.metadata.namespace ?? ''}/${w.gateway.metadata.name}`;
  const refs = (route.spec.parentRefs ?? []).filter((p) => parentGateway(p, ns) === gwKey);
  const backends = resolveBackends(route, w);
  const parents: ParentVerdict[] = [];
  const attached = new Map<string, ListenerVerdict>();
  for (const p of refs) {
    const found = attachTo(route, p, w);
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
    if (backends.unsupported === undefined) for (const l of found.listeners) attached.set(l.listener.name, l);
  }
  if (attached.size === 0) return { parents, member: undefined, ranks: new Map() };
  const ranks = new Map<RuleSpec, number>();
  const rules: RuleSpec[] = [];
  for (const l of [...attached.values()].sort((a, b) => a.listener.port - b.listener.port)) {
    const hosts = routeHostnamesOn(l.listener.hostname, route.spec.hostnames);
    const hostList: (string | undefined)[] = hosts.any ? [undefined] : hosts.hosts;
    for (const [ri, r] of (route.spec.rules ?? []).entries()) {
      const matches = r.matches !== undefined && r.matches.length > 0 ? r.matches : [{}];
      for (const m of matches)
        for (const host of hostList) {
          const rule: RuleSpec = {
            priority: rules.length + 1,
            listenerPort: l.listener.port,
            ...(host !== undefined ? { hosts: [host] } : {}),
            paths: albPaths(m),
            action: backends.actions[ri] ?? internalError,
          };
          rules.push(rule);
          ranks.set(rule, matchRank(host, m));
        }
    }
  }
  const member: MyIngress = {
    apiVersion: 'skylift.dev/v1alpha1',
    kind: 'MyIngress',
    metadata: {
      namespace: ns,
      name: route.metadata.name,
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
function attachTo(
  route: HTTPRoute,
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
  const usable = candidates.filter((l) => l.usable);
  const admitting = usable.filter(
    (l) =>
      listenerAdmits(l.listener, gwNs, ns, w.namespaceLabels(ns)) &&
      l.supportedKinds.some(
        (k) => k.kind === 'HTTPRoute' && (k.group ?? gatewayApiGroup) === gatewayApiGroup,
      ),
  );
  if (admitting.length === 0)
    return {
      refused: {
        status: 'False',
        reason: 'NotAllowedByListeners',
        message:
          usable.length === 0
            ? 'no listener it names is usable (see the Gateway’s listener conditions)'
            : `no listener it names admits HTTPRoutes of namespace ${ns} (the Gateway’s listeners[].allowedRoutes)`,
      },
    };
  const hostMatching = admitting.filter((l) => {
    const h = routeHostnamesOn(l.listener.hostname, route.spec.hostnames);
    return h.any || h.hosts.length > 0;
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

/** What a route's backends resolve to: one action per rule, ResolvedRefs, and a refusal if any. */
interface ResolvedBackends {
  readonly actions: ActionSpec[];
  readonly verdict: Verdict;
  readonly unsupported: Verdict | undefined;
}

/**
 * Each rule's action from its filters and backendRefs: one Service backend with weight above 0
 * forwards; none (or weight 0, or an unresolved reference) answers 500. ResolvedRefs is False with
 * the first problem (InvalidKind, RefNotPermitted, BackendNotFound). Refused (UnsupportedValue):
 * filters, several weighted backends, another namespace's Service, and matches an ALB cannot
 * express (see albPaths). Pure.
 */
function resolveBackends(route: HTTPRoute, w: RouteWorld): ResolvedBackends {
  const ns = route.metadata.namespace ?? '';
  let verdict = resolved;
  const problem = (reason: string, message: string): void => {
    if (verdict.status === 'True') verdict = { status: 'False', reason, message };
  };
  try {
    const actions = (route.spec.rules ?? []).map((r, i) => {
      const at = `spec.rules[${i}]`;
      if ((r.filters ?? []).length > 0)
        throw new Unsupported(
          `${at}.filters: ${(r.filters ?? []).map((f) => f.type).join(', ')} not served yet on an Application Load Balancer by Skylift`,
        );
      for (const [j, m] of (r.matches ?? []).entries()) checkMatch(m, `${at}.matches[${j}]`);
      const usable: { ref: HTTPBackendRef; port: number }[] = [];
      let unresolved = false;
      for (const [j, b] of (r.backendRefs ?? []).entries()) {
        const bAt = `${at}.backendRefs[${j}]`;
        if ((b.filters ?? []).length > 0) throw new Unsupported(`${bAt}.filters: not served yet by Skylift`);
        if ((b.group ?? '') !== '' || (b.kind ?? 'Service') !== 'Service') {
          problem(
            'InvalidKind',
            `${bAt} is a ${b.group ?? ''}/${b.kind ?? ''}: Skylift routes to Services only`,
          );
          unresolved = true;
          continue;
        }
        const bNs = b.namespace ?? ns;
        if (bNs !== ns) {
          if (!granted(w.grants(bNs), ns, b.name)) {
            problem(
              'RefNotPermitted',
              `${bAt} names Service ${bNs}/${b.name}, and no ReferenceGrant in ${bNs} lets HTTPRoutes of ${ns} refer to it`,
            );
            unresolved = true;
            continue;
          }
          throw new Unsupported(
            `${bAt}: a Service of another namespace (${bNs}) is not served yet by Skylift`,
          );
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
          unresolved = true;
          continue;
        }
        if ((b.weight ?? 1) > 0) usable.push({ ref: b, port });
      }
      if (unresolved || usable.length === 0) return internalError;
      if (usable.length > 1)
        throw new Unsupported(`${at}.backendRefs: several weighted backends are not served yet by Skylift`);
      const [only] = usable;
      if (only === undefined) return internalError;
      return { forward: { service: { name: only.ref.name, port: only.port } } } satisfies ActionSpec;
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

/** Throws Unsupported for a match an ALB rule cannot express (or Skylift does not map yet). */
function checkMatch(m: HTTPRouteMatch, at: string): void {
  if (m.path?.type === 'RegularExpression')
    throw new Unsupported(`${at}.path: RegularExpression is not served by Skylift (use Exact or PathPrefix)`);
  const v = m.path?.value ?? '/';
  if (/[*?]/.test(v))
    throw new Unsupported(`${at}.path: "${v}" has * or ?, which an ALB path pattern reads as wildcards`);
  if (v.length > 126) throw new Unsupported(`${at}.path: longer than an ALB path pattern (128 characters)`);
  if ((m.headers ?? []).length > 0) throw new Unsupported(`${at}.headers: not served yet by Skylift`);
  if ((m.queryParams ?? []).length > 0) throw new Unsupported(`${at}.queryParams: not served yet by Skylift`);
  if (m.method !== undefined) throw new Unsupported(`${at}.method: not served yet by Skylift`);
}

/** Whether a ReferenceGrant of the target namespace lets HTTPRoutes of `from` refer to Service `name`. */
function granted(grants: readonly ReferenceGrant[], from: string, name: string): boolean {
  return grants.some(
    (g) =>
      g.spec.from.some(
        (f) => f.group === gatewayApiGroup && f.kind === 'HTTPRoute' && f.namespace === from,
      ) &&
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
 * matches (5), more query matches (5). Pure.
 */
export function matchRank(host: string | undefined, m: HTTPRouteMatch): number {
  const exact = m.path?.type === 'Exact' ? 1 : 0;
  const len = Math.min((m.path?.value ?? '/').replace(/\/+$/, '').length, 2047);
  const method = m.method !== undefined ? 1 : 0;
  const headers = Math.min((m.headers ?? []).length, 31);
  const queries = Math.min((m.queryParams ?? []).length, 31);
  let rank = hostnameSpecificity(host);
  rank = rank * 2 + exact;
  rank = rank * 2048 + len;
  rank = rank * 2 + method;
  rank = rank * 32 + headers;
  rank = rank * 32 + queries;
  return rank;
}
