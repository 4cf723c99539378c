import type { Logger } from 'pino';
import { isAborted, sleep, type Clock } from './clock.ts';
import { isKubeConflict, isKubeNotFound } from './errors.ts';
import { microTime } from './events.ts';
import type { KubeClient } from './kube/client.ts';
import { Informer, WatchEventType } from './kube/informer.ts';
import { leaseType } from '../apis/core.ts';
import type { KubeObject } from '../apis/meta.ts';

/** Timing of leader election; client-go's defaults. */
export interface LeaseTiming {
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

export const defaultLeaseTiming: LeaseTiming = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

/** Options for {@link LeaderElector}. */
export interface LeaderElectorOptions {
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly namespace: string;
  readonly name: string;
  /** Unique per replica (pod name + random suffix). */
  readonly identity: string;
  readonly timing?: LeaseTiming;
  /** Told whenever leadership changes (metrics). */
  readonly onStatus?: (leading: boolean) => void;
}

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number;
}

interface Lease {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec?: LeaseSpec;
}

/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go does it:
 * acquire when the lease is free, released, or not renewed for its duration
 * (measured on the local clock from when the record last changed, so clock
 * skew between replicas does not matter); renew every retry period; consider
 * leadership lost when renewal has failed for the renew deadline. `release()`
 * hands the lease over at once on graceful shutdown.
 */
export class LeaderElector {
  private readonly o: LeaderElectorOptions;
  private readonly t: LeaseTiming;
  private observed: { record: string; at: number; durationMs: number } | undefined;
  private leading = false;

  constructor(opts: LeaderElectorOptions) {
    this.o = opts;
    this.t = opts.timing ?? defaultLeaseTiming;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${this.o.namespace}/leases/${this.o.name}`;
  }

  /**
   * Blocks until this replica holds the lease (true) or `signal` aborts
   * (false). While it waits it watches the Lease, so it sees each renewal
   * as it happens and tries again the moment the lease runs out: a holder
   * that dies without releasing (SIGKILL, a force-deleted Pod whose token
   * no longer authenticates) is replaced one lease duration after its last
   * renewal, not up to two retry periods later as with polling alone. It
   * still polls every retry period, so a watch that fails (RBAC, network)
   * only costs that precision.
   */
  async acquire(signal: AbortSignal): Promise<boolean> {
    this.o.logger.info(
      { lease: `${this.o.namespace}/${this.o.name}`, identity: this.o.identity },
      'waiting for leadership',
    );
    const watch = new Informer<Lease & KubeObject>({
      client: this.o.client,
      type: leaseType,
      clock: this.o.clock,
      logger: this.o.logger,
      namespace: this.o.namespace,
      fieldSelector: `metadata.name=${this.o.name}`,
    });
    watch.on((type, lease) => {
      if (type !== WatchEventType.Deleted) this.observe(lease.spec ?? {}, this.o.clock.now());
    });
    watch.start();
    try {
      while (!signal.aborted) {
        if (await this.tryAcquireOrRenew()) {
          this.setLeading(true);
          this.o.logger.info({ identity: this.o.identity }, 'acquired leadership');
          return true;
        }
        await sleep(this.o.clock, this.untilNextTry(), signal);
      }
      return false;
    } finally {
      await watch.stop();
    }
  }

  /** How long a standby waits before trying again: a retry period, or less when the lease runs out sooner. */
  private untilNextTry(): number {
    const o = this.observed;
    if (o === undefined) return this.t.retryPeriodMs;
    // A few ms past the expiry: the check is "expired", not "expires now".
    const untilExpiry = o.at + o.durationMs - this.o.clock.now() + 5;
    return Math.max(5, Math.min(this.t.retryPeriodMs, untilExpiry));
  }

  /** Remembers when the lease record was first seen as it is now (the local clock: skew does not matter). */
  private observe(spec: LeaseSpec, now: number): void {
    const record = JSON.stringify([spec.holderIdentity, spec.renewTime, spec.leaseDurationSeconds]);
    if (this.observed?.record !== record)
      this.observed = { record, at: now, durationMs: (spec.leaseDurationSeconds ?? 15) * 1000 };
  }

  /**
   * Renews every retry period until renewal has failed for the renew deadline
   * (resolves 'lost') or `signal` aborts (resolves 'stopped').
   */
  async holdUntilLost(signal: AbortSignal): Promise<'lost' | 'stopped'> {
    let lastRenew = this.o.clock.now();
    while (!signal.aborted) {
      await sleep(this.o.clock, this.t.retryPeriodMs, signal);
      if (isAborted(signal)) break;
      if (await this.tryAcquireOrRenew()) {
        lastRenew = this.o.clock.now();
      } else if (this.o.clock.now() - lastRenew >= this.t.renewDeadlineMs) {
        this.setLeading(false);
        this.o.logger.error({ identity: this.o.identity }, 'lost leadership: could not renew the lease');
        return 'lost';
      }
    }
    return 'stopped';
  }

  /** Gives the lease up if this replica holds it, so a standby takes over at once. Never throws. */
  async release(): Promise<void> {
    if (!this.leading) return;
    this.setLeading(false);
    try {
      const lease = await this.o.client.get<Lease>(this.path);
      if (lease.spec?.holderIdentity !== this.o.identity) return;
      const now = microTime(this.o.clock.now());
      await this.o.client.request('PUT', this.path, {
        body: {
          ...lease,
          spec: { ...lease.spec, holderIdentity: null, leaseDurationSeconds: 1, renewTime: now },
        },
      });
      this.o.logger.info({ identity: this.o.identity }, 'released leadership');
    } catch (err) {
      this.o.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'could not release the lease',
      );
    }
  }

  private setLeading(v: boolean): void {
    this.leading = v;
    this.o.onStatus?.(v);
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.o.clock.now();
    const mine: LeaseSpec = {
      holderIdentity: this.o.identity,
      leaseDurationSeconds: Math.ceil(this.t.leaseDurationMs / 1000),
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    };
    let lease: Lease;
    try {
      lease = await this.o.client.get<Lease>(this.path);
    } catch (err) {
      if (!isKubeNotFound(err)) return this.failed(err);
      try {
        await this.o.client.create(`/apis/coordination.k8s.io/v1/namespaces/${this.o.namespace}/leases`, {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: this.o.name, namespace: this.o.namespace },
          spec: mine,
        });
        this.observe(mine, now);
        return true;
      } catch (createErr) {
        return this.failed(createErr);
      }
    }
    const spec = lease.spec ?? {};
    this.observe(spec, now);
    const holder = spec.holderIdentity ?? '';
    const heldByOther = holder !== '' && holder !== this.o.identity;
    const seen = this.observed;
    if (heldByOther && seen !== undefined && seen.at + seen.durationMs > now) return false;

    const next: LeaseSpec =
      holder === this.o.identity
        ? { ...spec, renewTime: microTime(now), leaseDurationSeconds: mine.leaseDurationSeconds ?? 15 }
        : { ...mine, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 };
    try {
      // PUT with the read resourceVersion: two candidates cannot both win.
      await this.o.client.request('PUT', this.path, { body: { ...lease, spec: next } });
      this.observe(next, now);
      return true;
    } catch (err) {
      return this.failed(err);
    }
  }

  private failed(err: unknown): false {
    if (!isKubeConflict(err)) {
      this.o.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'lease request failed');
    }
    return false;
  }
}
