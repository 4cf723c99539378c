import type { Writes } from './adapter.ts';

/**
 * Retry intent as types. An adapter or provider throws one of these (or any
 * other error, which is retried with backoff); the engine decides what to do
 * from the type alone.
 */

/**
 * The request cannot succeed as specified: no retry until the object's
 * `metadata.generation` changes (or the periodic resync tries again).
 * Surfaces as `Synced=False reason=Terminal` with the message.
 */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
}

/**
 * What the object asks is outside what its namespace may do (a TeamPolicy's guardrail, or no
 * policy serves the namespace): nothing is done in AWS. Surfaces as `Synced=False
 * reason=Forbidden` with the message (which names the policy and the field); retried at the
 * resync period, and at once when a policy or the namespace changes.
 */
export class ForbiddenError extends Error {
  override readonly name = 'ForbiddenError';
}

/** Not an error: come back after `delayMs` (e.g. AWS says "still creating"). */
export class RequeueAfter extends Error {
  override readonly name = 'RequeueAfter';
  readonly delayMs: number;
  /** Condition reason shown while waiting, e.g. WaitingForReference (default Waiting). */
  readonly reason: string | undefined;
  constructor(delayMs: number, message = `requeue after ${delayMs} ms`, reason?: string) {
    super(message);
    this.delayMs = delayMs;
    this.reason = reason;
  }
}

/**
 * The AWS resource exists but belongs to someone else (another CR, or nobody
 * and adoption was not asked for). Surfaces as `Synced=False reason=Conflict`;
 * retried only at the resync period.
 */
export class OwnershipConflictError extends Error {
  override readonly name = 'OwnershipConflictError';
}

/** A retryable failure with a reason for the Synced condition (e.g. Throttled). */
export class RetryableError extends Error {
  override readonly name = 'RetryableError';
  readonly reason: string;
  /** Kubernetes writes the engine makes even though the reconcile failed (e.g. a Warning Event). */
  readonly writes: Writes | undefined;
  constructor(reason: string, message: string, options?: ErrorOptions & { readonly writes?: Writes }) {
    super(message, options);
    this.reason = reason;
    this.writes = options?.writes;
  }
}

/**
 * The reason of a RetryableError for a request refused for its rate, before it was carried out:
 * a create that failed so certainly created nothing ({@link definitelyNotCreated}).
 */
export const throttledReason = 'Throttled';

/** What the engine does with a failed reconcile. */
export type RetryDecision =
  | { readonly kind: 'terminal'; readonly message: string }
  | { readonly kind: 'conflict'; readonly message: string }
  | { readonly kind: 'forbidden'; readonly message: string }
  | { readonly kind: 'requeueAfter'; readonly delayMs: number; readonly message: string }
  /** A Kubernetes 409 (stale resourceVersion): requeue quietly, nothing is wrong. */
  | { readonly kind: 'staleObject' }
  | { readonly kind: 'retry'; readonly reason: string; readonly message: string };

/** Maps any thrown value to the engine's decision. Pure. */
export function decideRetry(err: unknown): RetryDecision {
  if (err instanceof TerminalError) return { kind: 'terminal', message: err.message };
  if (err instanceof OwnershipConflictError) return { kind: 'conflict', message: err.message };
  if (err instanceof ForbiddenError) return { kind: 'forbidden', message: err.message };
  if (err instanceof RequeueAfter)
    return { kind: 'requeueAfter', delayMs: err.delayMs, message: err.message };
  if (isKubeConflict(err)) return { kind: 'staleObject' };
  if (err instanceof RetryableError) return { kind: 'retry', reason: err.reason, message: err.message };
  return {
    kind: 'retry',
    reason: 'ReconcileError',
    message: err instanceof Error ? err.message : String(err),
  };
}

/** An HTTP status carried by a Kubernetes API error. */
export interface HasStatus {
  readonly statusCode: number;
}

function hasStatus(err: unknown): err is HasStatus {
  return (
    typeof err === 'object' && err !== null && typeof (err as Partial<HasStatus>).statusCode === 'number'
  );
}

/** True for a 409 from the apiserver (optimistic-concurrency conflict or AlreadyExists). */
export function isKubeConflict(err: unknown): boolean {
  return hasStatus(err) && err.statusCode === 409;
}

/** True for a 404 from the apiserver. */
export function isKubeNotFound(err: unknown): boolean {
  return hasStatus(err) && err.statusCode === 404;
}

/** `what: cause` — wraps an error with the step that failed, keeping its type's retry intent. */
export function wrap(what: string, err: unknown): Error {
  const message = `${what}: ${err instanceof Error ? err.message : String(err)}`;
  if (err instanceof TerminalError) return new TerminalError(message, { cause: err });
  if (err instanceof OwnershipConflictError) return new OwnershipConflictError(message, { cause: err });
  // A refusal already names the policy and the field; the step adds nothing a user needs.
  if (err instanceof ForbiddenError) return err;
  if (err instanceof RequeueAfter) return new RequeueAfter(err.delayMs, message, err.reason);
  if (err instanceof RetryableError)
    return new RetryableError(err.reason, message, {
      cause: err,
      ...(err.writes !== undefined ? { writes: err.writes } : {}),
    });
  if (hasStatus(err))
    return Object.assign(new Error(message, { cause: err }), { statusCode: err.statusCode });
  return new Error(message, { cause: err });
}

/**
 * True when a failed create certainly created nothing: AWS rejected it
 * (terminal, conflict, throttled), or the adapter asked to wait before
 * creating (RequeueAfter, e.g. for a reference). Network errors and 5xx are
 * ambiguous: the request may have been carried out. Pure.
 */
export function definitelyNotCreated(err: unknown): boolean {
  if (
    err instanceof TerminalError ||
    err instanceof OwnershipConflictError ||
    err instanceof ForbiddenError ||
    err instanceof RequeueAfter
  )
    return true;
  return err instanceof RetryableError && err.reason === throttledReason;
}
