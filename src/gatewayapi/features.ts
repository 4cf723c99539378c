// The Gateway API features Skylift claims, in one place: the GatewayClass controller lists them
// in status.supportedFeatures, the conformance suite reads them from there, and each part of the
// front end adds its own as it becomes real.
import type { SupportedFeature } from '../apis/gatewayApi.ts';

/**
 * The features (the conformance suite's `features.FeatureName`s) Skylift supports today: the core
 * features of the GATEWAY-HTTP profile; GRPCRoute (the GATEWAY-GRPC profile's core feature:
 * GRPCRoutes on HTTPS listeners, gRPC target groups); and the extended ones whose conformance tests
 * pass through the ALB data plane (docs/gateway.md, "Conformance"): method matches, port and scheme
 * redirects, listeners on 8080, attachment by parentRef port. Others are added here as the front
 * end serves them, and only then: the suite tests what a class lists. Not claimed, because an ALB
 * cannot: query param matching (ALB compares query keys and values case-insensitively; the
 * feature's test sends `ANIMAL=Whale` to a route matching `animal=whale` and expects no match), path
 * redirects (ALB redirects cannot replace a prefix).
 */
export const skyliftSupportedFeatures: readonly string[] = [
  'Gateway',
  'GRPCRoute',
  'HTTPRoute',
  'ReferenceGrant',
  'HTTPRouteMethodMatching',
  'HTTPRoutePortRedirect',
  'HTTPRouteSchemeRedirect',
  'HTTPRouteParentRefPort',
  'GatewayPort8080',
];

/**
 * `status.supportedFeatures` for `names`: one `{name}` entry per distinct name, in ascending order
 * by name as the specification requires (byte order, as Go's sort of the strings). Pure.
 */
export function supportedFeaturesStatus(
  names: readonly string[] = skyliftSupportedFeatures,
): SupportedFeature[] {
  return [...new Set(names)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((name) => ({ name }));
}
