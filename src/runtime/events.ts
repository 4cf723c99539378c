import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from './clock.ts';
import type { KubeClient } from './kube/client.ts';
import type { KubeObject } from '../apis/meta.ts';
import { TokenBucket } from './tokenBucket.ts';

/** Event reasons Skylift emits; documented, not free strings. */
export const EventReason = {
  Created: 'Created',
  Updated: 'Updated',
  Deleted: 'Deleted',
  Adopted: 'Adopted',
  Orphaned: 'Orphaned',
  DriftCorrected: 'DriftCorrected',
  TerminalError: 'TerminalError',
  Conflict: 'Conflict',
  Forbidden: 'Forbidden',
} as const;
export type EventReason = (typeof EventReason)[keyof typeof EventReason];

/** One event to record about an object. */
export interface EventSpec {
  readonly type: 'Normal' | 'Warning';
  /** One of {@link EventReason}, or a kind's own CamelCase reason. */
  readonly reason: string;
  /** What was done, in CamelCase (events.k8s.io `action`), e.g. CreateLoadBalancer. */
  readonly action: string;
  readonly note: string;
}

/** Options for {@link EventRecorder}. */
export interface EventRecorderOptions {
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly logger: Logger;
  /** events.k8s.io reportingController, e.g. `skylift.dev/operator`. */
  readonly controller: string;
  /** reportingInstance: the pod name. */
  readonly instance: string;
  /** Identical events within this window are folded into one series. Default 10 min. */
  readonly dedupeWindowMs?: number;
  /** An ongoing series is patched at most this often. Default 60 s. */
  readonly seriesUpdateMs?: number;
  /** Overall budget (events/s and burst) so a failing fleet cannot flood the apiserver. */
  readonly ratePerSecond?: number;
  readonly burst?: number;
  /** Told about each event, for metrics. */
  readonly onRecorded?: (
    spec: EventSpec,
    outcome: 'created' | 'series' | 'suppressed' | 'dropped' | 'failed',
  ) => void;
}

interface Series {
  name: string;
  namespace: string;
  count: number;
  firstAt: number;
  lastPatchAt: number;
}

/**
 * Records `events.k8s.io/v1` Events, de-duplicated: the first occurrence of
 * (object, reason, note) creates an Event; repeats within the window bump its
 * `series.count`, patched at most once a minute; an overall token bucket
 * drops events beyond the budget. Never throws and never blocks a reconcile:
 * `record()` returns at once and the write happens in the background.
 */
export class EventRecorder {
  private readonly opts: EventRecorderOptions;
  private readonly series = new Map<string, Series>();
  /** Writes about the same series go out in order (a later count must not be overwritten by an earlier one). */
  private readonly chains = new Map<string, Promise<void>>();
  private readonly budget: TokenBucket;

  constructor(opts: EventRecorderOptions) {
    this.opts = opts;
    this.budget = new TokenBucket(opts.clock, opts.ratePerSecond ?? 5, opts.burst ?? 25);
  }

  /** Records an event about `obj` (fire-and-forget). */
  record(obj: KubeObject, spec: EventSpec): void {
    const key = seriesKey(obj, spec);
    const next = (this.chains.get(key) ?? Promise.resolve())
      .then(() => this.write(obj, spec, key))
      .catch((err: unknown) => {
        this.opts.onRecorded?.(spec, 'failed');
        this.opts.logger.debug(
          { err: err instanceof Error ? err.message : String(err) },
          'could not record event',
        );
      })
      .finally(() => {
        if (this.chains.get(key) === next) this.chains.delete(key);
      });
    this.chains.set(key, next);
  }

  private async write(obj: KubeObject, spec: EventSpec, key: string): Promise<void> {
    const now = this.opts.clock.now();
    const namespace = obj.metadata.namespace ?? 'default';
    const window = this.opts.dedupeWindowMs ?? 600_000;
    this.gc(now, window);
    const existing = this.series.get(key);
    if (existing !== undefined && now - existing.firstAt < window) {
      existing.count++;
      if (now - existing.lastPatchAt < (this.opts.seriesUpdateMs ?? 60_000)) {
        this.opts.onRecorded?.(spec, 'suppressed');
        return;
      }
      existing.lastPatchAt = now;
      await this.opts.client.patch(
        `/apis/events.k8s.io/v1/namespaces/${existing.namespace}/events/${existing.name}`,
        { series: { count: existing.count, lastObservedTime: microTime(now) } },
        'merge',
      );
      this.opts.onRecorded?.(spec, 'series');
      return;
    }
    if (this.budget.reserve() > 0) {
      this.opts.onRecorded?.(spec, 'dropped');
      return;
    }
    const name = `${obj.metadata.name}.${createHash('sha256').update(`${key}\u0000${now}`).digest('hex').slice(0, 16)}`;
    this.series.set(key, { name, namespace, count: 1, firstAt: now, lastPatchAt: now });
    await this.opts.client.create(`/apis/events.k8s.io/v1/namespaces/${namespace}/events`, {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name, namespace },
      eventTime: microTime(now),
      reportingController: this.opts.controller,
      reportingInstance: this.opts.instance,
      action: spec.action,
      reason: spec.reason,
      note: spec.note.slice(0, 1000),
      type: spec.type,
      regarding: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name: obj.metadata.name,
        namespace: obj.metadata.namespace,
        uid: obj.metadata.uid,
        resourceVersion: obj.metadata.resourceVersion,
      },
    });
    this.opts.onRecorded?.(spec, 'created');
  }

  private gc(now: number, window: number): void {
    if (this.series.size < 1000) return;
    for (const [k, s] of this.series) if (now - s.firstAt >= window) this.series.delete(k);
  }
}

/** RFC 3339 with microseconds, as metav1.MicroTime wants. Pure. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function seriesKey(obj: KubeObject, spec: EventSpec): string {
  return `${obj.metadata.uid ?? obj.metadata.name}\u0000${spec.reason}\u0000${spec.note}`;
}
