/** Parameters of exponential backoff. */
export interface BackoffPolicy {
  readonly baseMs: number;
  readonly capMs: number;
  /** Fraction of the delay randomised, 0..1 (0.2 → delay × [0.8, 1.2]). */
  readonly jitter: number;
}

/** controller-runtime's defaults are 5 ms → 1000 s; AWS-backed reconciles start slower. */
export const defaultBackoff: BackoffPolicy = { baseMs: 500, capMs: 300_000, jitter: 0.2 };

/**
 * Delay before retry number `failures` (1 = first retry): base × 2^(failures-1),
 * capped, then jittered within ±jitter (never above the cap). Pure given `random`.
 */
export function backoffDelay(
  policy: BackoffPolicy,
  failures: number,
  random: () => number = Math.random,
): number {
  const exp = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, failures - 1));
  const factor = 1 - policy.jitter + 2 * policy.jitter * random();
  return Math.round(Math.min(policy.capMs, exp * factor));
}

/** Adds ±`fraction` random spread to a period (e.g. resync), so objects do not resync in lockstep. Pure given `random`. */
export function jittered(ms: number, fraction: number, random: () => number = Math.random): number {
  return Math.round(ms * (1 - fraction + 2 * fraction * random()));
}
