import { ConditionType } from './conditions.ts';
import type { ManagedObject } from '../apis/managed.ts';

/** Longest wait between two looks at a resource AWS is still working on (5 minutes). */
export const maxBusyPollMs = 300_000;

/**
 * How soon to look again at a resource AWS is still working on (an RDS
 * instance being created, a load balancer provisioning): `pollMs` at first,
 * then about a tenth of the time the object has been not Ready (its Ready
 * condition's lastTransitionTime), at most `maxMs`. Long waits are polled
 * less often, so a slow create costs tens of describes, not hundreds; the
 * delay it adds to noticing readiness is at most a tenth of the wait. Pure.
 */
export function busyPollInterval(
  mr: Pick<ManagedObject, 'status'>,
  pollMs: number,
  now: number,
  maxMs = maxBusyPollMs,
): number {
  const ready = mr.status?.conditions?.find((c) => c.type === ConditionType.Ready);
  const since = ready !== undefined && ready.status !== 'True' ? Date.parse(ready.lastTransitionTime) : NaN;
  const busyFor = Number.isNaN(since) ? 0 : Math.max(0, now - since);
  return Math.min(Math.max(maxMs, pollMs), Math.max(pollMs, Math.round(busyFor / 10)));
}
