import type { Logger } from 'pino';
import type { Clock } from './clock.ts';
import type { RunnableController } from './controller.ts';
import { startProbeServer, type ProbeServer } from './httpServer.ts';
import { LeaderElector, type LeaseTiming } from './leaderElection.ts';
import type { Metrics } from './metrics.ts';
import type { KubeClient } from './kube/client.ts';

/** Options for {@link Manager}. */
export interface ManagerOptions {
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Unique per replica. */
  readonly identity: string;
  /** Lease to hold; undefined disables leader election (single replica, tests). */
  readonly leaderElection?:
    { readonly namespace: string; readonly name: string; readonly timing?: LeaseTiming } | undefined;
  /** `host:port` for /metrics, /healthz and /readyz; undefined serves nothing. */
  readonly probeAddress?: string | undefined;
  /** How long in-flight reconciles may run after SIGTERM. Default 20 s. */
  readonly shutdownDeadlineMs?: number;
}

/** How a manager run ended. */
export type ManagerExit = 'stopped' | 'lost-leadership';

/**
 * Runs controllers under leader election and serves probes and metrics.
 * `run()` resolves when the manager stops: after `stop()` (graceful: stop
 * intake, finish in-flight work within the deadline, release the lease), or
 * when leadership is lost — the caller should then exit, as client-go's
 * managers do, so no two replicas ever reconcile at once.
 */
export class Manager {
  private readonly o: ManagerOptions;
  private readonly controllers: RunnableController[] = [];
  private readonly stopSignal = new AbortController();
  private elector: LeaderElector | undefined;
  private probes: ProbeServer | undefined;
  private running = false;

  constructor(opts: ManagerOptions) {
    this.o = opts;
  }

  /** Adds a controller; call before `run()`. */
  add(controller: RunnableController): void {
    this.controllers.push(controller);
  }

  /** The address the probe server listens on, once `run()` has started it. */
  get probeAddress(): string | undefined {
    return this.probes?.address;
  }

  /**
   * Runs until stopped or leadership is lost. After `stop()` it resolves
   * within the shutdown deadline whatever the apiserver and AWS do: in-flight
   * reconciles get most of it, the informers and the Lease the rest, and
   * whatever still hangs then is abandoned (the caller exits the process).
   */
  async run(): Promise<ManagerExit> {
    const deadline = this.deadlineMs();
    let timer: NodeJS.Timeout | undefined;
    const overdue = new Promise<ManagerExit>((resolve) => {
      this.stopSignal.signal.addEventListener(
        'abort',
        () => {
          timer = setTimeout(() => {
            this.o.logger.warn(
              { deadlineMs: deadline },
              'shutdown deadline passed; abandoning what has not stopped',
            );
            resolve('stopped');
          }, deadline);
        },
        { once: true },
      );
    });
    try {
      return await Promise.race([this.runUntilStopped(), overdue]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async runUntilStopped(): Promise<ManagerExit> {
    const signal = this.stopSignal.signal;
    if (this.o.probeAddress !== undefined) {
      this.probes = await startProbeServer(this.o.probeAddress, this.o.metrics.registry, {
        healthz: () => undefined,
        readyz: () => this.notReady(),
      });
      this.o.logger.info({ address: this.probes.address }, 'serving /metrics, /healthz, /readyz');
    }
    let exit: ManagerExit = 'stopped';
    try {
      const le = this.o.leaderElection;
      if (le !== undefined) {
        this.elector = new LeaderElector({
          client: this.o.client,
          clock: this.o.clock,
          logger: this.o.logger,
          namespace: le.namespace,
          name: le.name,
          identity: this.o.identity,
          ...(le.timing !== undefined ? { timing: le.timing } : {}),
          onStatus: (leading) => this.o.metrics.leaderStatus.set({ name: le.name }, leading ? 1 : 0),
        });
        // A standby reports 0 from the start: the "no leader" alert sums every replica's sample.
        this.o.metrics.leaderStatus.set({ name: le.name }, 0);
        if (!(await this.elector.acquire(signal))) return 'stopped';
      }
      this.running = true;
      // Starting waits for the first lists, which never come while the apiserver is unreachable:
      // a stop must not wait for them.
      const started = await Promise.race([
        Promise.all(this.controllers.map((c) => c.start())).then(() => true),
        aborted(signal).then(() => false),
      ]);
      if (!started) return 'stopped';
      this.o.logger.info({ controllers: this.controllers.map((c) => c.type.kind) }, 'controllers started');
      if (this.elector !== undefined) {
        exit = (await this.elector.holdUntilLost(signal)) === 'lost' ? 'lost-leadership' : 'stopped';
      } else {
        // stop() may have come while the controllers started; its abort event is then long gone.
        await aborted(signal);
      }
    } finally {
      // Held statuses are written on a stop, not after losing the lease: another replica may lead.
      await this.shutdown(exit === 'stopped');
    }
    return exit;
  }

  /** Starts a graceful stop; `run()` resolves once it is done. Idempotent. */
  stop(): void {
    this.stopSignal.abort();
  }

  private deadlineMs(): number {
    return this.o.shutdownDeadlineMs ?? 20_000;
  }

  private async shutdown(writeHeld: boolean): Promise<void> {
    const deadline = this.deadlineMs();
    // In-flight reconciles get the deadline but a reserve for the informers and the Lease.
    const reserve = Math.min(5000, deadline / 4);
    await Promise.all(this.controllers.map((c) => c.stop(deadline - reserve, { writeHeld })));
    this.running = false;
    await this.elector?.release();
    await this.probes?.close();
  }

  private notReady(): string | undefined {
    if (this.o.leaderElection !== undefined && this.elector?.isLeader !== true) return undefined; // a healthy standby
    if (!this.running) return 'starting';
    const unsynced = this.controllers.filter((c) => !c.synced).map((c) => c.type.kind);
    return unsynced.length > 0 ? `informers not synced: ${unsynced.join(', ')}` : undefined;
  }
}

/** Resolves once `signal` has aborted (at once if it already has). */
function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
}
