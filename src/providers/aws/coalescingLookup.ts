import type { Clock } from '../../runtime/clock.ts';

interface Waiter<V> {
  resolve(value: V | undefined): void;
  reject(err: unknown): void;
}

/** How a {@link CoalescingLookup} asks AWS. */
export interface CoalescingLookupOptions<V> {
  readonly clock: Clock;
  /** How long a lookup waits for others to join its call. */
  readonly windowMs: number;
  /** Keys one call may carry (the API's limit). */
  readonly maxPerCall: number;
  /**
   * One call for these keys: what exists, by key; a key missing from the map
   * does not exist. May throw the SDK's error.
   */
  readonly fetch: (keys: readonly string[]) => Promise<ReadonlyMap<string, V>>;
  /** True when the error says a key does not exist (AWS fails the whole call for one missing key). */
  readonly isNotFound: (err: unknown) => boolean;
  /** The typed error a waiter gets when the call fails otherwise. */
  readonly toError: (err: unknown) => Error;
}

/**
 * Coalesces lookups by key (an ARN): lookups within a short window go out
 * together, up to `maxPerCall` keys per call, and lookups that arrive while
 * a call is under way (waiting for the client-side rate limiter, or for AWS)
 * go together in the next one — so when the service's rate limit is what
 * objects queue for, they share calls instead of queueing one each. A key that does not exist
 * resolves `undefined`; when AWS refuses a whole call because one key is
 * missing, the keys are asked for one by one. Read-only; never retries on
 * its own (the client's retry policy applies to each call).
 */
export class CoalescingLookup<V> {
  private readonly o: CoalescingLookupOptions<V>;
  private pending = new Map<string, Waiter<V>[]>();
  private scheduled = false;
  private inFlight = false;

  constructor(options: CoalescingLookupOptions<V>) {
    this.o = options;
  }

  /** The value for this key, or undefined when it does not exist; rejects with `toError`'s error. */
  get(key: string): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      const list = this.pending.get(key) ?? [];
      list.push({ resolve, reject });
      this.pending.set(key, list);
      this.schedule();
    });
  }

  /** Flushes after the window, unless a flush is due or under way (which will pick the pending keys up). */
  private schedule(): void {
    if (this.scheduled || this.inFlight) return;
    this.scheduled = true;
    this.o.clock.setTimer(this.o.windowMs, () => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.inFlight = true;
    try {
      const batch = this.pending;
      this.pending = new Map();
      const keys = [...batch.keys()];
      for (let i = 0; i < keys.length; i += this.o.maxPerCall) {
        await this.lookupChunk(keys.slice(i, i + this.o.maxPerCall), batch);
      }
    } finally {
      this.inFlight = false;
      if (this.pending.size > 0) this.schedule();
    }
  }

  private async lookupChunk(chunk: string[], batch: Map<string, Waiter<V>[]>): Promise<void> {
    try {
      const found = await this.o.fetch(chunk);
      for (const key of chunk) for (const w of batch.get(key) ?? []) w.resolve(found.get(key));
    } catch (err) {
      if (this.o.isNotFound(err) && chunk.length > 1) {
        for (const key of chunk) await this.lookupChunk([key], batch);
        return;
      }
      const typed = this.o.isNotFound(err) ? undefined : this.o.toError(err);
      for (const key of chunk) {
        for (const w of batch.get(key) ?? []) {
          if (typed === undefined) w.resolve(undefined);
          else w.reject(typed);
        }
      }
    }
  }
}
