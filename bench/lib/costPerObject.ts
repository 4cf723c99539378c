// What one object costs, derived from a scenario's measurements: how the
// create (or delete) time splits between the bench's own requests and the
// wait after them, and how the operator's memory grows with the number of
// objects across the sizes of one group. Pure.
import type { ScenarioResult } from '../report.ts';
import { leastSquares } from './stats.ts';

/** A create or delete phase's wall time split at the bench's last answered request. */
export interface RequestTiming {
  /** From the bench's first request sent to its last request answered, ms (rounded). */
  readonly requestsMs: number;
  /**
   * From the last request answered to the last object seen done (Ready, or
   * gone), ms (rounded); 0 if the watch saw the last one done first.
   */
  readonly afterLastRequestMs: number;
}

/**
 * Splits a phase at the last answered request. Timestamps are milliseconds
 * on one monotonic clock (`performance.now()`): `firstRequestAt` just before
 * the first request, `lastAnsweredAt` when the last request was answered,
 * `lastDoneAt` when the watch saw the last object done. Throws when the last
 * answer comes before the first request (the caller mixed up its clocks).
 */
export function requestTiming(t: {
  readonly firstRequestAt: number;
  readonly lastAnsweredAt: number;
  readonly lastDoneAt: number;
}): RequestTiming {
  if (t.lastAnsweredAt < t.firstRequestAt)
    throw new Error(
      `requestTiming: last answer (${t.lastAnsweredAt}) before the first request (${t.firstRequestAt})`,
    );
  return {
    requestsMs: Math.round(t.lastAnsweredAt - t.firstRequestAt),
    afterLastRequestMs: Math.round(Math.max(0, t.lastDoneAt - t.lastAnsweredAt)),
  };
}

/** A least-squares line of the operator's resident memory over scenario size, or why there is none. */
export interface RssSlope {
  /** Bytes of RSS per additional object (whole bytes); null when there is no slope (see `reason`). */
  readonly bytesPerObject: number | null;
  /** The line's RSS at zero objects, bytes (whole); null with `bytesPerObject`. */
  readonly interceptBytes: number | null;
  /** How well the line fits (1: exactly; always 1 with two sizes), 3 decimals; null without a slope. */
  readonly r2: number | null;
  /** Why there is no slope (e.g. one size only); null when there is one. */
  readonly reason: string | null;
}

/** One successful scenario's memory, as used for its group's slopes. */
export interface MemoryPoint {
  readonly size: number;
  /** Current RSS when the last object was seen Ready; null if not measured (older code, failure). */
  readonly rssAfterCreateBytes: number | null;
  /** Current RSS at the end of the no-op resync window; null if not measured. */
  readonly rssAfterResyncBytes: number | null;
  /** Peak RSS over the whole scenario. */
  readonly peakRssBytes: number;
}

/**
 * Memory per additional object in one scenario group of one run: the points
 * (successful scenarios, by ascending size) and a least-squares slope through
 * each of the three RSS readings.
 */
export interface GroupMemory {
  readonly group: string;
  readonly points: readonly MemoryPoint[];
  readonly afterCreate: RssSlope;
  readonly afterResync: RssSlope;
  readonly peak: RssSlope;
}

/** The least-squares slope of `bytes` over `size`, or a reason; points without a reading are left out. */
export function rssSlope(points: readonly { size: number; bytes: number | null }[]): RssSlope {
  const measured = points.flatMap((p) => (p.bytes === null ? [] : [{ x: p.size, y: p.bytes }]));
  const sizes = [...new Set(measured.map((p) => p.x))].sort((a, b) => a - b);
  const none = (reason: string): RssSlope => ({
    bytesPerObject: null,
    interceptBytes: null,
    r2: null,
    reason,
  });
  if (sizes.length === 0) return none('no successful scenario measured it');
  if (sizes.length === 1)
    return none(`one size only (${sizes[0]}): a slope needs two or more sizes of the group in one run`);
  const fit = leastSquares(measured);
  if ('reason' in fit) return none(fit.reason);
  return {
    bytesPerObject: Math.round(fit.slope),
    interceptBytes: Math.round(fit.intercept),
    r2: fit.r2 === null ? null : Math.round(fit.r2 * 1000) / 1000,
    reason: null,
  };
}

/**
 * Per group (in the order groups first appear in `results`), the memory of
 * its successful scenarios and the RSS slopes over their sizes: after create,
 * after the resync window, and peak. A group run at one size gets null slopes
 * with a reason. Failed scenarios are left out.
 */
export function memoryByGroup(results: readonly ScenarioResult[]): GroupMemory[] {
  const byGroup = new Map<string, MemoryPoint[]>();
  for (const r of results) {
    if (r.status !== 'ok' || r.operator === undefined) continue;
    const point: MemoryPoint = {
      size: r.size,
      rssAfterCreateBytes: r.operator.rssAfterCreateBytes ?? null,
      rssAfterResyncBytes: r.operator.rssAfterResyncBytes ?? null,
      peakRssBytes: r.operator.peakRssBytes,
    };
    byGroup.set(r.group, [...(byGroup.get(r.group) ?? []), point]);
  }
  return [...byGroup].map(([group, unsorted]) => {
    const points = [...unsorted].sort((a, b) => a.size - b.size);
    return {
      group,
      points,
      afterCreate: rssSlope(points.map((p) => ({ size: p.size, bytes: p.rssAfterCreateBytes }))),
      afterResync: rssSlope(points.map((p) => ({ size: p.size, bytes: p.rssAfterResyncBytes }))),
      peak: rssSlope(points.map((p) => ({ size: p.size, bytes: p.peakRssBytes }))),
    };
  });
}
