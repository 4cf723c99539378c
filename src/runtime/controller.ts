import type { Logger } from 'pino';
import type { Clock } from './clock.ts';
import type { Connector } from './adapter.ts';
import { Engine } from './engine.ts';
import type { EventRecorder } from './events.ts';
import type { KubeClient } from './kube/client.ts';
import { Informer, WatchEventType } from './kube/informer.ts';
import { objectKey, type KubeObject, type ResourceType } from '../apis/meta.ts';
import { requestAnnotation, type ManagedObject } from '../apis/managed.ts';
import type { Metrics } from './metrics.ts';
import { defaultControllerSettings, type ControllerSettings } from './settings.ts';
import { WorkQueue } from './workqueue.ts';
import { deepEqual } from './mergePatch.ts';
import { getCondition, ConditionType } from './conditions.ts';
import { ReferenceSet, type Reference, type ReferenceReader } from './references.ts';

/**
 * Another resource type whose changes should reconcile primary objects, by a function of each
 * change. A kind whose objects name the others declares {@link Reference}s instead (indexed, typed);
 * a watch suits a relation no key expresses.
 */
export interface SecondaryWatch<T extends ManagedObject = ManagedObject> {
  readonly type: ResourceType;
  /** Only objects with these labels are watched and cached (e.g. the Pods that carry a readiness gate). */
  readonly labelSelector?: string;
  /**
   * Primary keys (`namespace/name`) affected by a change of `obj`; `primaries`
   * lists the cached primary objects (e.g. to find those referring to `obj`).
   * Pure, fast.
   */
  map(obj: KubeObject, primaries: () => readonly T[]): string[];
}

/**
 * What the manager runs: one kind's control loop, whatever its object type.
 * `start` may block until the first list; `stop` is idempotent.
 */
export interface RunnableController {
  readonly type: ResourceType;
  readonly synced: boolean;
  start(): Promise<void>;
  /**
   * Stops within `deadlineMs`; `writeHeld: false` (after the lease was lost) leaves statuses held
   * in memory unwritten. Idempotent.
   */
  stop(deadlineMs: number, opts?: { readonly writeHeld?: boolean }): Promise<void>;
}

/** Options for {@link Controller}. */
export interface ControllerOptions<
  T extends ManagedObject,
  D = undefined,
  F extends string = string,
> extends Partial<ControllerSettings> {
  readonly type: ResourceType;
  /**
   * Binds the kind's adapter to each object; or, for a kind with `references`, builds that
   * connector from the read-only view of this controller's caches (called once, in the constructor).
   */
  readonly connector: Connector<T, D, F> | ((refs: ReferenceReader<T>) => Connector<T, D, F>);
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly events: EventRecorder;
  readonly pollMs?: number;
  readonly createGraceMs?: number;
  readonly watchdogMs?: number;
  readonly watches?: readonly SecondaryWatch<T>[];
  /**
   * What this kind's objects refer to (see references.ts): each is watched, indexed by referrer,
   * and read through the connector's {@link ReferenceReader}; a change of a referenced object
   * reconciles exactly the objects that refer to it.
   */
  readonly references?: readonly Reference<T, KubeObject>[];
  /**
   * Told when what a namespace may do changed (a policy created, changed or deleted; a namespace's
   * labels): the controller reconciles the objects of those namespaces ('all': every object).
   */
  readonly tenancyChanges?: {
    onChange(cb: (namespaces: ReadonlySet<string> | 'all') => void): void;
  };
  readonly random?: () => number;
  /** The actions the kind accepts in the request annotation (see EngineOptions.requestActions). */
  readonly requestActions?: readonly string[];
}

/**
 * One kind's control loop: informers (primary and secondary, per namespace
 * when scoped) → a deduplicating work queue → N workers running the engine.
 * Primary changes are enqueued only when they matter (spec generation,
 * deletion, a request, or a status the engine did not write), so the
 * engine's own status writes do not loop back.
 */
export class Controller<
  T extends ManagedObject,
  D = undefined,
  F extends string = string,
> implements RunnableController {
  readonly type: ResourceType;
  private readonly o: ControllerOptions<T, D, F>;
  private readonly queue: WorkQueue;
  private readonly engine: Engine<T, D, F>;
  private readonly primary: Informer<T>[] = [];
  private readonly secondary: Informer<KubeObject>[] = [];
  private readonly secondaryByType = new Map<ResourceType, Informer<KubeObject>[]>();
  private readonly refs: ReferenceSet<T>;
  private workers: Promise<void>[] = [];

  constructor(opts: ControllerOptions<T, D, F>) {
    this.o = opts;
    this.type = opts.type;
    this.refs = new ReferenceSet<T>(opts.references ?? [], () => this.list());
    const name = opts.type.kind.toLowerCase();
    this.queue = new WorkQueue({
      clock: opts.clock,
      metrics: opts.metrics.queueSink(name),
      ...(opts.random !== undefined ? { random: opts.random } : {}),
    });
    this.engine = new Engine<T, D, F>({
      type: opts.type,
      connector: typeof opts.connector === 'function' ? opts.connector(this.refs) : opts.connector,
      client: opts.client,
      clock: opts.clock,
      logger: opts.logger,
      metrics: opts.metrics,
      events: opts.events,
      clusterId: opts.clusterId ?? defaultControllerSettings.clusterId,
      ...(opts.resyncPeriodMs !== undefined ? { resyncPeriodMs: opts.resyncPeriodMs } : {}),
      ...(opts.pollMs !== undefined ? { pollMs: opts.pollMs } : {}),
      ...(opts.createGraceMs !== undefined ? { createGraceMs: opts.createGraceMs } : {}),
      ...(opts.random !== undefined ? { random: opts.random } : {}),
      ...(opts.requestActions !== undefined ? { requestActions: opts.requestActions } : {}),
    });
    const scopes =
      opts.namespaces !== undefined && opts.namespaces.length > 0 ? opts.namespaces : [undefined];
    // A cluster-scoped type is watched once, whatever the namespaces (a MyIngressGroup, or the
    // groups a MyIngress names); a namespaced one per watched namespace.
    const watchedIn = (t: ResourceType, i: number): boolean => t.namespaced || i === 0;
    for (const [i, namespace] of scopes.entries()) {
      if (watchedIn(opts.type, i)) this.primary.push(this.primaryInformer(namespace));
      for (const w of opts.watches ?? []) {
        const sec = this.informer<KubeObject>(w.type, namespace, w.labelSelector);
        sec.on((_type, obj) => {
          for (const key of w.map(obj, () => this.primary.flatMap((p) => p.list()))) this.queue.add(key);
        });
        this.secondary.push(sec);
        this.secondaryByType.set(w.type, [...(this.secondaryByType.get(w.type) ?? []), sec]);
      }
      for (const r of this.refs.refs) {
        if (!watchedIn(r.type, i)) continue;
        const sec = this.informer<KubeObject>(
          r.type,
          r.type.namespaced ? namespace : undefined,
          r.labelSelector,
        );
        this.refs.attach(r, sec);
        sec.on((_type, obj, old) => {
          const keys = this.refs.referrers(r, obj, old);
          // Targets that follow this object (a group's Services follow its members) are filed
          // again first, and the primaries that refer to it now are reconciled too.
          this.refs.refile(r, keys, (k) => this.get(k));
          for (const key of new Set([...keys, ...this.refs.referrers(r, obj, old)])) this.queue.add(key);
        });
        this.secondary.push(sec);
      }
    }
    opts.tenancyChanges?.onChange((namespaces) => {
      for (const obj of this.primary.flatMap((p) => p.list())) {
        if (namespaces === 'all' || namespaces.has(obj.metadata.namespace ?? '')) {
          this.queue.add(objectKey(obj.metadata));
        }
      }
    });
    opts.metrics.managedSources.push(() => this.readiness());
    opts.metrics.notReadySources.push(() => ({
      kind: opts.type.kind,
      seconds: oldestNotReadySeconds(
        this.primary.flatMap((i) => i.list()),
        opts.clock.now(),
      ),
    }));
  }

  /**
   * The informer of primary objects in `namespace` (all of them for a cluster-scoped kind), whose
   * changes are filed in the reference indexes and enqueued when they matter.
   */
  private primaryInformer(namespace: string | undefined): Informer<T> {
    const inf = this.informer<T>(this.o.type, this.o.type.namespaced ? namespace : undefined);
    inf.on((type, obj, old) => {
      // Before anything else: what a primary refers to is filed whether or not the change is
      // reconciled (the index must match the cache when a referenced object changes next).
      this.refs.primaryChanged(type, obj);
      if (type === WatchEventType.Deleted) {
        this.engine.forget(obj);
        return;
      }
      if (
        type === WatchEventType.Modified &&
        old !== undefined &&
        !significant(old, obj) &&
        !this.statusWrittenByOthers(old, obj)
      )
        return;
      this.queue.add(objectKey(obj.metadata));
    });
    return inf;
  }

  /**
   * True when the status changed to one the engine did not write: someone with status rights (or
   * another process) wrote it, and what it claims (a forged Ready=True) is put right now rather
   * than at the next resync. The engine's own status writes are not (they would loop back).
   */
  private statusWrittenByOthers(old: T, obj: T): boolean {
    if (deepEqual(old.status, obj.status)) return false;
    return !this.engine.wroteStatus(obj);
  }

  /** Every cached primary object. */
  list(): T[] {
    return this.primary.flatMap((p) => p.list());
  }

  /** The cached primary object for a key. */
  get(key: string): T | undefined {
    for (const inf of this.primary) {
      const obj = inf.get(key);
      if (obj !== undefined) return obj;
    }
    return undefined;
  }

  /** A cached secondary object by type and `namespace/name`; undefined until its informer has listed. */
  getSecondary(type: ResourceType, key: string): KubeObject | undefined {
    for (const inf of this.secondaryByType.get(type) ?? []) {
      const obj = inf.get(key);
      if (obj !== undefined) return obj;
    }
    return undefined;
  }

  /**
   * True once every informer of the secondary `type` has listed (in every
   * watched namespace): only then does an object missing from its cache not
   * exist. False for a type this controller does not watch.
   */
  secondarySynced(type: ResourceType): boolean {
    const informers = this.secondaryByType.get(type) ?? [];
    return informers.length > 0 && informers.every((i) => i.hasSynced);
  }

  /** Cached objects of a secondary type (for adapters that read Services, Secrets, …). */
  secondaryObjects(type: ResourceType): KubeObject[] {
    return (this.secondaryByType.get(type) ?? []).flatMap((s) => s.list());
  }

  /**
   * Starts informers, waits for the primary ones' first list, then starts the
   * workers. Secondary informers sync in the background (a referenced kind
   * whose CRD is not installed yet must not stop this one); their events
   * enqueue the primaries that care.
   */
  async start(): Promise<void> {
    for (const inf of [...this.primary, ...this.secondary]) inf.start();
    await Promise.all(this.primary.map((i) => i.waitForSync()));
    const n = this.o.workers ?? defaultControllerSettings.workers;
    this.workers = Array.from({ length: n }, () => this.work());
  }

  /** True once every primary informer has listed. */
  get synced(): boolean {
    return this.primary.every((i) => i.hasSynced);
  }

  /**
   * Stops taking work, lets in-flight reconciles finish for up to `deadlineMs`,
   * writes the statuses held back for new objects (while the deadline lasts;
   * not with `writeHeld: false`, after the lease was lost), then stops
   * watching. Idempotent.
   */
  async stop(deadlineMs: number, opts: { readonly writeHeld?: boolean } = {}): Promise<void> {
    const until = this.o.clock.now() + deadlineMs;
    this.queue.shutDown();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.workers),
      new Promise<void>((r) => {
        timer = setTimeout(r, deadlineMs);
      }),
    ]);
    clearTimeout(timer);
    // New objects whose first status was held back (engine.firstStatusHold) get it written now,
    // within what is left of the deadline, so what their passes learnt outlives the process.
    // Not after the lease was lost (writeHeld false): another replica may lead and write by now.
    if (opts.writeHeld !== false)
      await this.engine.writeHeld(
        this.primary.flatMap((i) => i.list()),
        until,
      );
    await Promise.all([...this.primary, ...this.secondary].map((i) => i.stop()));
  }

  private informer<O extends KubeObject>(
    type: ResourceType,
    namespace: string | undefined,
    labelSelector?: string,
  ): Informer<O> {
    return new Informer<O>({
      client: this.o.client,
      type,
      clock: this.o.clock,
      logger: this.o.logger,
      namespace,
      labelSelector: type === this.o.type ? this.o.labelSelector : labelSelector,
      ...(this.o.watchdogMs !== undefined ? { watchdogMs: this.o.watchdogMs } : {}),
      onRestart: (reason) => this.o.metrics.watchRestarts.inc({ resource: type.plural, reason }),
    });
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        const obj = this.get(key);
        if (obj === undefined) {
          this.queue.forget(key);
          continue;
        }
        const outcome = await this.engine.reconcile(structuredClone(obj));
        if (outcome.kind === 'backoff') {
          this.queue.addRateLimited(key);
        } else {
          this.queue.forget(key);
          if (outcome.requeueAfterMs !== undefined) this.queue.addAfter(key, outcome.requeueAfterMs);
        }
      } catch (err) {
        // The engine never throws; this guards the worker loop itself.
        this.o.logger.error({ err: err instanceof Error ? err.message : String(err), key }, 'worker error');
        this.queue.addRateLimited(key);
      } finally {
        this.queue.done(key);
      }
    }
  }

  private readiness(): { kind: string; ready: string; count: number }[] {
    const counts = new Map<string, number>();
    for (const inf of this.primary) {
      for (const obj of inf.list()) {
        const ready = getCondition(obj.status?.conditions, ConditionType.Ready)?.status ?? 'Unknown';
        counts.set(ready, (counts.get(ready) ?? 0) + 1);
      }
    }
    return [...counts].map(([ready, count]) => ({ kind: this.o.type.kind, ready, count }));
  }
}

/** A primary change worth reconciling: the spec (generation), deletion state or an operation request changed. Pure. */
export function significant(old: KubeObject, obj: KubeObject): boolean {
  return (
    old.metadata.generation !== obj.metadata.generation ||
    old.metadata.deletionTimestamp !== obj.metadata.deletionTimestamp ||
    old.metadata.annotations?.[requestAnnotation] !== obj.metadata.annotations?.[requestAnnotation]
  );
}

/**
 * How long, in seconds, the object that has waited longest has not been
 * Ready: since its Ready condition last changed to something other than
 * True, or since its creation when it has no Ready condition yet. 0 when
 * every object is Ready (or there are none), so an alert sees a value, not
 * an absent series. Pure.
 */
export function oldestNotReadySeconds(objects: readonly ManagedObject[], nowMs: number): number {
  let oldest = nowMs;
  for (const obj of objects) {
    const ready = getCondition(obj.status?.conditions, ConditionType.Ready);
    if (ready?.status === 'True') continue;
    const since = Date.parse(ready?.lastTransitionTime ?? obj.metadata.creationTimestamp ?? '');
    if (Number.isFinite(since)) oldest = Math.min(oldest, since);
  }
  return Math.max(0, (nowMs - oldest) / 1000);
}
