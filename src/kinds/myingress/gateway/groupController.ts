// The controller of Gateways' load balancers: the MyIngressGroups the Gateway controller makes for
// Gateways of a Skylift class (label skylift.dev/gateway-uid), reconciled by the group machinery
// with the Gateway's HTTPRoutes and GRPCRoutes as members (routes.ts) instead of MyIngresses. Its
// load balancer stays while no route attaches (a Gateway is Programmed, with an address, before any
// route). Started only when the cluster serves the Gateway API (its informers watch the routes).
import type { RuleSpec } from '../api.ts';
import { Controller, type RunnableController } from '../../../runtime/controller.ts';
import type { ReferenceReader } from '../../../runtime/references.ts';
import { tenantConnector } from '../../../tenancy/connector.ts';
import { accountsOf, controllerOptions } from '../../controllerOptions.ts';
import type { KindPlumbing } from '../../module.ts';
import { defaultMyIngressSettings, type MyIngressSettings } from '../settings.ts';
import type { GroupDetails, GroupField } from '../group/adapter.ts';
import { myIngressGroupType, type MyIngressGroup } from '../group/api.ts';
import {
  groupCertificatesFor,
  groupClusterDeps,
  groupTenancyOption,
  memberTenancyOf,
} from '../group/controller.ts';
import { groupKey } from '../group/references.ts';
import type { MyIngress } from '../api.ts';
import { listenerVerdicts } from './listeners.ts';
import { andSelector, gatewayUidLabel } from './names.ts';
import {
  gatewayGroupReferences,
  gatewayRef,
  groupGateway,
  grpcRouteRef,
  referenceGrantRef,
  routeEndpointSliceRef,
  routeNamespaceRef,
  routeRef,
  routeServiceRef,
} from './references.ts';
import { anyRouteOnGateway, type GatewayRoute } from './routes.ts';

/**
 * The members of a Gateway's group: each HTTPRoute and GRPCRoute naming the Gateway that attaches to one of its
 * listeners, as routes.ts makes it a member; each rule's rank recorded in `ranks` (read by the
 * plan's `rank`). Reads the caches only; pure otherwise.
 */
export function gatewayMembers(
  group: MyIngressGroup,
  refs: ReferenceReader<MyIngressGroup>,
  ranks: WeakMap<RuleSpec, number>,
): MyIngress[] {
  const at = groupGateway(group);
  const gateway = at !== undefined ? refs.get(gatewayRef, at.namespace, at.name) : undefined;
  if (gateway === undefined) return [];
  // The listeners the Gateway controller put on the load balancer (it judged their certificates).
  const ports = new Set(group.spec.listeners.map((l) => l.port));
  const listeners = listenerVerdicts(gateway).map((v) =>
    v.usable && !ports.has(v.listener.port) ? { ...v, usable: false } : v,
  );
  const members: MyIngress[] = [];
  const filed = groupKey(group.metadata.name);
  const routes: GatewayRoute[] = [
    ...refs.filed(routeRef, filed).map((route) => ({ kind: 'HTTPRoute' as const, route })),
    ...refs.filed(grpcRouteRef, filed).map((route) => ({ kind: 'GRPCRoute' as const, route })),
  ];
  for (const r of routes) {
    if (r.route.metadata.deletionTimestamp !== undefined) continue;
    const on = anyRouteOnGateway(r, {
      routes,
      gateway,
      listeners,
      groupName: group.metadata.name,
      namespaceLabels: (ns) => refs.get(routeNamespaceRef, '', ns)?.metadata.labels,
      service: (ns, name) => refs.get(routeServiceRef, ns, name),
      grants: (ns) => refs.list(referenceGrantRef, ns),
    });
    if (on.member === undefined) continue;
    for (const [rule, rank] of on.ranks) ranks.set(rule, rank);
    members.push(on.member);
  }
  return members;
}

/** The Gateway API's order of routes of equal precedence: the older first, then namespace/name. Pure. */
export function routeOrder(a: MyIngress, b: MyIngress): number {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  const ka = `${a.metadata.namespace ?? ''}/${a.metadata.name}`;
  const kb = `${b.metadata.namespace ?? ''}/${b.metadata.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** The controller of Gateways' groups. `overrides` replace some of MyIngress's settings (tests). */
export function gatewayGroupController(
  s: KindPlumbing,
  overrides: Partial<MyIngressSettings> = {},
): RunnableController {
  const settings: MyIngressSettings = { ...defaultMyIngressSettings, ...overrides };
  const ranks = new WeakMap<RuleSpec, number>();
  return new Controller<MyIngressGroup, GroupDetails, GroupField>({
    type: myIngressGroupType,
    connector: (refs) =>
      tenantConnector({
        // A Gateway's load balancer is the platform team's: the operator's own identity; its routes'
        // namespaces' tenancy is judged per route (memberTenancyOf).
        accounts: accountsOf(s),
        adapterFor: async (aws) => {
          const [{ myIngressAdapterFor }, { MyIngressGroupAdapter }] = await Promise.all([
            import('../adapterFor.ts'),
            import('../group/adapter.ts'),
          ]);
          const backends = {
            service: (ns: string, name: string) => refs.get(routeServiceRef, ns, name),
            endpointSlices: (ns: string, service: string) => refs.list(routeEndpointSliceRef, ns, service),
            synced: () => refs.synced(routeServiceRef) && refs.synced(routeEndpointSliceRef),
          };
          const ingress = await myIngressAdapterFor(
            aws,
            s.clock,
            groupClusterDeps(backends, settings, s.tenants),
          );
          const memberTenancy = memberTenancyOf(s, aws, settings);
          return new MyIngressGroupAdapter(ingress, {
            ...(memberTenancy !== undefined ? { memberTenancy } : {}),
            members: (group) => gatewayMembers(group, refs, ranks),
            namespaceLabels: (ns) => refs.get(routeNamespaceRef, '', ns)?.metadata.labels,
            synced: () =>
              refs.synced(gatewayRef) &&
              refs.synced(routeRef) &&
              refs.synced(grpcRouteRef) &&
              refs.synced(routeNamespaceRef) &&
              refs.synced(referenceGrantRef),
            planOptions: { claims: () => [], order: routeOrder, rank: (_m, r) => ranks.get(r) ?? 0 },
            keepWithoutMembers: true,
            certificates: groupCertificatesFor(s, aws),
          });
        },
      }),
    ...controllerOptions(s),
    ...groupTenancyOption(s),
    labelSelector: andSelector(s.settings.labelSelector, gatewayUidLabel),
    pollMs: settings.pollMs,
    references: gatewayGroupReferences,
  });
}
