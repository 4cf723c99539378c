// What Skylift writes on a Gateway and its routes, from the verdicts (listeners.ts, routes.ts) and
// the Gateway's load balancer (its MyIngressGroup's status), as the Gateway API specifies them:
// the Gateway's Accepted, Programmed, addresses and per-listener status; each route's parents
// entries for Skylift's Gateways (other controllers' entries kept). And the MyIngressGroup a
// Gateway's listeners make. Pure.
import type { Condition } from '../../../apis/managed.ts';
import {
  skyliftGatewayControllerName,
  type Gateway,
  type GRPCRoute,
  type HTTPRoute,
  type ListenerStatus,
  type ParentReference,
  type RouteParentStatus,
} from '../../../apis/gatewayApi.ts';
import { ConditionType, getCondition } from '../../../runtime/conditions.ts';
import { deepEqual } from '../../../runtime/mergePatch.ts';
import {
  MemberState,
  myIngressGroupType,
  type CertificateSecretRef,
  type MyIngressGroup,
  type MyIngressGroupSpec,
} from '../group/api.ts';
import type { ListenerVerdict, Verdict } from './listeners.ts';
import { gatewayAnnotation, gatewayGroupName, gatewayUidLabel } from './names.ts';
import { notAllowedByTeamPolicy } from './routes.ts';

/** metav1.Time of `now`: seconds, UTC. Pure. */
function timeOf(now: Date): string {
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * A condition of `type` saying `v` at `generation`: its lastTransitionTime kept from `previous`
 * (the same type in the current status) while the status stays, else `now`. Pure.
 */
export function conditionOf(
  type: string,
  v: Verdict,
  previous: readonly Condition[] | undefined,
  generation: number | undefined,
  now: Date,
): Condition {
  const before = previous?.find((c) => c.type === type);
  return {
    type,
    status: v.status,
    reason: v.reason,
    message: v.message,
    lastTransitionTime:
      before !== undefined && before.status === v.status ? before.lastTransitionTime : timeOf(now),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
}

/** How the load balancer of a Gateway stands, from its group. */
export interface LoadBalancerState {
  /** True when the group is Ready (the ALB matches the listeners and rules). */
  readonly programmed: boolean;
  readonly message: string;
  /** The ALB's DNS name, once known. */
  readonly dnsName: string | undefined;
  /**
   * Why the Gateway's own namespace's TeamPolicy refuses its load balancer (gatewayRefused): its
   * group is neither made nor changed, and the Gateway is neither Accepted nor Programmed.
   */
  readonly refused?: string;
}

/**
 * `lb` (the state of the group already there, if any) of a Gateway whose namespace's TeamPolicy
 * refuses its load balancer (`message`: the tenancy's): not programmed, saying why and what is
 * left as it was; the existing load balancer's DNS name kept (it still answers). Pure.
 */
export function gatewayRefused(
  lb: LoadBalancerState,
  group: string | undefined,
  message: string,
): LoadBalancerState {
  const kept =
    group !== undefined
      ? `; its load balancer (MyIngressGroup ${group}) is kept as it is and not changed until the policy allows it`
      : '; no load balancer is made for it';
  return {
    programmed: false,
    message: `${message}${kept}`,
    dnsName: lb.dnsName,
    refused: `${message}${kept}`,
  };
}

/** The load balancer state of a Gateway's group (undefined: no group yet). Pure. */
export function loadBalancerState(group: MyIngressGroup | undefined): LoadBalancerState {
  if (group === undefined)
    return { programmed: false, message: 'the load balancer is being made', dnsName: undefined };
  const ready = getCondition(group.status?.conditions, ConditionType.Ready);
  const dns = group.status?.dnsName;
  return {
    programmed: ready?.status === 'True' && ready.observedGeneration === group.metadata.generation,
    message:
      ready === undefined
        ? `the load balancer is being made (MyIngressGroup ${group.metadata.name})`
        : `${ready.reason}: ${ready.message} (MyIngressGroup ${group.metadata.name})`,
    dnsName: typeof dns === 'string' && dns !== '' ? dns : undefined,
  };
}

/** The status Skylift writes on a Gateway (every field it owns; server-side applied whole). */
export interface GatewayStatusApply {
  addresses: { type: string; value: string }[];
  conditions: Condition[];
  listeners: ListenerStatus[];
}

/**
 * A Gateway's status: Accepted (True unless no listener is usable: ListenersNotValid, True or
 * False), Programmed (the load balancer Ready), addresses (its DNS name, type Hostname) and each
 * listener's supportedKinds, attachedRoutes (`attached`, by name) and conditions; with `dns`
 * (a Gateway publishing its routes' hostnames, dns.ts) also the `skylift.dev/DNSRecordsReady`
 * condition, which is otherwise left out (so applying the status removes it). A load balancer its
 * namespace's TeamPolicy refuses (`lb.refused`) makes Accepted and Programmed (the Gateway's and
 * its listeners') False, reason NotAllowedByTeamPolicy, with the refusal. Pure.
 */
export function gatewayStatus(
  gw: Gateway,
  listeners: readonly ListenerVerdict[],
  lb: LoadBalancerState,
  attached: ReadonlyMap<string, number>,
  now: Date,
  dns?: { readonly type: string; readonly verdict: Verdict },
): GatewayStatusApply {
  const gen = gw.metadata.generation;
  const prev = gw.status?.conditions;
  const usable = listeners.filter((l) => l.usable).length;
  // Invalid: not attachable (a listener whose certificates do not resolve yet is valid, not programmed).
  const invalid = listeners.filter((l) => !l.attachable).length;
  const refused: Verdict | undefined =
    lb.refused !== undefined
      ? { status: 'False', reason: notAllowedByTeamPolicy, message: lb.refused }
      : undefined;
  const accepted: Verdict =
    refused !== undefined
      ? refused
      : invalid === 0
        ? { status: 'True', reason: 'Accepted', message: 'Gateway is accepted by Skylift' }
        : {
            status: invalid < listeners.length ? 'True' : 'False',
            reason: 'ListenersNotValid',
            message: `${invalid} of ${listeners.length} listeners cannot be served (see status.listeners)`,
          };
  const programmed: Verdict =
    refused !== undefined
      ? refused
      : usable === 0
        ? {
            status: 'False',
            reason: 'Invalid',
            message: 'no listener can be served, so there is no load balancer',
          }
        : lb.programmed
          ? { status: 'True', reason: 'Programmed', message: `Application Load Balancer ${lb.dnsName ?? ''}` }
          : { status: 'False', reason: 'Pending', message: lb.message };
  return {
    addresses: lb.dnsName !== undefined && usable > 0 ? [{ type: 'Hostname', value: lb.dnsName }] : [],
    conditions: [
      conditionOf('Accepted', accepted, prev, gen, now),
      conditionOf('Programmed', programmed, prev, gen, now),
      ...(dns !== undefined ? [conditionOf(dns.type, dns.verdict, prev, gen, now)] : []),
    ],
    listeners: listeners.map((l) => {
      const before = gw.status?.listeners?.find((s) => s.name === l.listener.name)?.conditions;
      const lp: Verdict = !l.usable
        ? { status: 'False', reason: 'Invalid', message: 'the listener cannot be served' }
        : refused !== undefined
          ? refused
          : lb.programmed
            ? {
                status: 'True',
                reason: 'Programmed',
                message: `port ${l.listener.port} of the load balancer`,
              }
            : { status: 'False', reason: 'Pending', message: lb.message };
      return {
        name: l.listener.name,
        supportedKinds: l.supportedKinds,
        attachedRoutes: attached.get(l.listener.name) ?? 0,
        conditions: [
          conditionOf('Accepted', l.accepted, before, gen, now),
          conditionOf('Programmed', lp, before, gen, now),
          conditionOf('ResolvedRefs', l.resolvedRefs, before, gen, now),
          conditionOf('Conflicted', l.conflicted, before, gen, now),
        ],
      };
    }),
  };
}

/** Conditions compared without their lastTransitionTime. Pure. */
function sameConditions(a: readonly Condition[] | undefined, b: readonly Condition[]): boolean {
  const strip = (c: Condition): Omit<Condition, 'lastTransitionTime'> => {
    const { lastTransitionTime: _t, ...rest } = c;
    return rest;
  };
  return deepEqual((a ?? []).map(strip), b.map(strip));
}

/** True when the Gateway's status already says `want` (times aside). Pure. */
export function gatewayStatusHolds(gw: Gateway, want: GatewayStatusApply): boolean {
  const s = gw.status ?? {};
  if (!deepEqual(s.addresses ?? [], want.addresses)) return false;
  if (!sameConditions(s.conditions, want.conditions)) return false;
  const have = s.listeners ?? [];
  if (have.length !== want.listeners.length) return false;
  return want.listeners.every((w, i) => {
    const h = have[i];
    return (
      h !== undefined &&
      h.name === w.name &&
      h.attachedRoutes === w.attachedRoutes &&
      deepEqual(h.supportedKinds, w.supportedKinds) &&
      sameConditions(h.conditions, w.conditions)
    );
  });
}

/** Skylift's verdict on one parentRef of a route. */
export interface ParentEntry {
  readonly parentRef: ParentReference;
  readonly accepted: Verdict;
  readonly resolvedRefs: Verdict;
  /** Not written yet (the load balancer does not carry the route yet): the current entry stays, or none. */
  readonly hold?: boolean;
}

/**
 * The route Accepted reason of a route whose rules the Gateway's load balancer cannot carry (AWS
 * refused them): a reason of Skylift's own, as the Gateway API allows beside its listed ones.
 */
export const loadBalancerRefusedReason = 'LoadBalancerRefused';

/** How a Gateway's load balancer stands towards a route's rules at the route's generation. */
export type RouteCarriage =
  /** Its group lists it Attached at that generation, and the group's last pass succeeded. */
  | { readonly kind: 'carried' }
  /** Its group lists it refused (Invalid, Conflict, NotAdmitted) at that generation: `message` says why. */
  | { readonly kind: 'refused'; readonly message: string }
  /** Not yet known: not listed at that generation, leaving, or the group's last pass failed (retrying). */
  | { readonly kind: 'pending' };

const refusedStates: readonly string[] = [MemberState.Invalid, MemberState.Conflict, MemberState.NotAdmitted];

/**
 * Whether `group` (the Gateway's MyIngressGroup, undefined before it exists) carries `route`'s
 * rules at the route's generation, from the group's status. A member listed Attached by a pass
 * that then failed (Synced not True: AWS refused or failed a call, retried) is pending, not
 * carried: the status of a failed pass lists members as planned, not as applied. Pure.
 */
export function routeCarriage(
  group: MyIngressGroup | undefined,
  route: Pick<HTTPRoute, 'metadata'>,
): RouteCarriage {
  const m = group?.status?.members?.find((x) => x.uid === route.metadata.uid);
  if (group === undefined || m === undefined || m.observedGeneration !== route.metadata.generation)
    return { kind: 'pending' };
  if (refusedStates.includes(m.state))
    return {
      kind: 'refused',
      message: `the load balancer cannot carry this route's rules: ${m.message ?? `listed ${m.state}`} (MyIngressGroup ${group.metadata.name})`,
    };
  if (m.state !== MemberState.Attached) return { kind: 'pending' };
  const synced = getCondition(group.status?.conditions, ConditionType.Synced);
  return synced?.status === 'True' ? { kind: 'carried' } : { kind: 'pending' };
}

/** Two parentRefs name the same parent (defaults filled). Pure. */
export function sameParent(a: ParentReference, b: ParentReference, routeNamespace: string): boolean {
  return (
    (a.group ?? 'gateway.networking.k8s.io') === (b.group ?? 'gateway.networking.k8s.io') &&
    (a.kind ?? 'Gateway') === (b.kind ?? 'Gateway') &&
    (a.namespace ?? routeNamespace) === (b.namespace ?? routeNamespace) &&
    a.name === b.name &&
    a.sectionName === b.sectionName &&
    a.port === b.port
  );
}

/**
 * A route's `status.parents`: the entries of other controllers as they are, then one entry of
 * Skylift's per parentRef in `ours` (those naming Skylift's Gateways), in spec order; Skylift's
 * entries for parents no longer in `ours` are dropped. Pure.
 */
export function routeParents(
  route: HTTPRoute | GRPCRoute,
  ours: readonly ParentEntry[],
  now: Date,
): RouteParentStatus[] {
  const ns = route.metadata.namespace ?? '';
  const gen = route.metadata.generation;
  const have = route.status?.parents ?? [];
  const foreign = have.filter((p) => p.controllerName !== skyliftGatewayControllerName);
  const mine = ours.flatMap((o): RouteParentStatus[] => {
    const current = have.find(
      (p) => p.controllerName === skyliftGatewayControllerName && sameParent(p.parentRef, o.parentRef, ns),
    );
    if (o.hold === true) return current !== undefined ? [current] : [];
    const before = current?.conditions;
    return [
      {
        parentRef: o.parentRef,
        controllerName: skyliftGatewayControllerName,
        conditions: [
          conditionOf('Accepted', o.accepted, before, gen, now),
          conditionOf('ResolvedRefs', o.resolvedRefs, before, gen, now),
        ],
      },
    ];
  });
  return [...foreign, ...mine];
}

/** True when the route's parents already say `want` (times aside). Pure. */
export function routeParentsHold(route: HTTPRoute | GRPCRoute, want: readonly RouteParentStatus[]): boolean {
  const have = route.status?.parents ?? [];
  return (
    have.length === want.length &&
    want.every((w, i) => {
      const h = have[i];
      return (
        h !== undefined &&
        h.controllerName === w.controllerName &&
        deepEqual(h.parentRef, w.parentRef) &&
        sameConditions(h.conditions, w.conditions)
      );
    })
  );
}

/** Where a Gateway's load balancer goes when nothing says otherwise. */
export interface GatewayDefaults {
  /** `internal` (the AWS Load Balancer Controller's default for Gateways) or `internet-facing`. */
  readonly scheme: 'internal' | 'internet-facing';
  /** The subnets' tags: by default the role tag the AWS Load Balancer Controller discovers by. */
  readonly subnetTags: Readonly<Record<string, string>>;
  /** Who may connect (the managed security group); absent: MyIngress's default for the scheme. */
  readonly inboundCIDRs?: readonly string[];
}

/** The default: internal, in the subnets tagged `kubernetes.io/role/internal-elb: 1`. */
export const defaultGatewayDefaults: GatewayDefaults = {
  scheme: 'internal',
  subnetTags: { 'kubernetes.io/role/internal-elb': '1' },
};

/**
 * The MyIngressGroup a Gateway makes (server-side applied by the Gateway controller): named by
 * gatewayGroupName, labelled with the Gateway's uid and annotated with its `namespace/name`; one
 * listener per port of its usable listeners, answering 404 to requests no route matches; every
 * namespace allowed (the front end attaches routes by allowedRoutes; MyIngresses never join a
 * Gateway's group). Undefined when no listener is usable. Pure.
 */
export function gatewayGroup(
  gw: Gateway,
  listeners: readonly ListenerVerdict[],
  defaults: GatewayDefaults,
):
  | { apiVersion: string; kind: string; metadata: MyIngressGroup['metadata']; spec: MyIngressGroupSpec }
  | undefined {
  const usable = listeners.filter((l) => l.usable).map((l) => l.listener);
  const ports = [...new Set(usable.map((l) => l.port))].sort((a, b) => a - b);
  if (ports.length === 0) return undefined;
  const gwNs = gw.metadata.namespace ?? '';
  /** The Secrets of a port's HTTPS listeners, in listener order, each once. */
  const refsOn = (port: number): CertificateSecretRef[] => {
    const seen = new Set<string>();
    const out: CertificateSecretRef[] = [];
    for (const l of usable)
      if (l.port === port && l.protocol === 'HTTPS')
        for (const r of l.tls?.certificateRefs ?? []) {
          const ref = { namespace: r.namespace ?? gwNs, name: r.name };
          const key = `${ref.namespace}/${ref.name}`;
          if (!seen.has(key)) {
            seen.add(key);
            out.push(ref);
          }
        }
    return out;
  };
  const ns = gwNs;
  return {
    apiVersion: `${myIngressGroupType.group}/${myIngressGroupType.version}`,
    kind: myIngressGroupType.kind,
    metadata: {
      name: gatewayGroupName(ns, gw.metadata.name),
      labels: { [gatewayUidLabel]: gw.metadata.uid ?? '' },
      annotations: { [gatewayAnnotation]: `${ns}/${gw.metadata.name}` },
    },
    spec: {
      scheme: defaults.scheme,
      subnetSelector: { tags: { ...defaults.subnetTags } },
      ...(defaults.inboundCIDRs !== undefined ? { inboundCIDRs: [...defaults.inboundCIDRs] } : {}),
      listeners: ports.map((port) => {
        const refs = refsOn(port);
        return {
          port,
          protocol: refs.length > 0 ? ('HTTPS' as const) : ('HTTP' as const),
          ...(refs.length > 0 ? { certificateRefs: refs } : {}),
          defaultAction: { fixedResponse: { statusCode: 404 } },
        };
      }),
      allowedNamespaces: { from: 'All' },
    },
  };
}
