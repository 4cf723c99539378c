// How a Gateway's shared load balancer is named and marked: the MyIngressGroup Skylift makes for a
// Gateway of a Skylift GatewayClass (issue 30). The group is cluster-scoped and its name follows
// from the Gateway's namespace and name, so a route's parentRef finds its group without reading
// the Gateway, and a Gateway created again under the same name finds its group again.
import { createHash } from 'node:crypto';
import { gatewayApiGroup, type ParentReference } from '../../../apis/gatewayApi.ts';

/** Label on a Gateway's MyIngressGroup: the Gateway's uid (its presence marks a Gateway's group). */
export const gatewayUidLabel = 'skylift.dev/gateway-uid';
/** Annotation on a Gateway's MyIngressGroup: the Gateway's `namespace/name`. */
export const gatewayAnnotation = 'skylift.dev/gateway';

/** The longest object name Kubernetes takes (a DNS subdomain). */
const maxName = 253;

/**
 * The MyIngressGroup of Gateway `namespace/name`: `gateway.<namespace>.<name>` (a valid DNS
 * subdomain: both parts are), shortened with a hash of the whole when longer than 253. Pure.
 */
export function gatewayGroupName(namespace: string, name: string): string {
  const full = `gateway.${namespace}.${name}`;
  if (full.length <= maxName) return full;
  const hash = createHash('sha256').update(`${namespace}/${name}`).digest('hex').slice(0, 10);
  return `${full.slice(0, maxName - hash.length - 1).replace(/[.-]+$/, '')}-${hash}`;
}

/**
 * The Gateway a route's parentRef names, as `namespace/name` (the route's namespace when the
 * reference has none); undefined when it names something else than a Gateway. Pure.
 */
export function parentGateway(ref: ParentReference, routeNamespace: string): string | undefined {
  if ((ref.group ?? gatewayApiGroup) !== gatewayApiGroup || (ref.kind ?? 'Gateway') !== 'Gateway')
    return undefined;
  return `${ref.namespace ?? routeNamespace}/${ref.name}`;
}

/** The Gateway `namespace/name` a group annotation names; undefined when malformed. Pure. */
export function parseGatewayKey(key: string | undefined): { namespace: string; name: string } | undefined {
  if (key === undefined) return undefined;
  const slash = key.indexOf('/');
  if (slash <= 0 || slash === key.length - 1) return undefined;
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/**
 * `selector` (a controller's `--label-selector`, possibly none) and `also`, as one label selector
 * (requirements are ANDed). Pure.
 */
export function andSelector(selector: string | undefined, also: string): string {
  return selector !== undefined && selector.trim() !== '' ? `${selector},${also}` : also;
}
