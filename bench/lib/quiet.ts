// The quiet namespace's record in dns-teams-flood and dns-teams-bigtxt: how soon it was Ready
// after its create while another namespace's burst was being worked off. Pure.
import type { QuietResult } from '../report.ts';

/** Issue 28's goal: the quiet record is Ready within 5 s of its create. Reported, never asserted. */
export const quietGoalMs = 5000;

/** What was observed of the quiet record and the burst (performance.now() milliseconds). */
export interface QuietObservation {
  /** `namespace/name` of the quiet record. */
  readonly object: string;
  /** When the bench sent its first bulk create. */
  readonly firstBulkAt: number;
  /** Bulk creates answered before the quiet create was sent. */
  readonly createdAfterBulkCreates: number;
  /** Just before the quiet create request. */
  readonly createdAt: number;
  /** When the watch first saw it Ready; undefined if never. */
  readonly readyAt: number | undefined;
  /** When each bulk record was first seen Ready (undefined: never). */
  readonly bulkReadyAt: readonly (number | undefined)[];
}

/** The quiet record's latency and how many bulk records were Ready before it (ms to 0.1). */
export function quietResult(o: QuietObservation, goalMs = quietGoalMs): QuietResult {
  const readyMs = o.readyAt === undefined ? null : Math.round((o.readyAt - o.createdAt) * 10) / 10;
  const readyAt = o.readyAt;
  return {
    object: o.object,
    bulk: o.bulkReadyAt.length,
    createdAfterBulkCreates: o.createdAfterBulkCreates,
    createdAfterFirstBulkMs: Math.round(o.createdAt - o.firstBulkAt),
    readyMs,
    bulkReadyBefore: o.bulkReadyAt.filter((t) => t !== undefined && (readyAt === undefined || t < readyAt))
      .length,
    goalMs,
    withinGoal: readyMs !== null && readyMs <= goalMs,
  };
}
