// The GatewayClass controller: accepts the classes that name Skylift's controller (issue 30).
// An informer on GatewayClasses (cluster-scoped), a deduplicating work queue and one worker; each
// key re-read from the cache, its status computed (gatewayClassStatus.ts) and written only when
// the class does not already say it. Classes of other controllers are never written.
import type { Logger } from 'pino';
import { gatewayClassType, type GatewayClass } from '../apis/gatewayApi.ts';
import { resourcePath } from '../apis/meta.ts';
import type { Clock, TimerHandle } from '../runtime/clock.ts';
import type { RunnableController } from '../runtime/controller.ts';
import { isKubeConflict, isKubeNotFound } from '../runtime/errors.ts';
import type { KubeClient } from '../runtime/kube/client.ts';
import { Informer, WatchEventType } from '../runtime/kube/informer.ts';
import type { Metrics } from '../runtime/metrics.ts';
import { WorkQueue } from '../runtime/workqueue.ts';
import {
  desiredGatewayClassStatus,
  gatewayClassStatusHolds,
  isSkyliftClass,
  type GatewayClassStatusApply,
} from './gatewayClassStatus.ts';

/** The field manager of every write Skylift makes to Gateway API objects. */
export const gatewayApiFieldManager = 'skylift';

/** Options of {@link GatewayClassController}. */
export interface GatewayClassControllerOptions {
  /** Every request has the client's deadline (`--kube-timeout`). */
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** The features to list (default features.ts's `skyliftSupportedFeatures`). */
  readonly features?: readonly string[];
  /** Told how each reconcile ended, after it ended (tests count writes with it). */
  readonly onReconciled?: (key: string, outcome: GatewayClassOutcome) => void;
}

/** How a reconcile of one class ended, for metrics and tests. */
export type GatewayClassOutcome = 'written' | 'unchanged' | 'ignored';

/**
 * Sets `Accepted` and `status.supportedFeatures` on every GatewayClass whose
 * `spec.controllerName` is Skylift's, at the class's generation. A status write is a server-side
 * apply of the status subresource (field manager `skylift`, forced, on the resourceVersion read:
 * a class changed meanwhile gives 409 and is looked at again) of only Skylift's condition and the
 * features, so conditions other writers own stay; it is made only when the class does not already
 * say it (a relist or an unrelated change writes nothing). Run by the manager, so only the leader
 * writes. Not a managed kind: it has no finalizer and nothing outside Kubernetes.
 */
export class GatewayClassController implements RunnableController {
  readonly type = gatewayClassType;
  private readonly o: GatewayClassControllerOptions;
  private readonly informer: Informer<GatewayClass>;
  private readonly queue: WorkQueue;
  private worker: Promise<void> | undefined;

  constructor(o: GatewayClassControllerOptions) {
    this.o = o;
    this.informer = new Informer<GatewayClass>({
      client: o.client,
      type: gatewayClassType,
      clock: o.clock,
      logger: o.logger,
      onRestart: (reason) => o.metrics.watchRestarts.inc({ resource: gatewayClassType.plural, reason }),
    });
    this.queue = new WorkQueue({ clock: o.clock, metrics: o.metrics.queueSink('gatewayclass') });
    this.informer.on((type, obj) => {
      if (type !== WatchEventType.Deleted && isSkyliftClass(obj)) this.queue.add(obj.metadata.name);
    });
  }

  /** The informer has listed once. */
  get synced(): boolean {
    return this.informer.hasSynced;
  }

  /** Starts the informer, waits for its first list, then starts the worker. */
  async start(): Promise<void> {
    this.informer.start();
    await this.informer.waitForSync();
    this.worker ??= this.work();
  }

  /** Stops taking keys; a write under way is given `deadlineMs` to end. Idempotent. */
  async stop(deadlineMs: number): Promise<void> {
    this.queue.shutDown();
    let timer: TimerHandle | undefined;
    await Promise.race([
      Promise.all([this.worker, this.queue.drained()]),
      new Promise<void>((r) => {
        timer = this.o.clock.setTimer(deadlineMs, r);
      }),
    ]);
    timer?.cancel();
    await this.informer.stop();
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      const started = this.o.clock.now();
      try {
        const outcome = await this.reconcile(key);
        this.queue.forget(key);
        this.o.metrics.reconcileTotal.inc({ controller: 'gatewayclass', result: 'success' });
        this.o.onReconciled?.(key, outcome);
      } catch (err) {
        if (isKubeConflict(err)) {
          // Changed since the cache read it: the watch brings the new version, looked at again.
          this.o.metrics.reconcileTotal.inc({ controller: 'gatewayclass', result: 'requeue' });
          this.queue.addRateLimited(key);
        } else {
          this.o.metrics.reconcileTotal.inc({ controller: 'gatewayclass', result: 'error' });
          this.o.metrics.reconcileErrors.inc({ controller: 'gatewayclass' });
          const delayMs = this.queue.addRateLimited(key);
          this.o.logger.warn(
            { gatewayClass: key, err: err instanceof Error ? err.message : String(err), retryInMs: delayMs },
            'writing the GatewayClass status failed; retrying',
          );
        }
      } finally {
        this.o.metrics.reconcileTime.observe(
          { controller: 'gatewayclass' },
          (this.o.clock.now() - started) / 1000,
        );
        this.queue.done(key);
      }
    }
  }

  /** Brings one class's status to what Skylift says of it; throws the write's error. */
  private async reconcile(name: string): Promise<GatewayClassOutcome> {
    const gc = this.informer.get(name);
    if (gc === undefined || !isSkyliftClass(gc) || gc.metadata.deletionTimestamp !== undefined)
      return 'ignored';
    const want = desiredGatewayClassStatus(gc, new Date(this.o.clock.now()), this.o.features);
    if (gatewayClassStatusHolds(gc, want)) return 'unchanged';
    try {
      await this.apply(gc, want);
    } catch (err) {
      if (isKubeNotFound(err)) return 'ignored';
      throw err;
    }
    const accepted = want.conditions[0];
    this.o.logger.info(
      {
        gatewayClass: name,
        generation: gc.metadata.generation,
        accepted: accepted?.status,
        reason: accepted?.reason,
        supportedFeatures: want.supportedFeatures.map((f) => f.name),
      },
      'GatewayClass status written',
    );
    return 'written';
  }

  private async apply(gc: GatewayClass, want: GatewayClassStatusApply): Promise<void> {
    await this.o.client.patch(
      resourcePath(gatewayClassType, { name: gc.metadata.name, subresource: 'status' }),
      {
        apiVersion: `${gatewayClassType.group}/${gatewayClassType.version}`,
        kind: gatewayClassType.kind,
        metadata: { name: gc.metadata.name, resourceVersion: gc.metadata.resourceVersion },
        status: want,
      },
      'apply',
      { fieldManager: gatewayApiFieldManager, force: true },
    );
  }
}
