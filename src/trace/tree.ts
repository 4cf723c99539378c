// The model `skylift trace` prints: a tree of the custom resource, its
// conditions and the AWS resources behind it.
import { awsErrorCode } from '../providers/aws/errors.ts';

/**
 * One line of the trace. `ready` says whether this node is as it should be
 * (false: a condition not True, an AWS resource missing, failing or not yet
 * usable); undefined marks an informational node that never fails the trace
 * (e.g. target health, which is the application's business, not Skylift's).
 */
export interface TraceNode {
  /** What it is: `MyIngress`, `Condition`, `LoadBalancer`, `Listener`, … */
  readonly kind: string;
  readonly name: string;
  /** Short state: `True`, `active`, `available`, `NotFound`, `Error`, … */
  readonly status: string;
  readonly ready?: boolean | undefined;
  /** Further facts, each `key=value` or a short phrase. */
  readonly details: readonly string[];
  readonly children: readonly TraceNode[];
}

/** A node; `children` and `details` default to none. Pure. */
export function node(
  kind: string,
  name: string,
  status: string,
  ready: boolean | undefined,
  details: readonly string[] = [],
  children: readonly TraceNode[] = [],
): TraceNode {
  return { kind, name, status, ...(ready !== undefined ? { ready } : {}), details, children };
}

/** A resource recorded in status but absent in AWS: drift. Pure. */
export function notFoundNode(kind: string, name: string): TraceNode {
  return node(kind, name, 'NotFound', false, ['recorded in status but not found in AWS (drift)']);
}

/** A resource whose lookup failed; the error is shown instead of crashing the trace. Pure. */
export function errorNode(kind: string, name: string, err: unknown): TraceNode {
  const code = awsErrorCode(err);
  const message = err instanceof Error ? err.message : String(err);
  return node(kind, name, 'Error', false, [
    code !== undefined && code !== message ? `${code}: ${message}` : message,
  ]);
}

/** True when no node in the tree is marked not ready. Pure. */
export function allReady(root: TraceNode): boolean {
  return root.ready !== false && root.children.every(allReady);
}

/** Thrown by a describe step when AWS says the recorded resource does not exist. */
export class NotFoundInAws extends Error {
  override readonly name = 'NotFoundInAws';
}

/**
 * Runs a describe step for one AWS resource and never throws: the step's
 * node, or a NotFound node when it throws {@link NotFoundInAws} or an error
 * `isNotFound` accepts, or an Error node for any other failure.
 */
export async function describeSafely(
  kind: string,
  name: string,
  step: () => Promise<TraceNode>,
  isNotFound: (err: unknown) => boolean = () => false,
): Promise<TraceNode> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof NotFoundInAws || isNotFound(err)) return notFoundNode(kind, name);
    return errorNode(kind, name, err);
  }
}

/** A Kubernetes-style age (`45s`, `12m`, `3h`, `5d`) of `since` at `now`; `?` when unknown. Pure. */
export function formatAge(since: string | undefined, now: number): string {
  const t = since !== undefined ? Date.parse(since) : NaN;
  if (Number.isNaN(t)) return '?';
  const s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}
