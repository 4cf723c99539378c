// Per-object timing of Skylift objects: when the bench created (or deleted)
// each one, and when a watch first saw it Ready=True (or gone). A watch, not
// creationTimestamp, because that has one-second resolution.
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { Informer, WatchEventType } from '../../src/runtime/kube/informer.ts';
import type { KubeObject, ResourceType } from '../../src/apis/meta.ts';
import { realClock } from '../../src/runtime/clock.ts';
import { AbortWait, waitFor } from '../../dev/wait.ts';

/** A Skylift object as far as its conditions go. */
interface ConditionedObject extends KubeObject {
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

/** The Ready and Synced conditions of an object, if any. Pure. */
export function conditionsOf(obj: KubeObject): {
  ready: boolean;
  terminal: { reason: string; message: string } | undefined;
} {
  const conditions = (obj as ConditionedObject).status?.conditions ?? [];
  const ready = conditions.some((c) => c.type === 'Ready' && c.status === 'True');
  const synced = conditions.find((c) => c.type === 'Synced');
  const terminal =
    synced?.status === 'False' && synced.reason === 'Terminal'
      ? { reason: synced.reason, message: synced.message ?? '' }
      : undefined;
  return { ready, terminal };
}

/**
 * How a tracker of `namespace` (undefined: all namespaces) names `obj`: its
 * name, or `namespace/name` when the tracker watches every namespace. Pure.
 */
export function trackerId(obj: KubeObject, namespace: string | undefined): string {
  return namespace === undefined ? `${obj.metadata.namespace ?? ''}/${obj.metadata.name}` : obj.metadata.name;
}

/** Millisecond timestamps of one object (performance.now() clock). */
interface Times {
  created?: number;
  ready?: number;
  deleteRequested?: number;
  gone?: number;
}

/**
 * Watches one kind in one namespace (or in all) and records, per object, when
 * it was first seen Ready=True and when it disappeared, against the times the
 * bench marked it created and deleted. Objects are named by their name when
 * the tracker watches one namespace, by `namespace/name` when it watches all
 * ({@link trackerId}). Timestamps are `performance.now()` milliseconds
 * (monotonic). Call `start()` before creating anything.
 */
export class ReadinessTracker {
  private readonly informer: Informer<KubeObject>;
  private readonly times = new Map<string, Times>();
  private readonly terminal = new Map<string, string>();
  private readonly namespace: string | undefined;

  constructor(client: KubeClient, type: ResourceType, namespace: string | undefined) {
    this.namespace = namespace;
    this.informer = new Informer<KubeObject>({
      client,
      type,
      namespace,
      clock: realClock,
      logger: pino({ level: 'silent' }),
      pageSize: 1000,
    });
    this.informer.on((event, obj) => {
      const now = performance.now();
      const id = this.idOf(obj);
      const t = this.entry(id);
      if (event === WatchEventType.Deleted) {
        t.gone ??= now;
        return;
      }
      const { ready, terminal } = conditionsOf(obj);
      if (ready) t.ready ??= now;
      if (terminal !== undefined) this.terminal.set(id, terminal.message);
      else this.terminal.delete(id);
    });
  }

  /** Starts the watch and waits for its first list. */
  async start(): Promise<void> {
    this.informer.start();
    await this.informer.waitForSync();
  }

  /** Stops the watch. Idempotent. */
  async stop(): Promise<void> {
    await this.informer.stop();
  }

  /** Records that the bench is about to create `name` (call just before the request). */
  markCreated(name: string, at = performance.now()): void {
    this.entry(name).created = at;
  }

  /** Records that the bench is about to delete `name`. */
  markDeleteRequested(name: string, at = performance.now()): void {
    this.entry(name).deleteRequested = at;
  }

  /** Milliseconds from create to first Ready=True, for every marked object that became Ready. */
  readyLatencies(): number[] {
    return this.latencies((t) =>
      t.created !== undefined && t.ready !== undefined ? t.ready - t.created : undefined,
    );
  }

  /** Milliseconds from delete request to disappearance, for every object that is gone. */
  deleteLatencies(): number[] {
    return this.latencies((t) =>
      t.deleteRequested !== undefined && t.gone !== undefined ? t.gone - t.deleteRequested : undefined,
    );
  }

  /** How many of `names` have been seen Ready. */
  readyCount(names: readonly string[]): number {
    return names.filter((n) => this.times.get(n)?.ready !== undefined).length;
  }

  /** When `name` was first seen Ready (performance.now() ms), if it was. */
  readyAt(name: string): number | undefined {
    return this.times.get(name)?.ready;
  }

  /** The latest Ready time among `names`, if all are Ready. */
  lastReadyAt(names: readonly string[]): number | undefined {
    let last = 0;
    for (const n of names) {
      const r = this.times.get(n)?.ready;
      if (r === undefined) return undefined;
      last = Math.max(last, r);
    }
    return last;
  }

  /**
   * Waits until every object in `names` has been seen Ready; fails at once
   * when one reports Synced=False reason Terminal (bad input never converges),
   * and at the deadline with how many were Ready when the wait began and at the deadline.
   */
  async waitAllReady(names: readonly string[], timeoutMs: number): Promise<number> {
    try {
      return await waitFor(
        () => {
          const [name, message] = this.terminal.entries().next().value ?? [];
          if (name !== undefined) throw new AbortWait(`${name} is Synced=False Terminal: ${message ?? ''}`);
          return this.lastReadyAt(names);
        },
        {
          timeoutMs,
          intervalMs: 50,
          description: `${names.length} objects to become Ready (${this.readyCount(names)} were when the wait began)`,
        },
      );
    } catch (err) {
      if (err instanceof AbortWait || !(err instanceof Error)) throw err;
      throw new Error(
        `${err.message}; ${this.readyCount(names)} of ${names.length} were Ready at the deadline`,
        {
          cause: err,
        },
      );
    }
  }

  /** Waits until every object in `names` is gone from the watch; returns when the last one went. */
  async waitAllGone(names: readonly string[], timeoutMs: number): Promise<number> {
    return waitFor(
      () => {
        let last = 0;
        for (const n of names) {
          if (this.informer.get(this.key(n)) !== undefined) return undefined;
          last = Math.max(last, this.times.get(n)?.gone ?? 0);
        }
        return last;
      },
      { timeoutMs, intervalMs: 50, description: `${names.length} objects to be deleted` },
    );
  }

  /** Those of `ids` the watch still has (not deleted yet). */
  present(ids: readonly string[]): string[] {
    return ids.filter((id) => this.informer.get(this.key(id)) !== undefined);
  }

  /** How this tracker names `obj`: see {@link trackerId}. */
  idOf(obj: KubeObject): string {
    return trackerId(obj, this.namespace);
  }

  private key(id: string): string {
    return this.namespace === undefined ? id : `${this.namespace}/${id}`;
  }

  private entry(name: string): Times {
    let t = this.times.get(name);
    if (t === undefined) {
      t = {};
      this.times.set(name, t);
    }
    return t;
  }

  private latencies(pick: (t: Times) => number | undefined): number[] {
    const out: number[] = [];
    for (const t of this.times.values()) {
      const v = pick(t);
      if (v !== undefined) out.push(Math.round(v * 10) / 10);
    }
    return out;
  }
}
