import type { Condition, ConditionStatus } from '../apis/managed.ts';
import { throttledReason } from './errors.ts';

/** Condition types every kind reports. */
export const ConditionType = {
  /** The AWS resource exists and is usable. */
  Ready: 'Ready',
  /** The last reconcile succeeded. */
  Synced: 'Synced',
} as const;

/** Documented condition reasons. Kinds and providers add their own (e.g. WaitingForReference, AWSError). */
export const Reason = {
  Available: 'Available',
  Creating: 'Creating',
  Deleting: 'Deleting',
  Updating: 'Updating',
  Unavailable: 'Unavailable',
  NotFound: 'NotFound',
  Orphaned: 'Orphaned',
  ReconcileSuccess: 'ReconcileSuccess',
  ReconcileError: 'ReconcileError',
  Terminal: 'Terminal',
  Conflict: 'Conflict',
  /** Outside what the namespace may do (a TeamPolicy guardrail, or no policy serves it). */
  Forbidden: 'Forbidden',
  /** A call was refused for its rate (it was not carried out); retried with backoff. */
  Throttled: throttledReason,
  Waiting: 'Waiting',
} as const;

/** A condition without its bookkeeping fields, as code states it. */
export interface ConditionUpdate {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason: string;
  readonly message?: string;
}

/**
 * Returns `conditions` with `update` applied: lastTransitionTime changes only
 * when the status changes, so a repeated identical update is a no-op. Does
 * not mutate its input. Pure given `now`.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  update: ConditionUpdate,
  generation: number | undefined,
  now: Date,
): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === update.type);
  const prev = i >= 0 ? list[i] : undefined;
  const next: Condition = {
    type: update.type,
    status: update.status,
    reason: update.reason,
    message: truncate(update.message ?? ''),
    lastTransitionTime:
      prev !== undefined && prev.status === update.status
        ? prev.lastTransitionTime
        : now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}

/** The condition of a type, if present. Pure. */
export function getCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/**
 * True when `next` says something `previous` did not: another status,
 * reason or message (timestamps and observedGeneration aside), or one of
 * them is missing. Pure.
 */
export function conditionChanged(previous: Condition | undefined, next: Condition | undefined): boolean {
  if (previous === undefined || next === undefined) return previous !== next;
  return (
    previous.status !== next.status || previous.reason !== next.reason || previous.message !== next.message
  );
}

/** Kubernetes caps condition messages at 32 KiB; keep them readable well below that. */
function truncate(message: string): string {
  return message.length > 2000 ? `${message.slice(0, 1997)}...` : message;
}

/** What the engine learnt of the AWS resource before a reconcile failed. */
export type FailedPassObservation =
  /** The failure came before AWS was observed (connect, observe itself). */
  | { readonly kind: 'none' }
  /** Observed: the resource does not exist (a create was due, or it was deleted). */
  | { readonly kind: 'absent' }
  /**
   * Observed: it exists; `matches` when it matched the spec (no delta other
   * than requested operations) or an update made it match, with its
   * readiness as observed.
   */
  | {
      readonly kind: 'present';
      readonly matches: boolean;
      readonly ready: { readonly ready: boolean; readonly reason: string; readonly message?: string };
    }
  /** The object is being deleted: never Ready. */
  | { readonly kind: 'deleting' };

/**
 * The Ready condition after a reconcile that failed with `failure` (its
 * Synced reason and message), so that Ready never outlives the truth:
 * Ready=True stays only while the resource exists and matched the spec as
 * last observed — observed in this pass, or, when the failure came before
 * observing, by a Ready=True already judged against this generation. Every
 * other case, including a stale progress reason such as Creating, becomes
 * Ready=False with the failure's reason and message. Returns undefined when
 * Ready should stay as it is. Pure.
 */
export function readyAfterFailure(
  previous: Condition | undefined,
  generation: number | undefined,
  observed: FailedPassObservation,
  failure: { readonly reason: string; readonly message: string },
): ConditionUpdate | undefined {
  const notReady: ConditionUpdate = {
    type: ConditionType.Ready,
    status: 'False',
    reason: failure.reason,
    message: failure.message,
  };
  switch (observed.kind) {
    case 'present':
      if (!observed.matches) return notReady;
      return {
        type: ConditionType.Ready,
        status: observed.ready.ready ? 'True' : 'False',
        reason: observed.ready.reason,
        ...(observed.ready.message !== undefined ? { message: observed.ready.message } : {}),
      };
    case 'none':
      return previous?.status === 'True' && previous.observedGeneration === generation ? undefined : notReady;
    case 'absent':
    case 'deleting':
      return notReady;
  }
}
