import { sleep, type Clock } from '../../runtime/clock.ts';
import { TokenBucket } from '../../runtime/tokenBucket.ts';

/** Bounds of an {@link AdaptiveRateLimiter}. */
export interface AdaptiveRateOptions {
  /** Starting and maximum rate (requests/s). */
  readonly maxPerSecond: number;
  /** Never slower than this. */
  readonly minPerSecond: number;
  readonly burst: number;
  /** Multiplier applied on each throttle (0..1). Default 0.5. */
  readonly decrease?: number;
  /** Requests/s regained per successful call. Default maxPerSecond / 100. */
  readonly increase?: number;
}

/**
 * A client-side rate limit per AWS service that backs off when AWS throttles
 * (AIMD: halve on throttle, creep back up on success), so a throttled
 * service never turns into a retry storm. `acquire()` waits (asynchronously)
 * for a slot; it never fails.
 */
export class AdaptiveRateLimiter {
  private readonly bucket: TokenBucket;
  private readonly o: AdaptiveRateOptions;
  private readonly clock: Clock;

  constructor(clock: Clock, opts: AdaptiveRateOptions) {
    this.clock = clock;
    this.o = opts;
    this.bucket = new TokenBucket(clock, opts.maxPerSecond, opts.burst);
  }

  get ratePerSecond(): number {
    return this.bucket.ratePerSecond;
  }

  /** Waits until a request may be sent. */
  async acquire(): Promise<void> {
    const wait = this.bucket.reserve();
    if (wait > 0) await sleep(this.clock, wait);
  }

  /** AWS throttled a request: slow down. */
  onThrottle(): void {
    this.bucket.setRate(Math.max(this.o.minPerSecond, this.bucket.ratePerSecond * (this.o.decrease ?? 0.5)));
  }

  /** A request succeeded: speed back up a little. */
  onSuccess(): void {
    const step = this.o.increase ?? this.o.maxPerSecond / 100;
    if (this.bucket.ratePerSecond < this.o.maxPerSecond) {
      this.bucket.setRate(Math.min(this.o.maxPerSecond, this.bucket.ratePerSecond + step));
    }
  }
}

/** Default limits per service, below AWS's documented or observed steady rates. */
export const defaultServiceRates: Readonly<Record<string, AdaptiveRateOptions>> = {
  // Route 53 allows 5 requests/s per account.
  route53: { maxPerSecond: 5, minPerSecond: 0.5, burst: 5 },
  elasticloadbalancing: { maxPerSecond: 10, minPerSecond: 1, burst: 20 },
  rds: { maxPerSecond: 10, minPerSecond: 1, burst: 20 },
  ec2: { maxPerSecond: 20, minPerSecond: 2, burst: 40 },
  sts: { maxPerSecond: 10, minPerSecond: 1, burst: 10 },
};
