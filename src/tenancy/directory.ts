// The operator's view of TeamPolicies and namespaces: which policy serves a namespace, told to the
// controllers when that may have changed, and each policy's status (the namespaces it selects,
// overlaps with other policies, the last AssumeRole of its role).
import type { Logger } from 'pino';
import { namespaceType } from '../apis/core.ts';
import type { KubeObject } from '../apis/meta.ts';
import { resourcePath } from '../apis/meta.ts';
import { PolicyReason, teamPolicyType, type TeamPolicy, type TeamPolicyStatus } from '../apis/teampolicy.ts';
import type { Clock } from '../runtime/clock.ts';
import { setCondition } from '../runtime/conditions.ts';
import type { RunnableController } from '../runtime/controller.ts';
import { RetryableError } from '../runtime/errors.ts';
import type { EventRecorder } from '../runtime/events.ts';
import { Informer, WatchEventType } from '../runtime/kube/informer.ts';
import type { KubeClient } from '../runtime/kube/client.ts';
import { mergePatchFor } from '../runtime/mergePatch.ts';
import { policySelections, tenancyOf, type NamespaceFacts, type Tenancy } from './selection.ts';

/** Namespaces whose tenancy may have changed, or every namespace. */
export type TenancyChange = ReadonlySet<string> | 'all';

/** The last AssumeRole of a policy's role, as the identity side reports it. */
export interface AssumeRoleReport {
  readonly ok: boolean;
  readonly message?: string;
  readonly account?: string;
}

/**
 * Where controllers learn which TeamPolicy serves a namespace. Implementations cache; `tenancyOf`
 * may block until the first list (bounded: it throws a retryable error after `syncWaitMs`).
 */
export interface TenantSource {
  /** The namespace's tenancy now. Never throws for a missing namespace (refused). */
  tenancyOf(namespace: string): Promise<Tenancy>;
  /**
   * The namespace's tenancy as cached now, without waiting (undefined until the first list): for
   * decisions made outside a reconcile's connect, such as which EndpointSlices count.
   */
  current(namespace: string): Tenancy | undefined;
  /** Registers a callback for changes (policy created, changed or deleted; namespace labels changed). */
  onChange(cb: (change: TenancyChange) => void): void;
  /** Records the outcome of assuming a policy's role (shown on the policy's status; an Event on failure). */
  reportAssumeRole(policyName: string, report: AssumeRoleReport): void;
}

/** Options for {@link TenantDirectory}. */
export interface TenantDirectoryOptions {
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly events?: EventRecorder;
  /** Only TeamPolicies matching this label selector count (several installs in one cluster). */
  readonly policySelector?: string | undefined;
  /** A namespace no policy selects is refused even while there is no policy at all (fails closed). */
  readonly policyRequired?: boolean;
  /** How long tenancyOf waits for the first list before failing the reconcile (default 30 s). */
  readonly syncWaitMs?: number;
}

/**
 * TeamPolicy and Namespace informers (cluster-wide) and the policies' status writer; run by the
 * manager beside the kinds' controllers, so only the leader writes.
 */
export class TenantDirectory implements TenantSource, RunnableController {
  readonly type = teamPolicyType;
  private readonly o: TenantDirectoryOptions;
  private readonly policies: Informer<TeamPolicy>;
  private readonly namespaces: Informer<KubeObject>;
  private readonly listeners: ((c: TenancyChange) => void)[] = [];
  private readonly assumeRole = new Map<string, AssumeRoleReport & { time: string }>();
  private statusWrite: Promise<void> = Promise.resolve();
  private statusDirty = false;
  private stopped = false;

  constructor(o: TenantDirectoryOptions) {
    this.o = o;
    this.policies = new Informer<TeamPolicy>({
      client: o.client,
      type: teamPolicyType,
      clock: o.clock,
      logger: o.logger,
      labelSelector: o.policySelector,
    });
    this.namespaces = new Informer<KubeObject>({
      client: o.client,
      type: namespaceType,
      clock: o.clock,
      logger: o.logger,
    });
    this.policies.on((type, obj, old) => {
      if (
        type === WatchEventType.Modified &&
        old !== undefined &&
        old.metadata.generation === obj.metadata.generation
      )
        return;
      this.changed('all');
    });
    this.namespaces.on((type, obj, old) => {
      if (type === WatchEventType.Modified && old !== undefined && sameLabels(old, obj)) return;
      this.changed(new Set([obj.metadata.name]));
    });
  }

  get synced(): boolean {
    return this.policies.hasSynced && this.namespaces.hasSynced;
  }

  /** Starts both informers and waits for their first list. */
  async start(): Promise<void> {
    this.policies.start();
    this.namespaces.start();
    await Promise.all([this.policies.waitForSync(), this.namespaces.waitForSync()]);
    this.refreshStatus();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([this.policies.stop(), this.namespaces.stop()]);
    await this.statusWrite;
  }

  async tenancyOf(namespace: string): Promise<Tenancy> {
    if (!this.synced) await this.waitForSync();
    const ns = this.namespaces.get(namespace);
    const facts: NamespaceFacts = { name: namespace, labels: ns?.metadata.labels ?? {} };
    return tenancyOf(facts, this.policies.list(), { required: this.o.policyRequired === true });
  }

  current(namespace: string): Tenancy | undefined {
    if (!this.synced) return undefined;
    const ns = this.namespaces.get(namespace);
    return tenancyOf({ name: namespace, labels: ns?.metadata.labels ?? {} }, this.policies.list(), {
      required: this.o.policyRequired === true,
    });
  }

  onChange(cb: (change: TenancyChange) => void): void {
    this.listeners.push(cb);
  }

  reportAssumeRole(policyName: string, report: AssumeRoleReport): void {
    const before = this.assumeRole.get(policyName);
    this.assumeRole.set(policyName, { ...report, time: new Date(this.o.clock.now()).toISOString() });
    if (before?.ok === report.ok && before.message === report.message) return;
    const policy = this.policies.get(policyName);
    if (!report.ok && policy !== undefined) {
      this.o.events?.record(policy, {
        type: 'Warning',
        reason: PolicyReason.AssumeRoleFailed,
        action: 'AssumeRole',
        note: report.message ?? 'AssumeRole failed',
      });
    }
    this.refreshStatus();
  }

  private async waitForSync(): Promise<void> {
    const waitMs = this.o.syncWaitMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    const synced = await Promise.race([
      Promise.all([this.policies.waitForSync(), this.namespaces.waitForSync()]).then(() => true),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(false), waitMs);
      }),
    ]);
    clearTimeout(timer);
    if (!synced)
      throw new RetryableError(
        'PoliciesNotLoaded',
        'TeamPolicies and namespaces are not listed yet (is the TeamPolicy CRD installed, and may the operator list namespaces?); retrying',
      );
  }

  private changed(change: TenancyChange): void {
    for (const l of this.listeners) l(change);
    this.refreshStatus();
  }

  /** Recomputes every policy's status and writes those that differ, one write at a time. */
  private refreshStatus(): void {
    if (!this.synced || this.stopped) return;
    this.statusDirty = true;
    this.statusWrite = this.statusWrite.then(async () => {
      if (!this.statusDirty || this.stopped) return;
      this.statusDirty = false;
      await this.writeStatuses().catch((err: unknown) => {
        this.o.logger.warn(
          { err: err instanceof Error ? err.message : String(err) },
          'TeamPolicy status write failed',
        );
      });
    });
  }

  private async writeStatuses(): Promise<void> {
    const policies = this.policies.list();
    const facts = this.namespaces
      .list()
      .map((n) => ({ name: n.metadata.name, labels: n.metadata.labels ?? {} }));
    const selections = policySelections(policies, facts);
    for (const p of policies) {
      const sel = selections.get(p.metadata.name);
      if (sel === undefined) continue;
      const next = this.statusOf(p, sel.namespaces, sel.overlaps);
      const patch = mergePatchFor(p.status ?? {}, next);
      if (patch === undefined) continue;
      await this.o.client
        .patch(
          resourcePath(teamPolicyType, { name: p.metadata.name, subresource: 'status' }),
          { status: patch },
          'merge',
        )
        .catch((err: unknown) => {
          this.o.logger.warn(
            { policy: p.metadata.name, err: err instanceof Error ? err.message : String(err) },
            'TeamPolicy status write failed',
          );
        });
    }
  }

  private statusOf(p: TeamPolicy, namespaces: string[], overlaps: Map<string, string[]>): TeamPolicyStatus {
    const assumed = this.assumeRole.get(p.metadata.name);
    const overlapText = [...overlaps]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([other, nss]) => `TeamPolicy ${other} also selects ${nss.join(', ')}`)
      .join('; ');
    const ready =
      overlapText !== ''
        ? {
            status: 'False' as const,
            reason: PolicyReason.Overlap,
            message: `${overlapText}: those namespaces are refused until exactly one policy selects them`,
          }
        : assumed !== undefined && !assumed.ok
          ? {
              status: 'False' as const,
              reason: PolicyReason.AssumeRoleFailed,
              message: assumed.message ?? '',
            }
          : {
              status: 'True' as const,
              reason: PolicyReason.Serving,
              message: `serving ${namespaces.length} namespace${namespaces.length === 1 ? '' : 's'}`,
            };
    const conditions = setCondition(
      p.status?.conditions,
      { type: 'Ready', ...ready },
      p.metadata.generation,
      new Date(this.o.clock.now()),
    );
    const result = assumed?.ok === true ? 'Succeeded' : 'Failed';
    const prevAssume = p.status?.assumeRole;
    return {
      ...p.status,
      selectedNamespaces: namespaces,
      namespaceCount: namespaces.length,
      ...(assumed !== undefined
        ? {
            assumeRole: {
              result,
              ...(assumed.message !== undefined ? { message: assumed.message } : {}),
              ...(assumed.account !== undefined ? { account: assumed.account } : {}),
              // When the outcome last changed: a refresh that changes nothing writes nothing.
              time:
                prevAssume?.result === result && prevAssume.message === assumed.message
                  ? prevAssume.time
                  : assumed.time,
            },
          }
        : {}),
      conditions,
      ...(p.metadata.generation !== undefined ? { observedGeneration: p.metadata.generation } : {}),
    };
  }
}

function sameLabels(a: KubeObject, b: KubeObject): boolean {
  const x = a.metadata.labels ?? {};
  const y = b.metadata.labels ?? {};
  const kx = Object.keys(x);
  return kx.length === Object.keys(y).length && kx.every((k) => x[k] === y[k]);
}
