// Summary statistics for benchmark reports. Pure functions, no I/O.

/** Distribution of one measurement over a scenario's resources (milliseconds for latencies). */
export interface Distribution {
  readonly count: number;
  readonly p50: number;
  readonly p95: number;
  readonly max: number;
}

/**
 * The `p`-th percentile (0 < p ≤ 100) of `values` by the nearest-rank method:
 * the smallest value with at least p % of the values at or below it, so the
 * result is always one of the measured values. Throws on an empty list or a
 * p outside (0, 100]. Does not modify `values`.
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new Error('percentile of no values');
  if (!(p > 0 && p <= 100)) throw new Error(`percentile: p must be in (0, 100], got ${p}`);
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[rank - 1] as number;
}

/** p50, p95 and max of `values`; all zero with count 0 for an empty list. */
export function distribution(values: readonly number[]): Distribution {
  if (values.length === 0) return { count: 0, p50: 0, p95: 0, max: 0 };
  return {
    count: values.length,
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    max: percentile(values, 100),
  };
}

/** `count / per`, rounded to 3 decimals; 0 when `per` is 0 (nothing to divide among). */
export function perUnit(count: number, per: number): number {
  if (per === 0) return 0;
  return Math.round((count / per) * 1000) / 1000;
}

/** `b / a` rounded to 2 decimals, or null when either side is missing or a is 0. */
export function ratio(a: number | undefined, b: number | undefined): number | null {
  if (a === undefined || b === undefined || a === 0) return null;
  return Math.round((b / a) * 100) / 100;
}

/**
 * The difference `after - before` per key (keys missing from `before` count
 * from 0), keeping only keys whose count grew. For counters such as calls
 * by operation.
 */
export function counterDelta(
  before: Readonly<Record<string, number>>,
  after: Readonly<Record<string, number>>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(after)) {
    const d = value - (before[key] ?? 0);
    if (d > 0) out[key] = d;
  }
  return out;
}

/** The sum of a record's values. */
export function total(counts: Readonly<Record<string, number>>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}
