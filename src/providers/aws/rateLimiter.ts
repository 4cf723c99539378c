import { sleep, type Clock } from '../../runtime/clock.ts';
import { TokenBucket } from '../../runtime/tokenBucket.ts';

/** Bounds of an {@link AdaptiveRateLimiter}. */
export interface AdaptiveRateOptions {
  /** Starting and maximum rate (requests/s). */
  readonly maxPerSecond: number;
  /** Never slower than this. */
  readonly minPerSecond: number;
  readonly burst: number;
  /** Multiplier applied on a throttle (0..1). Default 0.7. */
  readonly decrease?: number;
  /** Requests/s regained per successful call. Default maxPerSecond / 20. */
  readonly increase?: number;
  /**
   * Throttles within this long of the last decrease count as the same congestion event
   * (one decrease per window, as TCP reduces once per round trip). Default 1000 ms.
   */
  readonly decreaseWindowMs?: number;
}

/**
 * A client-side rate limit per AWS service that backs off when AWS throttles
 * (AIMD: a multiplicative decrease per congestion event, an additive increase
 * per success), so a throttled service never turns into a retry storm.
 * Throttles that arrive together (the calls already in flight when AWS started
 * refusing) count once: decreasing on each of them collapsed the rate to its
 * floor under random throttling and left it there for minutes.
 * `acquire()` waits (asynchronously) for a slot; it never fails.
 */
export class AdaptiveRateLimiter {
  private readonly bucket: TokenBucket;
  private o: AdaptiveRateOptions;
  private readonly clock: Clock;
  private lastDecrease = Number.NEGATIVE_INFINITY;

  constructor(clock: Clock, opts: AdaptiveRateOptions) {
    this.clock = clock;
    this.o = opts;
    this.bucket = new TokenBucket(clock, opts.maxPerSecond, opts.burst);
  }

  get ratePerSecond(): number {
    return this.bucket.ratePerSecond;
  }

  /** The rate this limiter starts at and returns to (requests/s). */
  get maxPerSecond(): number {
    return this.o.maxPerSecond;
  }

  /**
   * Sets the rate it returns to (a budget configured for the account): lowered, the current rate
   * drops to it at once; raised, the rate climbs to it with successes as after a throttle.
   * The floor stays at most the new maximum.
   */
  setMaxPerSecond(maxPerSecond: number): void {
    if (maxPerSecond === this.o.maxPerSecond) return;
    this.o = {
      ...this.o,
      maxPerSecond,
      minPerSecond: Math.min(this.o.minPerSecond, maxPerSecond),
      increase: this.o.increase ?? this.o.maxPerSecond / 20,
    };
    if (this.bucket.ratePerSecond > maxPerSecond) this.bucket.setRate(maxPerSecond);
  }

  /** Waits until a request may be sent. */
  async acquire(): Promise<void> {
    const wait = this.bucket.reserve();
    if (wait > 0) await sleep(this.clock, wait);
  }

  /** AWS throttled a request: slow down, once per decrease window. */
  onThrottle(): void {
    const now = this.clock.now();
    if (now - this.lastDecrease < (this.o.decreaseWindowMs ?? 1000)) return;
    this.lastDecrease = now;
    this.bucket.setRate(Math.max(this.o.minPerSecond, this.bucket.ratePerSecond * (this.o.decrease ?? 0.7)));
  }

  /** A request succeeded: speed back up a little. */
  onSuccess(): void {
    const step = this.o.increase ?? this.o.maxPerSecond / 20;
    if (this.bucket.ratePerSecond < this.o.maxPerSecond) {
      this.bucket.setRate(Math.min(this.o.maxPerSecond, this.bucket.ratePerSecond + step));
    }
  }
}

/** Default limits per service, below AWS's documented or observed steady rates. */
export const defaultServiceRates: Readonly<Record<string, AdaptiveRateOptions>> = {
  // Route 53 allows 10 requests/s per account since July 2026 (5 before); a TeamPolicy's
  // spec.aws.requestsPerSecond or --aws-requests-per-second sets another budget.
  route53: { maxPerSecond: 10, minPerSecond: 0.5, burst: 10 },
  elasticloadbalancing: { maxPerSecond: 10, minPerSecond: 1, burst: 20 },
  rds: { maxPerSecond: 10, minPerSecond: 1, burst: 20 },
  ec2: { maxPerSecond: 20, minPerSecond: 2, burst: 40 },
  sts: { maxPerSecond: 10, minPerSecond: 1, burst: 10 },
};
