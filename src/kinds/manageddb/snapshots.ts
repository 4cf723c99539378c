// Scheduled snapshots of a ManagedDB: which run is due, which old ones to
// prune, and what status reports — computed from the listing, no AWS calls.
import type { DBSnapshot } from '@aws-sdk/client-rds';
import { nextRun, parseCron, type CronSchedule } from '../../runtime/cron.ts';
import { TerminalError } from '../../runtime/errors.ts';
import type { ManagedDB, ManagedDBStatus } from './api.ts';

/** What the schedule asks for now. */
export interface SnapshotPlan {
  /** Status fields: lastSnapshot, nextSnapshot. */
  readonly status: Pick<ManagedDBStatus, 'lastSnapshot' | 'nextSnapshot'>;
  /** The scheduled snapshot to take now (named after the most recent due run), if any. */
  readonly dueSnapshot?: string;
  /** Scheduled snapshots beyond keepSnapshots, oldest first. */
  readonly prune: string[];
  /** Set when the newest scheduled snapshot failed and no later run is due yet. */
  readonly failure?: string;
}

/** The name prefix of an instance's scheduled snapshots. Pure. */
export function scheduledPrefix(instanceId: string): string {
  return `${instanceId}-sched-`;
}

/** The parsed `spec.backup.snapshotSchedule`; undefined without one; TerminalError for an unreadable one. Pure. */
export function snapshotSchedule(mr: ManagedDB): CronSchedule | undefined {
  const expr = mr.spec.backup?.snapshotSchedule;
  if (expr === undefined) return undefined;
  try {
    return parseCron(expr);
  } catch (err) {
    throw new TerminalError(
      `spec.backup.snapshotSchedule: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/**
 * The snapshot schedule's state from the instance's manual snapshots at
 * `now`: the newest scheduled snapshot and when the next is due, the
 * snapshot to take (named after the most recent due run, so a retried run or
 * a long outage takes one, not many) and the ones to prune. Pure.
 */
export function planSnapshots(
  mr: ManagedDB,
  cron: CronSchedule,
  instanceId: string,
  manual: readonly DBSnapshot[],
  now: number,
): SnapshotPlan {
  const prefix = scheduledPrefix(instanceId);
  const snaps = manual
    .filter((s) => (s.DBSnapshotIdentifier ?? '').startsWith(prefix))
    .sort((a, b) => (a.DBSnapshotIdentifier ?? '').localeCompare(b.DBSnapshotIdentifier ?? ''));
  const last = snaps.at(-1);
  const lastRun =
    last !== undefined ? runTime(last.DBSnapshotIdentifier?.slice(prefix.length) ?? '') : undefined;
  const base = lastRun ?? Date.parse(mr.metadata.creationTimestamp ?? new Date(now).toISOString());
  let due: number | undefined;
  for (
    let t = nextRun(cron, base), i = 0;
    t !== undefined && t <= now && i < 100_000;
    t = nextRun(cron, t), i++
  )
    due = t;
  const next = nextRun(cron, due ?? Math.max(base, now - 60_000));
  const status: Pick<ManagedDBStatus, 'lastSnapshot' | 'nextSnapshot'> = {};
  if (last !== undefined) {
    status.lastSnapshot = {
      name: last.DBSnapshotIdentifier,
      state: last.Status,
      ...(lastRun !== undefined ? { time: new Date(lastRun).toISOString() } : {}),
    };
  }
  if (next !== undefined) status.nextSnapshot = new Date(next).toISOString();
  const keep = mr.spec.backup?.keepSnapshots ?? 7;
  const prune = snaps.slice(0, Math.max(0, snaps.length - keep)).map((s) => s.DBSnapshotIdentifier ?? '');
  const failure =
    last?.Status === 'failed' && due === undefined
      ? `scheduled snapshot ${last.DBSnapshotIdentifier ?? ''} failed; the next is due ${next !== undefined ? new Date(next).toISOString() : 'never'}`
      : undefined;
  return {
    status,
    prune,
    ...(due !== undefined ? { dueSnapshot: `${prefix}${runStamp(due)}` } : {}),
    ...(failure !== undefined ? { failure } : {}),
  };
}

/** `YYYYMMDDHHmm` of a run time (UTC). Pure. */
function runStamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 12);
}

/** The run time a stamp stands for, or undefined. Pure. */
function runTime(stamp: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(stamp);
  return m === null
    ? undefined
    : Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]));
}
