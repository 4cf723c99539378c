import type { Logger } from 'pino';
import { backoffDelay, type BackoffPolicy } from '../backoff.ts';
import { isAborted, sleep, type Clock, type TimerHandle } from '../clock.ts';
import { KubeApiError, type KubeClient } from './client.ts';
import { objectKey, resourcePath, type KubeObject, type ResourceType } from '../../apis/meta.ts';

/** What happened to a cached object. */
export const WatchEventType = {
  Added: 'ADDED',
  Modified: 'MODIFIED',
  Deleted: 'DELETED',
} as const;
export type WatchEventType = (typeof WatchEventType)[keyof typeof WatchEventType];

/** Called synchronously for every cache change. Must not block: enqueue keys only. */
export type InformerHandler<T extends KubeObject> = (
  type: WatchEventType,
  obj: T,
  old: T | undefined,
) => void;

/** Options for {@link Informer}. */
export interface InformerOptions {
  readonly client: KubeClient;
  readonly type: ResourceType;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Watch one namespace only (default: all). */
  readonly namespace?: string | undefined;
  readonly labelSelector?: string | undefined;
  /**
   * A field selector, e.g. `metadata.name=skylift-leader`: one named object,
   * which RBAC then authorizes against `resourceNames`.
   */
  readonly fieldSelector?: string | undefined;
  /** Restart a watch that delivered nothing (not even a bookmark) for this long. Default 150 s. */
  readonly watchdogMs?: number;
  /** Backoff between failed list/watch attempts. */
  readonly backoff?: BackoffPolicy;
  /** Page size for lists. */
  readonly pageSize?: number;
  /** Told about restarts, for metrics. */
  readonly onRestart?: (reason: 'error' | 'gone' | 'stalled') => void;
}

interface WatchLine {
  type: WatchEventType | 'BOOKMARK' | 'ERROR';
  object: KubeObject & { code?: number; reason?: string; message?: string };
}

class GoneError extends Error {}
class StalledError extends Error {}

/**
 * A list+watch cache of one resource type, scoped to a namespace and label
 * selector if given. Unlike client-node's informer it never gives up: any
 * error restarts the watch with backoff, 410 Gone relists, and a watchdog
 * restarts a watch that went silent (half-open connections). `managedFields`
 * are dropped before caching. Handlers run synchronously and must only
 * enqueue work; a relist emits MODIFIED only for objects that changed and
 * DELETED for objects that vanished while the watch was down.
 */
export class Informer<T extends KubeObject> {
  private readonly opts: InformerOptions;
  private readonly cache = new Map<string, T>();
  private readonly handlers: InformerHandler<T>[] = [];
  private readonly abort = new AbortController();
  private resourceVersion: string | undefined;
  private synced = false;
  private readonly syncWaiters: (() => void)[] = [];
  private loop: Promise<void> | undefined;
  private streamAbort: AbortController | undefined;

  constructor(opts: InformerOptions) {
    this.opts = opts;
  }

  /** Adds a handler; call before `start()`. */
  on(handler: InformerHandler<T>): void {
    this.handlers.push(handler);
  }

  /** Starts listing and watching in the background. Idempotent. */
  start(): void {
    this.loop ??= this.run();
  }

  /** Stops the watch; the cache stays readable. Idempotent. */
  async stop(): Promise<void> {
    this.abort.abort();
    this.streamAbort?.abort();
    await this.loop;
  }

  /** True once the first list has been cached. */
  get hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the first list has been cached. */
  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolveSync) => this.syncWaiters.push(resolveSync));
  }

  /** The cached object for `namespace/name`, if any. Treat as read-only. */
  get(key: string): T | undefined {
    return this.cache.get(key);
  }

  /** Every cached object. Treat as read-only. */
  list(): T[] {
    return [...this.cache.values()];
  }

  private async run(): Promise<void> {
    let failures = 0;
    let needList = true;
    const log = this.opts.logger;
    while (!this.abort.signal.aborted) {
      try {
        if (needList) {
          await this.relist();
          needList = false;
        }
        await this.watch();
        failures = 0;
      } catch (err) {
        if (isAborted(this.abort.signal)) break;
        if (err instanceof GoneError) {
          log.debug({ resource: this.opts.type.plural }, 'watch expired (410), relisting');
          this.opts.onRestart?.('gone');
          needList = true;
          continue;
        }
        failures++;
        const stalled = err instanceof StalledError;
        this.opts.onRestart?.(stalled ? 'stalled' : 'error');
        const delay = stalled
          ? 0
          : backoffDelay(this.opts.backoff ?? { baseMs: 200, capMs: 30_000, jitter: 0.2 }, failures);
        log.warn(
          {
            resource: this.opts.type.plural,
            err: err instanceof Error ? err.message : String(err),
            delayMs: delay,
          },
          stalled
            ? 'watch stalled, restarting'
            : err instanceof KubeApiError && err.statusCode === 404
              ? `the apiserver does not serve ${this.opts.type.plural} (is its CRD installed?); retrying`
              : 'list/watch failed, retrying',
        );
        // After an error the cache may have missed events the server no longer has: relist.
        needList = !stalled;
        await sleep(this.opts.clock, delay, this.abort.signal);
      }
    }
  }

  private query(): Record<string, string | number | undefined> {
    return { labelSelector: this.opts.labelSelector, fieldSelector: this.opts.fieldSelector };
  }

  private path(): string {
    return resourcePath(this.opts.type, { namespace: this.opts.namespace });
  }

  private async relist(): Promise<void> {
    const fresh = new Map<string, T>();
    let cont: string | undefined;
    let rv: string | undefined;
    do {
      const page = await this.opts.client.get<{
        metadata: { resourceVersion?: string; continue?: string };
        items: T[];
      }>(
        this.path(),
        { ...this.query(), limit: this.opts.pageSize ?? 500, continue: cont },
        this.abort.signal,
      );
      for (const item of page.items) {
        const obj = this.prepare(item);
        fresh.set(objectKey(obj.metadata), obj);
      }
      cont =
        page.metadata.continue !== undefined && page.metadata.continue !== ''
          ? page.metadata.continue
          : undefined;
      rv = page.metadata.resourceVersion;
    } while (cont !== undefined);

    const old = new Map(this.cache);
    this.cache.clear();
    for (const [key, obj] of fresh) this.cache.set(key, obj);
    for (const [key, obj] of fresh) {
      const prev = old.get(key);
      if (prev === undefined) this.emit(WatchEventType.Added, obj, undefined);
      else if (prev.metadata.resourceVersion !== obj.metadata.resourceVersion)
        this.emit(WatchEventType.Modified, obj, prev);
    }
    for (const [key, prev] of old) if (!fresh.has(key)) this.emit(WatchEventType.Deleted, prev, undefined);
    this.resourceVersion = rv;
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  private async watch(): Promise<void> {
    // Stopped during the list: an abort listener added now would never fire, and the watch would
    // run until its server-side timeout.
    if (this.abort.signal.aborted) return;
    const stream = new AbortController();
    this.streamAbort = stream;
    const onStop = (): void => stream.abort();
    this.abort.signal.addEventListener('abort', onStop, { once: true });
    const watch = { stalled: false };
    let watchdog: TimerHandle | undefined;
    const armWatchdog = (): void => {
      watchdog?.cancel();
      watchdog = this.opts.clock.setTimer(this.opts.watchdogMs ?? 150_000, () => {
        watch.stalled = true;
        stream.abort();
      });
    };
    try {
      armWatchdog();
      const res = await this.opts.client.raw('GET', this.path(), {
        query: {
          ...this.query(),
          watch: 1,
          allowWatchBookmarks: true,
          resourceVersion: this.resourceVersion,
          // Server-side timeout: watches end and restart from the last resourceVersion regularly.
          timeoutSeconds: 300 + Math.floor(Math.random() * 300),
        },
        signal: stream.signal,
      });
      try {
        if (res.status === 410) throw new GoneError('resourceVersion too old');
        if (res.status !== 200) {
          const text = await res.text();
          throw new KubeApiError(
            res.status,
            String(res.status),
            `watch ${this.opts.type.plural}: ${text.slice(0, 300)}`,
          );
        }
        for await (const line of lines(res.body)) {
          armWatchdog();
          if (line.trim() === '') continue;
          this.apply(JSON.parse(line) as WatchLine);
        }
      } finally {
        // Whatever ended the loop, the connection is not left open; nothing once read to its end.
        res.cancel();
      }
    } catch (err) {
      if (watch.stalled) throw new StalledError('no watch event within the watchdog period', { cause: err });
      if (isAborted(this.abort.signal)) return;
      throw err;
    } finally {
      watchdog?.cancel();
      this.abort.signal.removeEventListener('abort', onStop);
    }
    if (watch.stalled) throw new StalledError('no watch event within the watchdog period');
  }

  private apply(ev: WatchLine): void {
    if (ev.type === 'ERROR') {
      if (ev.object.code === 410) throw new GoneError(ev.object.message ?? 'Gone');
      throw new KubeApiError(
        ev.object.code ?? 500,
        ev.object.reason ?? 'Error',
        ev.object.message ?? 'watch error',
      );
    }
    const rv = ev.object.metadata.resourceVersion;
    if (ev.type === 'BOOKMARK') {
      this.resourceVersion = rv;
      return;
    }
    const obj = this.prepare(ev.object as T);
    const key = objectKey(obj.metadata);
    const prev = this.cache.get(key);
    if (ev.type === WatchEventType.Deleted) {
      this.cache.delete(key);
      this.emit(WatchEventType.Deleted, obj, prev);
    } else {
      this.cache.set(key, obj);
      this.emit(prev === undefined ? WatchEventType.Added : WatchEventType.Modified, obj, prev);
    }
    this.resourceVersion = rv;
  }

  private prepare(obj: T): T {
    delete obj.metadata.managedFields;
    if (obj.apiVersion === undefined)
      obj.apiVersion =
        this.opts.type.group === ''
          ? this.opts.type.version
          : `${this.opts.type.group}/${this.opts.type.version}`;
    if (obj.kind === undefined) obj.kind = this.opts.type.kind;
    return obj;
  }

  private emit(type: WatchEventType, obj: T, old: T | undefined): void {
    for (const h of this.handlers) {
      try {
        h(type, obj, old);
      } catch (err) {
        this.opts.logger.error({ err }, 'informer handler threw; handlers must only enqueue');
      }
    }
  }
}

/**
 * The lines of a watch stream (newline-delimited JSON), decoded as UTF-8; a last line without a
 * newline too. Leaving the loop early stops reading `chunks`. Pure but for reading.
 */
export async function* lines(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of chunks) {
    pending += decoder.decode(chunk, { stream: true });
    let from = 0;
    for (let nl = pending.indexOf('\n'); nl !== -1; nl = pending.indexOf('\n', from)) {
      yield pending.slice(from, nl);
      from = nl + 1;
    }
    pending = pending.slice(from);
  }
  pending += decoder.decode();
  if (pending !== '') yield pending;
}
