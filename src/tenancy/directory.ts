// The operator's view of TeamPolicies and namespaces: which policy serves a namespace, told to the
// controllers when that may have changed, and each policy's status (the namespaces it selects,
// overlaps with other policies, the last AssumeRole of its role). Once it has seen a TeamPolicy it
// fails closed for good: it records that the installation serves teams (the teams marker, a
// ConfigMap) and from then on a namespace no policy selects is refused even while none exists.
import type { Logger } from 'pino';
import { configMapType, namespaceType } from '../apis/core.ts';
import type { KubeObject } from '../apis/meta.ts';
import { resourcePath } from '../apis/meta.ts';
import { PolicyReason, teamPolicyType, type TeamPolicy, type TeamPolicyStatus } from '../apis/teampolicy.ts';
import { sleep, type Clock } from '../runtime/clock.ts';
import { setCondition } from '../runtime/conditions.ts';
import type { SustainedThrottling } from '../providers/aws/throttleWindow.ts';
import { ownAccount } from '../providers/aws/clients.ts';
import type { RunnableController } from '../runtime/controller.ts';
import { isKubeConflict, isKubeNotFound, RetryableError } from '../runtime/errors.ts';
import type { EventRecorder } from '../runtime/events.ts';
import { Informer, WatchEventType } from '../runtime/kube/informer.ts';
import type { KubeClient } from '../runtime/kube/client.ts';
import { mergePatchFor } from '../runtime/mergePatch.ts';
import {
  policySelections,
  tenancyOf,
  type NamespaceFacts,
  type Requirement,
  type Tenancy,
} from './selection.ts';

/** Namespaces whose tenancy may have changed, or every namespace. */
export type TenancyChange = ReadonlySet<string> | 'all';

/**
 * AWS throttling of the account a policy reaches, as the identity side saw it at one of the
 * policy's objects' reconciles: `sustained` lists the services throttled in most recent minutes
 * (empty: within budget).
 */
export interface ThrottlingReport {
  /** The 12-digit account, or `own` (the operator's identity). */
  readonly account: string;
  readonly sustained: readonly SustainedThrottling[];
  /** The client-side rate of each throttled service now (requests/s). */
  readonly ratePerSecond: Readonly<Record<string, number>>;
}

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
  /**
   * Records how much AWS throttles the account a policy reaches (the policy's Throttled
   * condition; a Warning Event when it turns True). Cheap when nothing changed: called at every
   * reconcile of the policy's objects.
   */
  reportThrottling(policyName: string, report: ThrottlingReport): void;
}

/** Where an installation records that it serves teams: a ConfigMap, by namespace and name. */
export interface TeamsMarker {
  readonly namespace: string;
  readonly name: string;
}

/** The marker's data key, and the value that says the installation serves teams. */
export const teamsMarkerKey = 'teamsServed';

/** The ConfigMap of the operator's namespace that records it serves teams: `<leader election id>-teams`. Pure. */
export function teamsMarkerOf(o: { leaderElectionNamespace: string; leaderElectionId: string }): TeamsMarker {
  return { namespace: o.leaderElectionNamespace, name: `${o.leaderElectionId}-teams` };
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
  /**
   * Where the installation records that it serves teams. Read at start (only "not found" reads as
   * not recorded; any other failure is retried, and nothing is served meanwhile); written before
   * the first object is served under a TeamPolicy. Recorded, it has the effect of `policyRequired`.
   */
  readonly teamsMarker: TeamsMarker;
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
  private readonly throttling = new Map<string, { readonly message: string | undefined }>();
  private statusWrite: Promise<void> = Promise.resolve();
  private statusDirty = false;
  private stopped = false;
  private readonly stopping = new AbortController();
  /** Whether the teams marker exists: undefined until read at start. */
  private markerRecorded: boolean | undefined;
  private readonly markerRead: Promise<void>;
  private resolveMarkerRead: () => void = () => undefined;
  /** The write of the teams marker under way, if any. */
  private markerWrite: Promise<void> | undefined;
  /** A TeamPolicy has been seen by this process (before the marker says so, too). */
  private teamsSeen = false;

  constructor(o: TenantDirectoryOptions) {
    this.o = o;
    this.markerRead = new Promise((r) => {
      this.resolveMarkerRead = r;
    });
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
      // Only the status changed. A policy deleted and created again while the watch was down comes
      // back from the relist as a change of the same name, at the same generation: a new uid.
      if (
        type === WatchEventType.Modified &&
        old !== undefined &&
        old.metadata.uid === obj.metadata.uid &&
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

  /** Both informers have listed, and the teams marker has been read. */
  get synced(): boolean {
    return this.policies.hasSynced && this.namespaces.hasSynced && this.markerRecorded !== undefined;
  }

  /** Starts both informers and reads the teams marker; waits for the first lists and the read. */
  async start(): Promise<void> {
    this.policies.start();
    this.namespaces.start();
    await Promise.all([this.policies.waitForSync(), this.namespaces.waitForSync(), this.readMarker()]);
    this.refreshStatus();
    if (this.policies.list().length > 0) this.noteTeams();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    await Promise.all([this.policies.stop(), this.namespaces.stop()]);
    await this.statusWrite;
    await this.markerWrite?.catch(() => undefined);
  }

  async tenancyOf(namespace: string): Promise<Tenancy> {
    if (!this.synced) await this.waitForSync();
    const policies = this.policies.list();
    // Nothing is served under a policy before the installation has recorded that it serves teams:
    // a restart with every policy deleted must not find it serving namespaces as a single team.
    if (policies.length > 0) await this.recordTeams();
    return this.tenancyNow(namespace, policies);
  }

  current(namespace: string): Tenancy | undefined {
    if (!this.synced) return undefined;
    return this.tenancyNow(namespace, this.policies.list());
  }

  private tenancyNow(namespace: string, policies: readonly TeamPolicy[]): Tenancy {
    const ns = this.namespaces.get(namespace);
    const serving = policies.length > 0 || this.teamsSeen || this.markerRecorded === true;
    // A namespace not listed (yet) has labels nobody knows: judged with none, a policy selecting
    // by a label it lacks ("every namespace not given to a team") would serve it, maybe as the wrong team.
    if (ns === undefined && serving)
      return {
        kind: 'refused',
        message: `namespace ${namespace} is not known yet (not listed by the operator), so which TeamPolicy selects it cannot be told: it is served once it is`,
      };
    const facts: NamespaceFacts = { name: namespace, labels: ns?.metadata.labels ?? {} };
    return tenancyOf(facts, policies, this.requirement());
  }

  /** Whether, and why, a namespace no policy selects is refused while no policy exists. */
  private requirement(): Requirement {
    if (this.o.policyRequired === true) return { required: true };
    if (this.teamsSeen || this.markerRecorded === true)
      return {
        required: true,
        because: `it has served teams since a TeamPolicy was first seen; recorded in ConfigMap ${this.o.teamsMarker.namespace}/${this.o.teamsMarker.name}`,
      };
    return {};
  }

  /** Reads the teams marker until it answers (only "not found" means not recorded). */
  private async readMarker(): Promise<void> {
    const m = this.o.teamsMarker;
    for (let attempt = 1; this.markerRecorded === undefined && !this.stopped; attempt++) {
      try {
        const cm = await this.o.client.get<{ data?: Record<string, string> }>(
          resourcePath(configMapType, { namespace: m.namespace, name: m.name }),
        );
        this.markerRecorded = cm.data?.[teamsMarkerKey] === 'true';
      } catch (err) {
        if (isKubeNotFound(err)) {
          this.markerRecorded = false;
          break;
        }
        this.o.logger.warn(
          { err: err instanceof Error ? err.message : String(err), configMap: `${m.namespace}/${m.name}` },
          'cannot read whether this installation serves teams; serving nothing until it can',
        );
        await sleep(this.o.clock, Math.min(30_000, 200 * 2 ** attempt), this.stopping.signal);
      }
    }
    if (this.markerRecorded !== undefined) this.resolveMarkerRead();
  }

  /** A TeamPolicy exists: from now on fail closed, and record it (in the background). */
  private noteTeams(): void {
    this.teamsSeen = true;
    this.recordTeams().catch((err: unknown) => {
      this.o.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'cannot record that this installation serves teams; retried at the next reconcile',
      );
    });
  }

  /**
   * Writes the teams marker unless it exists (one write at a time). Throws a RetryableError when it
   * cannot: nothing may be served under a policy until it is recorded.
   */
  private recordTeams(): Promise<void> {
    this.teamsSeen = true;
    if (this.markerRecorded === true) return Promise.resolve();
    const m = this.o.teamsMarker;
    this.markerWrite ??= this.o.client
      .create(resourcePath(configMapType, { namespace: m.namespace }), {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: m.name,
          namespace: m.namespace,
          labels: { 'app.kubernetes.io/managed-by': 'skylift' },
          annotations: {
            'skylift.dev/description':
              'This Skylift installation serves teams: a namespace no TeamPolicy selects is refused, also while none exists. To serve every namespace as one team again, delete every TeamPolicy, then this ConfigMap, then restart the operator (docs/teams.md).',
          },
        },
        data: { [teamsMarkerKey]: 'true', since: new Date(this.o.clock.now()).toISOString() },
      })
      .then(
        () => {
          this.markerRecorded = true;
        },
        (err: unknown) => {
          // Someone (another replica, an earlier run) recorded it first.
          if (isKubeConflict(err)) {
            this.markerRecorded = true;
            return;
          }
          throw new RetryableError(
            'TeamsNotRecorded',
            `cannot record that this installation serves teams in ConfigMap ${m.namespace}/${m.name} (${err instanceof Error ? err.message : String(err)}); nothing is served under a TeamPolicy until it is: may the operator create ConfigMaps in ${m.namespace}, and does that namespace exist?`,
          );
        },
      )
      .finally(() => {
        this.markerWrite = undefined;
      });
    return this.markerWrite;
  }

  onChange(cb: (change: TenancyChange) => void): void {
    this.listeners.push(cb);
  }

  /** The TeamPolicies this installation honours, as cached now (empty until the first list). */
  listPolicies(): readonly TeamPolicy[] {
    return this.policies.list();
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

  reportThrottling(policyName: string, report: ThrottlingReport): void {
    const message = throttlingMessage(report);
    const before = this.throttling.get(policyName);
    if (before !== undefined && before.message === message) return;
    this.throttling.set(policyName, { message });
    const policy = this.policies.get(policyName);
    if (message !== undefined && policy !== undefined) {
      this.o.events?.record(policy, {
        type: 'Warning',
        reason: PolicyReason.SustainedThrottling,
        action: 'CallAWS',
        note: message,
      });
    }
    this.refreshStatus();
  }

  private async waitForSync(): Promise<void> {
    const waitMs = this.o.syncWaitMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    const synced = await Promise.race([
      Promise.all([this.policies.waitForSync(), this.namespaces.waitForSync(), this.markerRead]).then(
        () => true,
      ),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(false), waitMs);
      }),
    ]);
    clearTimeout(timer);
    if (!synced)
      throw new RetryableError(
        'PoliciesNotLoaded',
        `TeamPolicies and namespaces are not listed yet, or whether this installation serves teams is not read yet (is the TeamPolicy CRD installed, may the operator list namespaces and read ConfigMap ${this.o.teamsMarker.namespace}/${this.o.teamsMarker.name}?); retrying`,
      );
  }

  private changed(change: TenancyChange): void {
    if (this.policies.hasSynced && this.policies.list().length > 0 && !this.stopped) this.noteTeams();
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
    const now = new Date(this.o.clock.now());
    let conditions = setCondition(
      p.status?.conditions,
      { type: 'Ready', ...ready },
      p.metadata.generation,
      now,
    );
    const throttled = this.throttling.get(p.metadata.name);
    if (throttled !== undefined)
      conditions = setCondition(
        conditions,
        throttled.message !== undefined
          ? {
              type: 'Throttled',
              status: 'True',
              reason: PolicyReason.SustainedThrottling,
              message: throttled.message,
            }
          : {
              type: 'Throttled',
              status: 'False',
              reason: PolicyReason.WithinBudget,
              message: 'AWS has not throttled this account’s calls in most of the last 5 minutes',
            },
        p.metadata.generation,
        now,
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

/** The Throttled condition's message for a report, or undefined when within budget. Pure. */
export function throttlingMessage(report: ThrottlingReport): string | undefined {
  if (report.sustained.length === 0) return undefined;
  const parts = report.sustained.map((t) => {
    const rate = report.ratePerSecond[t.service];
    return `${t.service} throttled ${t.throttles} of ${t.calls} calls in ${t.minutes} of the last 5 minutes${rate !== undefined ? ` (Skylift now sends at most ${Math.round(rate * 10) / 10}/s)` : ''}`;
  });
  const account = report.account === ownAccount ? "the operator's own account" : `account ${report.account}`;
  return `${account}: ${parts.join('; ')}: something else in the account uses the same quota, or the quota is lower than spec.aws.requestsPerSecond (or the default) assumes; lower spec.aws.requestsPerSecond to share it, or ask AWS to raise the quota`;
}

function sameLabels(a: KubeObject, b: KubeObject): boolean {
  const x = a.metadata.labels ?? {};
  const y = b.metadata.labels ?? {};
  const kx = Object.keys(x);
  return kx.length === Object.keys(y).length && kx.every((k) => x[k] === y[k]);
}
