// Skylift's names in the Kubernetes Gateway API (issue 30), and the Gateway API types Skylift
// reads and writes. The front end (src/gatewayapi/: GatewayClass acceptance so far; Gateway and
// HTTPRoute to come) answers to these names, and the conformance runner (dev/conformance.ts)
// uses them, so both agree.
import type { Condition } from './managed.ts';
import type { KubeObject, ResourceType } from './meta.ts';

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
