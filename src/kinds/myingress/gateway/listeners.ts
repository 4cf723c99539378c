// A Gateway's listeners as an ALB can serve them: which are valid (protocol, route kinds, no
// conflict with another listener on the same port), the ALB listeners they make (one per port),
// and which route namespaces a listener admits. Pure.
import {
  gatewayApiGroup,
  type Gateway,
  type GatewayListener,
  type ReferenceGrant,
  type RouteGroupKind,
  type RouteKind,
  type SecretObjectReference,
} from '../../../apis/gatewayApi.ts';
import { selectorMatches } from '../../../tenancy/selection.ts';

/**
 * The route kinds Skylift attaches to a listener of `protocol`: HTTPRoute to HTTP and HTTPS, and
 * GRPCRoute to HTTPS only (an ALB serves gRPC on HTTPS listeners alone: gRPC needs HTTP/2, which an
 * ALB speaks to clients only over TLS); none to other protocols. Pure.
 */
export function routeKindsFor(protocol: string): RouteKind[] {
  return protocol === 'HTTPS' ? ['HTTPRoute', 'GRPCRoute'] : protocol === 'HTTP' ? ['HTTPRoute'] : [];
}

/** A condition as a verdict: its status, reason and message (the writer adds times and generation). */
export interface Verdict {
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

/** What Skylift says of one listener. */
export interface ListenerVerdict {
  readonly listener: GatewayListener;
  /** Its conditions: Accepted, ResolvedRefs, Conflicted (Programmed follows the load balancer). */
  readonly accepted: Verdict;
  readonly resolvedRefs: Verdict;
  readonly conflicted: Verdict;
  /** The route kinds it takes (status.listeners[].supportedKinds). */
  readonly supportedKinds: RouteGroupKind[];
  /**
   * True when routes may attach (it is valid and takes a route kind): they count in its
   * attachedRoutes and are Accepted even while its certificates do not resolve.
   */
  readonly attachable: boolean;
  /** True when it is on the load balancer: attachable, and its certificateRefs resolve. */
  readonly usable: boolean;
}

/** The protocols an ALB listener serves that Skylift maps today. */
const servedProtocols = new Set(['HTTP', 'HTTPS']);

/** How one of a listener's certificateRefs resolves (the caller reads the Secret). */
export type CertificateRefState =
  { readonly ok: true } | { readonly ok: false; readonly reason: string; readonly message: string };

/**
 * How a listener's certificate reference resolves by the Gateway API's rules, before the Secret
 * is read: a core Secret (else InvalidCertificateRef), in the Gateway's namespace or one whose
 * ReferenceGrant lets this Gateway's namespace refer to it (else RefNotPermitted). Pure.
 */
export function certificateRefAllowed(
  ref: SecretObjectReference,
  gatewayNamespace: string,
  grants: (namespace: string) => readonly ReferenceGrant[],
): CertificateRefState {
  if ((ref.group ?? '') !== '' || (ref.kind ?? 'Secret') !== 'Secret')
    return {
      ok: false,
      reason: 'InvalidCertificateRef',
      message: `certificateRefs names a ${ref.group ?? ''}/${ref.kind ?? ''}: only core Secrets hold certificates`,
    };
  const ns = ref.namespace ?? gatewayNamespace;
  if (ns === gatewayNamespace) return { ok: true };
  const granted = grants(ns).some(
    (g) =>
      g.spec.from.some(
        (f) => f.group === gatewayApiGroup && f.kind === 'Gateway' && f.namespace === gatewayNamespace,
      ) &&
      g.spec.to.some(
        (t) => t.group === '' && t.kind === 'Secret' && (t.name === undefined || t.name === ref.name),
      ),
  );
  return granted
    ? { ok: true }
    : {
        ok: false,
        reason: 'RefNotPermitted',
        message: `Secret ${ns}/${ref.name} is in another namespace, and no ReferenceGrant there lets Gateways of ${gatewayNamespace} refer to it`,
      };
}

/**
 * The verdict on each of a Gateway's listeners, in spec order. A listener is usable when its
 * protocol is served (HTTP, or HTTPS terminated with its certificateRefs, each resolving by
 * `certificate` — default: all resolve — else ResolvedRefs False with the reference's reason), it
 * takes at least one route kind Skylift supports, and no other listener on its port has the same
 * hostname (both are Conflicted: HostnameConflict) or another protocol (ProtocolConflict). Pure.
 */
export function listenerVerdicts(
  gw: Gateway,
  certificate: (ref: SecretObjectReference) => CertificateRefState = () => ({ ok: true }),
): ListenerVerdict[] {
  const listeners = gw.spec.listeners;
  return listeners.map((l) => {
    const kinds = routeKindsOf(l);
    const https = l.protocol === 'HTTPS';
    const refs = https ? (l.tls?.certificateRefs ?? []) : [];
    const badRef = refs.map(certificate).find((c): c is Extract<CertificateRefState, { ok: false }> => !c.ok);
    const refsResolve = !https || (refs.length > 0 && badRef === undefined);
    const resolved: Verdict =
      badRef !== undefined
        ? { status: 'False', reason: badRef.reason, message: badRef.message }
        : https && refs.length === 0
          ? {
              status: 'False',
              reason: 'InvalidCertificateRef',
              message: 'an HTTPS listener needs tls.certificateRefs (Skylift terminates TLS with them)',
            }
          : kinds.invalid.length === 0
            ? { status: 'True', reason: 'ResolvedRefs', message: 'References are resolved' }
            : {
                status: 'False',
                reason: 'InvalidRouteKinds',
                message: `allowedRoutes.kinds names ${kinds.invalid.join(', ')}; Skylift attaches HTTPRoute to HTTP and HTTPS listeners and GRPCRoute to HTTPS ones`,
              };
    const same = listeners.filter((o) => o !== l && o.port === l.port);
    const protocolClash = same.find((o) => o.protocol !== l.protocol);
    const hostClash = same.find(
      (o) => o.protocol === l.protocol && (o.hostname ?? '') === (l.hostname ?? ''),
    );
    const conflicted: Verdict =
      protocolClash !== undefined
        ? {
            status: 'True',
            reason: 'ProtocolConflict',
            message: `listener ${protocolClash.name} uses port ${l.port} with protocol ${protocolClash.protocol}`,
          }
        : hostClash !== undefined
          ? {
              status: 'True',
              reason: 'HostnameConflict',
              message: `listener ${hostClash.name} uses port ${l.port} with the same hostname`,
            }
          : { status: 'False', reason: 'NoConflicts', message: 'No conflicts' };
    let accepted: Verdict = { status: 'True', reason: 'Accepted', message: 'Listener is accepted' };
    if (!servedProtocols.has(l.protocol))
      accepted = {
        status: 'False',
        reason: 'UnsupportedProtocol',
        message: `protocol ${l.protocol} is not one an Application Load Balancer serves for Skylift (HTTP, HTTPS)`,
      };
    else if (https && l.tls?.mode === 'Passthrough')
      accepted = {
        status: 'False',
        reason: 'UnsupportedValue',
        message: 'tls.mode Passthrough: an Application Load Balancer terminates TLS (use Terminate)',
      };
    const attachable =
      accepted.status === 'True' && conflicted.status === 'False' && kinds.supported.length > 0;
    const usable = attachable && refsResolve;
    return {
      listener: l,
      accepted,
      resolvedRefs: resolved,
      conflicted,
      // A listener of a protocol Skylift does not serve takes no route kind at all.
      supportedKinds: servedProtocols.has(l.protocol) ? kinds.supported : [],
      attachable,
      usable,
    };
  });
}

/**
 * The route kinds a listener names (default: every kind its protocol takes, routeKindsFor), split
 * into supported and not (a GRPCRoute on an HTTP listener is not). Pure.
 */
function routeKindsOf(l: GatewayListener): { supported: RouteGroupKind[]; invalid: string[] } {
  const served: readonly string[] = routeKindsFor(l.protocol);
  const named = l.allowedRoutes?.kinds;
  if (named === undefined || named.length === 0)
    return { supported: served.map((kind) => ({ group: gatewayApiGroup, kind })), invalid: [] };
  const supported: RouteGroupKind[] = [];
  const invalid: string[] = [];
  for (const k of named) {
    const group = k.group ?? gatewayApiGroup;
    if (group === gatewayApiGroup && served.includes(k.kind)) supported.push({ group, kind: k.kind });
    else invalid.push(`${group === '' ? 'core' : group}/${k.kind}`);
  }
  return { supported, invalid };
}

/** Whether a listener's supportedKinds take routes of `kind`. Pure. */
export function listenerTakes(l: ListenerVerdict, kind: RouteKind): boolean {
  return l.supportedKinds.some((k) => k.kind === kind && (k.group ?? gatewayApiGroup) === gatewayApiGroup);
}

/**
 * Whether a listener admits routes of namespace `ns` (labels `labels`, undefined: unknown) of a
 * Gateway in `gatewayNamespace`: `Same` (the default) only its own, `All` any, `Selector` those
 * whose labels match. Pure.
 */
export function listenerAdmits(
  l: GatewayListener,
  gatewayNamespace: string,
  ns: string,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const from = l.allowedRoutes?.namespaces?.from ?? 'Same';
  if (from === 'All') return true;
  if (from === 'Same') return ns === gatewayNamespace;
  const sel = l.allowedRoutes?.namespaces?.selector;
  if (sel === undefined || labels === undefined) return false;
  return selectorMatches(sel, labels);
}
