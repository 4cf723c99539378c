import { splitKey } from '../apis/meta.ts';
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

/** Below this many retry buckets the work queue does not sweep them. */
const minBucketSweep = 64;

/** Options for {@link WorkQueue}. */
export interface WorkQueueOptions {
  readonly clock: Clock;
  readonly backoff?: BackoffPolicy;
  /**
   * Limit on rate-limited re-adds of one group's keys together (client-go's
   * bucket limiter, one bucket per group): tokens per second, default 10.
   * A group that exhausts its bucket delays only its own retries.
   */
  readonly groupRatePerSecond?: number;
  /** Tokens a group's retry bucket holds when full (its burst of retries), default 100. */
  readonly groupBurst?: number;
  readonly random?: () => number;
  readonly metrics?: QueueMetricsSink;
  /**
   * The group a key belongs to; `get()` takes the groups with ready keys in
   * turn, one key each, FIFO within a group, and each group has its own retry
   * bucket (`groupRatePerSecond`, `groupBurst`). Must be pure and cheap: the same
   * key always maps to the same group, and it is called on every push. Default:
   * the key's namespace (before the first `/`; `""` for a cluster-scoped key).
   */
  readonly groupOf?: (key: string) => string;
}

/** The namespace part of a queue key; `""` for a cluster-scoped key. */
function namespaceOfKey(key: string): string {
  return splitKey(key).namespace ?? '';
}

/** A FIFO with O(1) amortised push and shift (a head index instead of `Array.shift`). */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head++];
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}

/**
 * A deduplicating, delaying, rate-limited queue of string keys, with
 * client-go's semantics, fair between groups of keys (namespaces by default):
 * - a key is queued at most once, however often it is added;
 * - a key handed out by `get()` is not handed out again until `done(key)`;
 *   adds meanwhile mark it dirty and it is requeued on `done`;
 * - `addAfter` keeps the earliest pending wake-up per key;
 * - `addRateLimited` backs off per key exponentially with jitter and a cap,
 *   and a group's keys together through the group's token bucket (a
 *   namespace whose objects keep failing slows only its own retries);
 *   `forget` resets a key.
 * - ready keys wait per group (`groupOf`), and `get()` takes the groups that
 *   have ready keys in turn (round robin, in the order they became ready),
 *   FIFO within a group; a group that becomes ready joins at the back, so its
 *   first key waits for at most one key of each other group, not for the
 *   5,000 another namespace queued before it.
 * `get()` blocks (asynchronously) until a key is ready or the queue shuts down.
 */
export class WorkQueue {
  private readonly clock: Clock;
  private readonly backoff: BackoffPolicy;
  private readonly random: () => number;
  private readonly metrics: QueueMetricsSink;
  private readonly groupRate: number;
  private readonly groupBurst: number;
  /**
   * Retry buckets of the groups that used one lately. A full bucket behaves
   * exactly like a new one, so dropping it changes no delay; the map is swept
   * of full buckets whenever it reaches `sweepAt` (then twice what is left),
   * which keeps it within twice the groups whose buckets were short at the
   * last sweep (they retried within burst/rate seconds before it), at
   * amortised O(1) per retry. Dropping a bucket on
   * `forget` instead would hand a group that alternates failure and success a
   * fresh burst each time, and need a count of failing keys per group.
   */
  private readonly buckets = new Map<string, TokenBucket>();
  private sweepAt = minBucketSweep;
  private readonly groupOf: (key: string) => string;
  /** Ready keys per group; a group is here only while it has ready keys. */
  private readonly ready = new Map<string, Fifo<string>>();
  /** The groups in `ready`, each once, in the order `get()` takes them. */
  private readonly rotation = new Fifo<string>();
  private readyCount = 0;
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
    this.groupOf = opts.groupOf ?? namespaceOfKey;
    this.groupRate = opts.groupRatePerSecond ?? 10;
    this.groupBurst = opts.groupBurst ?? 100;
  }

  /** Number of keys ready and waiting for a worker. */
  get length(): number {
    return this.readyCount;
  }

  /** Number of groups holding a retry bucket; a full one is released when the buckets are next swept. */
  get retryBuckets(): number {
    return this.buckets.size;
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

  /** Re-adds `key` after its next backoff delay (or its group's bucket's, if longer); returns the delay in ms. */
  addRateLimited(key: string): number {
    const n = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, n);
    this.metrics.retried?.();
    const delay = Math.max(
      backoffDelay(this.backoff, n, this.random),
      this.bucketOf(this.groupOf(key)).reserve(),
    );
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
    const key = this.takeReady();
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
    const group = this.groupOf(key);
    let keys = this.ready.get(group);
    if (keys === undefined) {
      keys = new Fifo<string>();
      this.ready.set(group, keys);
      this.rotation.push(group);
    }
    keys.push(key);
    this.readyCount++;
    this.metrics.depth?.(this.readyCount);
  }

  /** The next ready key: the first of the group whose turn it is; the group goes to the back. */
  private takeReady(): string | undefined {
    const group = this.rotation.shift();
    if (group === undefined) return undefined;
    const keys = this.ready.get(group);
    const key = keys?.shift();
    if (keys === undefined || key === undefined)
      throw new Error(`work queue: group ${group} in rotation without keys`);
    if (keys.size > 0) this.rotation.push(group);
    else this.ready.delete(group);
    this.readyCount--;
    return key;
  }

  private bucketOf(group: string): TokenBucket {
    let bucket = this.buckets.get(group);
    if (bucket === undefined) {
      if (this.buckets.size >= this.sweepAt) {
        for (const [g, b] of this.buckets) if (b.isFull()) this.buckets.delete(g);
        this.sweepAt = Math.max(minBucketSweep, 2 * this.buckets.size);
      }
      bucket = new TokenBucket(this.clock, this.groupRate, this.groupBurst);
      this.buckets.set(group, bucket);
    }
    return bucket;
  }

  private handOut(key: string): string {
    this.dirty.delete(key);
    this.processing.add(key);
    const now = this.clock.now();
    const since = this.readySince.get(key);
    if (since !== undefined) this.metrics.queueLatency?.((now - since) / 1000);
    this.readySince.delete(key);
    this.startedAt.set(key, now);
    this.metrics.depth?.(this.readyCount);
    return key;
  }
}
