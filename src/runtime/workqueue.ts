import { backoffDelay, defaultBackoff, type BackoffPolicy } from './backoff.ts';
import type { Clock, TimerHandle } from './clock.ts';
import { TokenBucket } from './tokenBucket.ts';

/** Observations a work queue reports; wired to Prometheus by metrics.ts. All optional. */
export interface QueueMetricsSink {
  depth?(n: number): void;
  added?(): void;
  /** Seconds a key waited between becoming ready and being handed to a worker. */
  queueLatency?(seconds: number): void;
  /** Seconds a worker held a key. */
  workDuration?(seconds: number): void;
  retried?(): void;
}

/** Options for {@link WorkQueue}. */
export interface WorkQueueOptions {
  readonly clock: Clock;
  readonly backoff?: BackoffPolicy;
  /** Overall limit on rate-limited re-adds (all keys together), as client-go's bucket limiter. */
  readonly overallRatePerSecond?: number;
  readonly overallBurst?: number;
  readonly random?: () => number;
  readonly metrics?: QueueMetricsSink;
}

/**
 * A deduplicating, delaying, rate-limited queue of string keys, with
 * client-go's semantics:
 * - a key is queued at most once, however often it is added;
 * - a key handed out by `get()` is not handed out again until `done(key)`;
 *   adds meanwhile mark it dirty and it is requeued on `done`;
 * - `addAfter` keeps the earliest pending wake-up per key;
 * - `addRateLimited` backs off per key exponentially with jitter and a cap,
 *   and all keys together through a token bucket; `forget` resets a key.
 * `get()` blocks (asynchronously) until a key is ready or the queue shuts down.
 */
export class WorkQueue {
  private readonly clock: Clock;
  private readonly backoff: BackoffPolicy;
  private readonly random: () => number;
  private readonly metrics: QueueMetricsSink;
  private readonly overall: TokenBucket;
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly readySince = new Map<string, number>();
  private readonly startedAt = new Map<string, number>();
  private readonly waiting = new Map<string, { at: number; timer: TimerHandle }>();
  private readonly failures = new Map<string, number>();
  private readonly getters: ((key: string | undefined) => void)[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private shuttingDown = false;

  constructor(opts: WorkQueueOptions) {
    this.clock = opts.clock;
    this.backoff = opts.backoff ?? defaultBackoff;
    this.random = opts.random ?? Math.random;
    this.metrics = opts.metrics ?? {};
    this.overall = new TokenBucket(opts.clock, opts.overallRatePerSecond ?? 10, opts.overallBurst ?? 100);
  }

  /** Number of keys ready and waiting for a worker. */
  get length(): number {
    return this.queue.length;
  }

  /** Number of keys waiting on a timer (addAfter / addRateLimited). */
  get delayed(): number {
    return this.waiting.size;
  }

  /** Marks `key` for processing now. Idempotent while the key is queued. */
  add(key: string): void {
    if (this.shuttingDown) return;
    this.metrics.added?.();
    if (this.dirty.has(key)) return;
    this.dirty.add(key);
    this.readySince.set(key, this.clock.now());
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /** Adds `key` after `delayMs`; an earlier pending wake-up for the key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = this.clock.now() + delayMs;
    const existing = this.waiting.get(key);
    if (existing !== undefined) {
      if (existing.at <= at) return;
      existing.timer.cancel();
    }
    const timer = this.clock.setTimer(delayMs, () => {
      this.waiting.delete(key);
      this.add(key);
    });
    this.waiting.set(key, { at, timer });
  }

  /** Re-adds `key` after its next backoff delay (or the overall limiter's, if longer). */
  addRateLimited(key: string): number {
    const n = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, n);
    this.metrics.retried?.();
    const delay = Math.max(backoffDelay(this.backoff, n, this.random), this.overall.reserve());
    this.addAfter(key, delay);
    return delay;
  }

  /** How many times `key` has been rate-limited since its last `forget`. */
  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Resets `key`'s backoff (after a successful reconcile). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** Waits for the next ready key; `undefined` once the queue has shut down. */
  get(): Promise<string | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) return Promise.resolve(this.handOut(key));
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolveGet) => this.getters.push(resolveGet));
  }

  /** Marks `key` finished; requeues it if it was added while being processed. */
  done(key: string): void {
    const started = this.startedAt.get(key);
    if (started !== undefined) this.metrics.workDuration?.((this.clock.now() - started) / 1000);
    this.startedAt.delete(key);
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.shuttingDown) this.push(key);
    if (this.processing.size === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Stops handing out keys (pending `get()`s resolve `undefined`) and cancels timers. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const { timer } of this.waiting.values()) timer.cancel();
    this.waiting.clear();
    for (const g of this.getters.splice(0)) g(undefined);
  }

  /** Resolves once no key is being processed (after `shutDown`, the in-flight work has finished). */
  drained(): Promise<void> {
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolveIdle) => this.idleWaiters.push(resolveIdle));
  }

  private push(key: string): void {
    const getter = this.getters.shift();
    if (getter !== undefined) {
      getter(this.handOut(key));
      return;
    }
    this.queue.push(key);
    this.metrics.depth?.(this.queue.length);
  }

  private handOut(key: string): string {
    this.dirty.delete(key);
    this.processing.add(key);
    const now = this.clock.now();
    const since = this.readySince.get(key);
    if (since !== undefined) this.metrics.queueLatency?.((now - since) / 1000);
    this.readySince.delete(key);
    this.startedAt.set(key, now);
    this.metrics.depth?.(this.queue.length);
    return key;
  }
}
