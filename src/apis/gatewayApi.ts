// Skylift's names in the Kubernetes Gateway API (issue 30). The Gateway front end (a
// GatewayClass controller, then Gateway and HTTPRoute) is still to be built; these are the names
// it is to answer to, and the ones the conformance runner (dev/conformance.ts) already uses, so
// both agree from the start.

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
