// What a Gateway's MyIngressGroup refers to: its Gateway (listeners, hostnames, allowedRoutes), the
// HTTPRoutes and GRPCRoutes naming the Gateway in a parentRef (filed under the group of each Gateway they name),
// the Services their backendRefs name and those Services' EndpointSlices, every namespace (for
// allowedRoutes selectors) and the ReferenceGrants of the namespaces backends live in.
import { endpointSliceType, namespaceType, serviceType } from '../../../apis/core.ts';
import {
  gatewayType,
  grpcRouteType,
  httpRouteType,
  referenceGrantType,
  type Gateway,
  type GRPCRoute,
  type HTTPRoute,
  type ReferenceGrant,
} from '../../../apis/gatewayApi.ts';
import type { KubeObject } from '../../../apis/meta.ts';
import { everyIn, reference, refKey, type ReferenceReader } from '../../../runtime/references.ts';
import type { MyIngressGroup } from '../group/api.ts';
import { groupKey } from '../group/references.ts';
import { sliceService, type BackendEndpointSlice, type BackendService } from '../references.ts';
import { gatewayAnnotation, gatewayGroupName, parentGateway, parseGatewayKey } from './names.ts';

/** The Gateway a group is made for, as `namespace/name` (its annotation). Pure. */
export function groupGateway(g: MyIngressGroup): { namespace: string; name: string } | undefined {
  return parseGatewayKey(g.metadata.annotations?.[gatewayAnnotation]);
}

/** The group's Gateway. */
export const gatewayRef = reference<MyIngressGroup, Gateway>({
  name: 'Gateway (skylift.dev/gateway annotation)',
  type: gatewayType,
  targets: (g) => {
    const gw = groupGateway(g);
    return gw !== undefined ? [refKey(gw.namespace, gw.name)] : [];
  },
});

/** The keys of the groups of the Gateways a route names (one per Gateway). Pure. */
export function routeGroupKeys(route: HTTPRoute | GRPCRoute): string[] {
  const ns = route.metadata.namespace ?? '';
  const keys = new Set<string>();
  for (const p of route.spec.parentRefs ?? []) {
    const gw = parseGatewayKey(parentGateway(p, ns));
    if (gw !== undefined) keys.add(groupKey(gatewayGroupName(gw.namespace, gw.name)));
  }
  return [...keys];
}

/** The HTTPRoutes naming the group's Gateway. */
export const routeRef = reference<MyIngressGroup, HTTPRoute>({
  name: 'HTTPRoute spec.parentRefs',
  type: httpRouteType,
  targets: (g) => [groupKey(g.metadata.name)],
  filedUnder: routeGroupKeys,
  refiles: true,
});

/** The GRPCRoutes naming the group's Gateway. */
export const grpcRouteRef = reference<MyIngressGroup, GRPCRoute>({
  name: 'GRPCRoute spec.parentRefs',
  type: grpcRouteType,
  targets: (g) => [groupKey(g.metadata.name)],
  filedUnder: routeGroupKeys,
  refiles: true,
});

/** The Services (`namespace/name`) the routes' backendRefs name. Pure over the caches. */
function backendKeys(g: MyIngressGroup, refs: ReferenceReader<MyIngressGroup>): string[] {
  const keys = new Set<string>();
  const filed = groupKey(g.metadata.name);
  for (const r of [...refs.filed(routeRef, filed), ...refs.filed(grpcRouteRef, filed)])
    for (const rule of r.spec.rules ?? [])
      for (const b of rule.backendRefs ?? [])
        if ((b.group ?? '') === '' && (b.kind ?? 'Service') === 'Service')
          keys.add(refKey(b.namespace ?? r.metadata.namespace ?? '', b.name));
  return [...keys];
}

/** The Services the routes' backendRefs name. */
export const routeServiceRef = reference<MyIngressGroup, BackendService>({
  name: 'HTTPRoute and GRPCRoute backendRefs',
  type: serviceType,
  targets: backendKeys,
});

/** Their EndpointSlices, filed under their Service. */
export const routeEndpointSliceRef = reference<MyIngressGroup, BackendEndpointSlice>({
  name: 'HTTPRoute and GRPCRoute backendRefs EndpointSlices',
  type: endpointSliceType,
  targets: backendKeys,
  filedUnder: sliceService,
});

/** Every namespace, for its labels (allowedRoutes from Selector). */
export const routeNamespaceRef = reference<MyIngressGroup, KubeObject>({
  name: 'listeners[].allowedRoutes.namespaces',
  type: namespaceType,
  targets: () => [everyIn('')],
});

/** The ReferenceGrants of the namespaces the routes' backends live in. */
export const referenceGrantRef = reference<MyIngressGroup, ReferenceGrant>({
  name: 'ReferenceGrants of backend namespaces',
  type: referenceGrantType,
  targets: (g, refs) => [...new Set(backendKeys(g, refs).map((k) => everyIn(k.slice(0, k.indexOf('/')))))],
});

/** Every reference a Gateway's group holds. */
export const gatewayGroupReferences = [
  gatewayRef,
  routeRef,
  grpcRouteRef,
  routeServiceRef,
  routeEndpointSliceRef,
  routeNamespaceRef,
  referenceGrantRef,
] as const;
