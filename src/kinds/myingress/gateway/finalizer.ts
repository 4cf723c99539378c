// A Gateway of a Skylift GatewayClass carries Skylift's finalizer from before its load balancer
// (its MyIngressGroup) is made until that group and the DNSRecords it owns are gone, so
// `kubectl delete gateway` returns only once the ALB, its listeners, rules, target groups and
// imported certificates and the Route 53 records are deleted (the group's and the records' own
// finalizers do the AWS work). A Gateway that leaves Skylift (another class, or its class deleted)
// is cleaned up the same way and then loses the finalizer. Pure.

/** Skylift's finalizer on Gateways (beside `aws.skylift.dev/cleanup`, the one on Skylift's own kinds). */
export const gatewayFinalizer = 'aws.skylift.dev/gateway-cleanup';

/** True when the finalizers list Skylift's Gateway finalizer. Pure. */
export function hasGatewayFinalizer(finalizers: readonly string[] | undefined): boolean {
  return finalizers?.includes(gatewayFinalizer) === true;
}

/**
 * The finalizers with Skylift's Gateway finalizer present (appended, once) or absent; everyone
 * else's kept as they are, in their order. Pure.
 */
export function withGatewayFinalizer(finalizers: readonly string[] | undefined, present: boolean): string[] {
  const others = (finalizers ?? []).filter((f) => f !== gatewayFinalizer);
  return present ? [...others, gatewayFinalizer] : others;
}

/** What the Gateway controller does about a Gateway's finalizer and leftovers in one reconcile. */
export type GatewayCleanupStep =
  /** Served, without the finalizer yet: add it before anything is made for the Gateway. */
  | 'addFinalizer'
  /** Served, finalizer in place: make its group, records and status. */
  | 'serve'
  /** Deleted or no longer Skylift's, with something of it left: delete that and wait. */
  | 'cleanUp'
  /** Deleted or no longer Skylift's, nothing of it left: let the Gateway go. */
  | 'removeFinalizer'
  /** Nothing of Skylift's on it or for it. */
  | 'nothing';

/**
 * The step for a Gateway: `served` (it exists, is of a Skylift class and is not being deleted),
 * whether it has the finalizer, and whether anything made for it (its group, its DNSRecords) is
 * still there. The finalizer goes on before anything is made and comes off only once nothing is
 * left, so a crash between any two steps orphans nothing. Pure.
 */
export function gatewayCleanupStep(s: {
  readonly served: boolean;
  readonly finalizer: boolean;
  readonly leftovers: boolean;
}): GatewayCleanupStep {
  if (s.served) return s.finalizer ? 'serve' : 'addFinalizer';
  if (s.leftovers) return 'cleanUp';
  return s.finalizer ? 'removeFinalizer' : 'nothing';
}
