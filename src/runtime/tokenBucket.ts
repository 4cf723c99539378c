import type { Clock } from './clock.ts';

/**
 * A token bucket: `ratePerSecond` tokens accrue up to `burst`. `reserve()`
 * takes a token now or says how long until one is available (and books it),
 * so callers wait without polling. Not thread-safe by design (single event loop).
 */
export class TokenBucket {
  private tokens: number;
  private last: number;
  private rate: number;
  private readonly burst: number;
  private readonly clock: Clock;

  constructor(clock: Clock, ratePerSecond: number, burst: number) {
    this.clock = clock;
    this.rate = ratePerSecond;
    this.burst = burst;
    this.tokens = burst;
    this.last = clock.now();
  }

  /** Current refill rate (tokens per second). */
  get ratePerSecond(): number {
    return this.rate;
  }

  /** Changes the refill rate; tokens accrued so far are kept. */
  setRate(ratePerSecond: number): void {
    this.refill();
    this.rate = ratePerSecond;
  }

  /** Takes one token; returns 0 if it was there, else the wait in ms until the booked token is due. */
  reserve(): number {
    this.refill();
    this.tokens -= 1;
    if (this.tokens >= 0) return 0;
    return Math.ceil((-this.tokens / this.rate) * 1000);
  }

  /** Whether the bucket holds `burst` tokens again: then it behaves exactly like a new one. */
  isFull(): boolean {
    this.refill();
    return this.tokens >= this.burst;
  }

  private refill(): void {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
  }
}
