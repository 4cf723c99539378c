// Skylift's names in the Kubernetes Gateway API (issue 30), and the Gateway API types Skylift
// reads and writes. The front end (src/gatewayapi/ and src/kinds/myingress/gateway/: GatewayClass,
// Gateway, HTTPRoute and GRPCRoute) answers to these names, and the conformance runner (dev/conformance.ts)
// uses them, so both agree.
import type { Condition } from './managed.ts';
import type { KubeObject, ResourceType } from './meta.ts';
import type { LabelSelector } from './teampolicy.ts';

/**
 * The `spec.controllerName` of GatewayClasses Skylift serves: a GatewayClass naming it is
 * Skylift's to accept (set `Accepted`), and its Gateways become ALBs. A domain-prefixed path, as
 * the Gateway API requires; it never changes once released (GatewayClass makes it immutable).
 */
export const skyliftGatewayControllerName = 'aws.skylift.dev/gateway-controller';

/**
 * The GatewayClass Skylift's conformance runs use (`-gateway-class`), created by the runner with
 * {@link skyliftGatewayControllerName}; also the name to suggest to users for the class they create.
 */
export const skyliftGatewayClassName = 'skylift';

/** The Gateway API's group; Skylift serves its `v1` (standard channel, v1.6.3 CRDs). */
export const gatewayApiGroup = 'gateway.networking.k8s.io';

/** GatewayClass, cluster-scoped, as Skylift reads and writes it. */
export const gatewayClassType = {
  group: gatewayApiGroup,
  version: 'v1',
  plural: 'gatewayclasses',
  kind: 'GatewayClass',
  namespaced: false,
} as const satisfies ResourceType;

/** A reference to a GatewayClass's parameters (`spec.parametersRef`). */
export interface ParametersReference {
  group: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** One entry of `status.supportedFeatures` (v1.x: an object, not a bare name). */
export interface SupportedFeature {
  name: string;
}

/** A GatewayClass: the fields Skylift reads (spec) and writes (status). */
export interface GatewayClass extends KubeObject {
  spec: {
    controllerName: string;
    parametersRef?: ParametersReference;
    description?: string;
  };
  status?: {
    conditions?: Condition[];
    supportedFeatures?: SupportedFeature[];
  };
}

/** Gateway, namespaced: one Application Load Balancer when its class is Skylift's. */
export const gatewayType = {
  group: gatewayApiGroup,
  version: 'v1',
  plural: 'gateways',
  kind: 'Gateway',
  namespaced: true,
} as const satisfies ResourceType;

/** HTTPRoute, namespaced: listener rules on the Gateways it attaches to. */
export const httpRouteType = {
  group: gatewayApiGroup,
  version: 'v1',
  plural: 'httproutes',
  kind: 'HTTPRoute',
  namespaced: true,
} as const satisfies ResourceType;

/** GRPCRoute, namespaced: listener rules for gRPC methods on the Gateways it attaches to (HTTPS listeners). */
export const grpcRouteType = {
  group: gatewayApiGroup,
  version: 'v1',
  plural: 'grpcroutes',
  kind: 'GRPCRoute',
  namespaced: true,
} as const satisfies ResourceType;

/** The route kinds Skylift serves, by their `kind`. */
export type RouteKind = 'HTTPRoute' | 'GRPCRoute';

/** ReferenceGrant (v1beta1 in the standard channel): lets routes reach another namespace's Services. */
export const referenceGrantType = {
  group: gatewayApiGroup,
  version: 'v1beta1',
  plural: 'referencegrants',
  kind: 'ReferenceGrant',
  namespaced: true,
} as const satisfies ResourceType;

/** A label selector as the Gateway API writes one (metav1.LabelSelector, as TeamPolicy's). */
export type GatewayLabelSelector = LabelSelector;

/** `listeners[].allowedRoutes`: which routes may attach to a listener. */
export interface AllowedRoutes {
  namespaces?: { from?: 'All' | 'Same' | 'Selector'; selector?: GatewayLabelSelector };
  kinds?: { group?: string; kind: string }[];
}

/** A reference to a Secret (or other object) holding a listener's certificate. */
export interface SecretObjectReference {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
}

/** One listener of a Gateway. */
export interface GatewayListener {
  name: string;
  hostname?: string;
  port: number;
  protocol: string;
  tls?: { mode?: 'Terminate' | 'Passthrough'; certificateRefs?: SecretObjectReference[] };
  allowedRoutes?: AllowedRoutes;
}

/** A route kind a listener accepts, as its status lists it. */
export interface RouteGroupKind {
  group?: string;
  kind: string;
}

/** One listener's status. */
export interface ListenerStatus {
  name: string;
  supportedKinds: RouteGroupKind[];
  attachedRoutes: number;
  conditions: Condition[];
}

/** A Gateway: the fields Skylift reads (spec) and writes (status). */
export interface Gateway extends KubeObject {
  spec: {
    gatewayClassName: string;
    listeners: GatewayListener[];
    addresses?: { type?: string; value: string }[];
  };
  status?: {
    addresses?: { type?: string; value: string }[];
    conditions?: Condition[];
    listeners?: ListenerStatus[];
  };
}

/** A route's reference to its parent (a Gateway, or one listener of it). */
export interface ParentReference {
  group?: string;
  kind?: string;
  namespace?: string;
  name: string;
  sectionName?: string;
  port?: number;
}

/** One match of an HTTPRoute rule. */
export interface HTTPRouteMatch {
  path?: { type?: 'Exact' | 'PathPrefix' | 'RegularExpression'; value?: string };
  headers?: { type?: 'Exact' | 'RegularExpression'; name: string; value: string }[];
  queryParams?: { type?: 'Exact' | 'RegularExpression'; name: string; value: string }[];
  method?: string;
}

/** A filter of a rule or a backend (Skylift reads its type; what an ALB cannot do is refused). */
export interface HTTPRouteFilter {
  type: string;
  requestRedirect?: {
    scheme?: string;
    hostname?: string;
    path?: { type: string; replaceFullPath?: string; replacePrefixMatch?: string };
    port?: number;
    statusCode?: number;
  };
  [other: string]: unknown;
}

/** A backend of a rule: a Service (core group) and port, weighted. */
export interface HTTPBackendRef {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
  port?: number;
  weight?: number;
  filters?: HTTPRouteFilter[];
}

/** One rule of an HTTPRoute. */
export interface HTTPRouteRule {
  name?: string;
  matches?: HTTPRouteMatch[];
  filters?: HTTPRouteFilter[];
  backendRefs?: HTTPBackendRef[];
  timeouts?: { request?: string; backendRequest?: string };
  [other: string]: unknown;
}

/** One parent's status on a route. */
export interface RouteParentStatus {
  parentRef: ParentReference;
  controllerName: string;
  conditions: Condition[];
}

/** An HTTPRoute: the fields Skylift reads (spec) and writes (status). */
export interface HTTPRoute extends KubeObject {
  spec: {
    parentRefs?: ParentReference[];
    hostnames?: string[];
    rules?: HTTPRouteRule[];
  };
  status?: { parents?: RouteParentStatus[] };
}

/** A gRPC method match: `service` and `method` (Exact by default), either may be absent. */
export interface GRPCMethodMatch {
  type?: 'Exact' | 'RegularExpression';
  service?: string;
  method?: string;
}

/** One match of a GRPCRoute rule. */
export interface GRPCRouteMatch {
  method?: GRPCMethodMatch;
  headers?: { type?: 'Exact' | 'RegularExpression'; name: string; value: string }[];
}

/** One rule of a GRPCRoute (filters are read by type: none is an ALB's, so all are refused). */
export interface GRPCRouteRule {
  name?: string;
  matches?: GRPCRouteMatch[];
  filters?: HTTPRouteFilter[];
  backendRefs?: HTTPBackendRef[];
  [other: string]: unknown;
}

/** A GRPCRoute: the fields Skylift reads (spec) and writes (status). */
export interface GRPCRoute extends KubeObject {
  spec: {
    parentRefs?: ParentReference[];
    hostnames?: string[];
    rules?: GRPCRouteRule[];
  };
  status?: { parents?: RouteParentStatus[] };
}

/** A ReferenceGrant: who (`from`) may refer to what (`to`) in its namespace. */
export interface ReferenceGrant extends KubeObject {
  spec: {
    from: { group: string; kind: string; namespace: string }[];
    to: { group: string; kind: string; name?: string }[];
  };
}
