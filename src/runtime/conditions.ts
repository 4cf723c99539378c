import type { Condition, ConditionStatus } from '../apis/managed.ts';

/** Condition types every kind reports. */
export const ConditionType = {
  /** The AWS resource exists and is usable. */
  Ready: 'Ready',
  /** The last reconcile succeeded. */
  Synced: 'Synced',
} as const;

/** Documented condition reasons. Kinds may add their own (e.g. WaitingForReference). */
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
  Throttled: 'Throttled',
  /** AWS failed in a way worth retrying (5xx, network, an unknown error). */
  AwsError: 'AWSError',
  /** AWS refused the operator's credentials (fixed outside the spec; retried). */
  AwsCredentials: 'AWSCredentials',
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

/** Kubernetes caps condition messages at 32 KiB; keep them readable well below that. */
function truncate(message: string): string {
  return message.length > 2000 ? `${message.slice(0, 1997)}...` : message;
}
