// A watch of one kind (every namespace) that records, per object, when the bench created it, when a
// predicate first held for it and when it disappeared, on the millisecond clock: the readiness of
// objects whose "done" is not Ready=True (an HTTPRoute's Accepted at its generation, a
// MyIngressGroup listing all its members), and the current object for waits on a later state.
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { Informer, WatchEventType } from '../../src/runtime/kube/informer.ts';
import { objectKey, type KubeObject, type ResourceType } from '../../src/apis/meta.ts';
import { realClock } from '../../src/runtime/clock.ts';
import { waitFor } from '../../dev/wait.ts';

interface Times {
  created?: number;
  done?: number;
  gone?: number;
}

/** Objects of one kind, keyed `namespace/name` (`name` when cluster-scoped). Call `start()` first. */
export class WatchedObjects {
  private readonly informer: Informer<KubeObject>;
  private readonly times = new Map<string, Times>();
  /** Handlers of {@link waitUntil} in progress. */
  private readonly waiters = new Set<(obj: KubeObject) => void>();

  private readonly done: (obj: KubeObject) => boolean;

  constructor(client: KubeClient, type: ResourceType, done: (obj: KubeObject) => boolean) {
    this.done = done;
    this.informer = new Informer<KubeObject>({
      client,
      type,
      namespace: undefined,
      clock: realClock,
      logger: pino({ level: 'silent' }),
      pageSize: 1000,
    });
    this.informer.on((event, obj) => {
      const now = performance.now();
      const t = this.entry(objectKey(obj.metadata));
      if (event === WatchEventType.Deleted) {
        t.gone ??= now;
        return;
      }
      if (this.done(obj)) t.done ??= now;
      for (const w of this.waiters) w(obj);
    });
  }

  async start(): Promise<void> {
    this.informer.start();
    await this.informer.waitForSync();
  }

  async stop(): Promise<void> {
    await this.informer.stop();
  }

  /** Records that the bench is about to create `obj`. */
  markCreated(obj: KubeObject, at = performance.now()): void {
    this.entry(objectKey(obj.metadata)).created = at;
  }

  /** The current object, if the watch has it. */
  get(obj: KubeObject): KubeObject | undefined {
    return this.informer.get(objectKey(obj.metadata));
  }

  /** How many of `objs` were seen done. */
  doneCount(objs: readonly KubeObject[]): number {
    return objs.filter((o) => this.times.get(objectKey(o.metadata))?.done !== undefined).length;
  }

  /** Milliseconds from create to first seen done, of every marked object seen done. */
  doneLatencies(): number[] {
    const out: number[] = [];
    for (const t of this.times.values())
      if (t.created !== undefined && t.done !== undefined)
        out.push(Math.round((t.done - t.created) * 10) / 10);
    return out;
  }

  /** Waits until every one of `objs` was seen done; returns when the last one was. */
  async waitAllDone(objs: readonly KubeObject[], timeoutMs: number, what: string): Promise<number> {
    const keys = objs.map((o) => objectKey(o.metadata));
    try {
      return await waitFor(
        () => {
          let last = 0;
          for (const k of keys) {
            const d = this.times.get(k)?.done;
            if (d === undefined) return undefined;
            last = Math.max(last, d);
          }
          return last;
        },
        { timeoutMs, intervalMs: 50, description: `${objs.length} ${what}` },
      );
    } catch (err) {
      throw new Error(
        `${err instanceof Error ? err.message : String(err)}; ${this.doneCount(objs)} of ${objs.length} were at the deadline`,
        { cause: err },
      );
    }
  }

  /**
   * Waits until `ok` holds for the current `obj` (not the first-seen record: a later state, such as
   * Ready at a new generation); returns when the watch delivered that state.
   */
  async waitUntil(
    obj: KubeObject,
    ok: (o: KubeObject) => boolean,
    timeoutMs: number,
    what: string,
  ): Promise<number> {
    let seen: number | undefined;
    const key = objectKey(obj.metadata);
    const waiter = (o: KubeObject): void => {
      if (seen === undefined && objectKey(o.metadata) === key && ok(o)) seen = performance.now();
    };
    this.waiters.add(waiter);
    try {
      return await waitFor(
        () => {
          if (seen === undefined) {
            const now = this.informer.get(key);
            if (now !== undefined && ok(now)) seen = performance.now();
          }
          return seen;
        },
        { timeoutMs, intervalMs: 50, description: what },
      );
    } finally {
      this.waiters.delete(waiter);
    }
  }

  /** Waits until none of `objs` is in the watch; returns when the last one went. */
  async waitAllGone(objs: readonly KubeObject[], timeoutMs: number, what: string): Promise<number> {
    const keys = objs.map((o) => objectKey(o.metadata));
    return waitFor(
      () => {
        let last = 0;
        for (const k of keys) {
          if (this.informer.get(k) !== undefined) return undefined;
          last = Math.max(last, this.times.get(k)?.gone ?? 0);
        }
        return last;
      },
      { timeoutMs, intervalMs: 50, description: `${objs.length} ${what} to be deleted` },
    );
  }

  /** Those of `objs` the watch still has. */
  present(objs: readonly KubeObject[]): KubeObject[] {
    return objs.filter((o) => this.informer.get(objectKey(o.metadata)) !== undefined);
  }

  private entry(key: string): Times {
    let t = this.times.get(key);
    if (t === undefined) {
      t = {};
      this.times.set(key, t);
    }
    return t;
  }
}
