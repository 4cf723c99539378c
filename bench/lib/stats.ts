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

/** A straight line fitted through points: y ≈ intercept + slope · x. */
export interface LineFit {
  readonly slope: number;
  readonly intercept: number;
  /**
   * Coefficient of determination (1: every point on the line); null when
   * every y is the same (nothing to explain). Exactly 1 for two points.
   */
  readonly r2: number | null;
}

/**
 * Ordinary least-squares line through `points`, or the reason there is
 * none: fewer than two points, or fewer than two different x (a slope needs
 * two sizes). Unrounded. Throws on a non-finite coordinate.
 */
export function leastSquares(points: readonly { x: number; y: number }[]): LineFit | { reason: string } {
  for (const p of points)
    if (!Number.isFinite(p.x) || !Number.isFinite(p.y))
      throw new Error(`leastSquares: non-finite point (${p.x}, ${p.y})`);
  if (points.length === 0) return { reason: 'no points' };
  if (points.length === 1) return { reason: `one point only (x = ${points[0]?.x})` };
  const n = points.length;
  const meanX = points.reduce((s, p) => s + p.x, 0) / n;
  const meanY = points.reduce((s, p) => s + p.y, 0) / n;
  let sxx = 0;
  let sxy = 0;
  let syy = 0;
  for (const p of points) {
    sxx += (p.x - meanX) ** 2;
    sxy += (p.x - meanX) * (p.y - meanY);
    syy += (p.y - meanY) ** 2;
  }
  if (sxx === 0) return { reason: `every point has the same x (${meanX})` };
  const slope = sxy / sxx;
  // r² = explained / total variation; for a least-squares line that is sxy² / (sxx · syy).
  // (At most 1 in exact arithmetic; floating point can overshoot by an ulp.)
  const r2 = syy === 0 ? null : Math.min(1, (sxy * sxy) / (sxx * syy));
  return { slope, intercept: meanY - slope * meanX, r2 };
}
