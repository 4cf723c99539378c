// One chaos run, shared by `make chaos` (bench/chaos.ts) and the small run in
// `make test` (test/e2e/chaos.test.ts): its own local stack, the operator
// behind the counting fault proxy, a mixed workload converging while the
// operator is SIGKILLed, kube-apiserver restarts, AWS misbehaves and a
// leader dies; then half of the objects are deleted under the same storm,
// and the invariants are checked against AWS (directly) and the apiserver.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { installCrds } from '../../dev/installCrds.ts';
import { typeOf } from '../../dev/samples.ts';
import { startLocalStack, type LocalStack } from '../../dev/stack.ts';
import { waitFor } from '../../dev/wait.ts';
import { KubeClient } from '../../src/runtime/kube/client.ts';
import { loadKubeconfig } from '../../src/runtime/kube/kubeconfigLoad.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { teamPolicyType, type TeamPolicy } from '../../src/apis/teampolicy.ts';
import { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { applyTeamPolicy, deleteTeamPolicies, policySelector } from '../../dev/teamPolicies.ts';
import {
  assumedAccountClients,
  destroyAwsClients,
  ensureSubnets,
  ensureZones,
  ownAccountClients,
  type AccountClients,
  type AwsClients,
} from './awsAccount.ts';
import { childArns, collectInventory, findLingeringChildren, type InventoryZone } from './awsInventory.ts';
import { FaultInjector, defaultFaultSettings, type FaultSettings } from './chaosFaults.ts';
import { OperatorFleet, slotOfHolder } from './chaosOperators.ts';
import { SeededRandom } from './chaosRandom.ts';
import {
  EventLog,
  PhaseRecorder,
  outcomeCounts,
  type ChaosAccountReport,
  type ChaosReport,
  type ChaosTeamPolicies,
  type Failover,
} from './chaosReport.ts';
import { ReadySampler, crKey, kubeWrite } from './chaosSampler.ts';
import {
  chaosWorkloads,
  pickHalf,
  type Workload,
  type WorkloadItem,
  type WorkloadPart,
} from './chaosWorkload.ts';
import { forEachLimit } from './concurrency.ts';
import { listCrStates } from './crStates.ts';
import {
  allHold,
  checkInvariants,
  mergeAccountResults,
  type CrState,
  type DeletedCr,
  type InvariantResult,
  type SkyliftKind,
} from './invariants.ts';
import { distribution, type Distribution } from './stats.ts';

export type { ChaosReport } from './chaosReport.ts';

/** What a chaos run does. */
export interface ChaosOptions {
  /** Working directory: the local stack, operator logs and pid files. */
  readonly dir: string;
  /**
   * 2 (default): two namespaces, each selected by its own TeamPolicy whose role is in its own
   * account; 1: one namespace in the operator's own account, no TeamPolicy (as before TeamPolicies).
   */
  readonly accounts?: 1 | 2;
  /** Skylift objects to converge (60 % DNSRecords, 25 % MyIngresses, 15 % ManagedDBs), split evenly over the namespaces. */
  readonly resources: number;
  /** SIGKILLs of the (single) operator, three quarters while creating, the rest while deleting. */
  readonly kills: number;
  /** SIGKILLs of the leader while two replicas run. */
  readonly leaderKills: number;
  /** kube-apiserver stop/start cycles while objects converge. */
  readonly apiServerRestarts: number;
  /** etcd stop/start cycles (kube-apiserver keeps running) while objects converge. */
  readonly etcdRestarts: number;
  readonly seed: number;
  /** Inject AWS faults during the create and delete storms. */
  readonly faults: boolean;
  /** Range of the random pause before each kill, in ms. */
  readonly killDelayMs: readonly [number, number];
  /** How long the fault window stays open after the last leader failover (no kills meanwhile). */
  readonly faultedConvergeMs: number;
  /** The delete storm's fault window lasts at least this long. */
  readonly deleteStormMs: number;
  /** Deadline for every object to be Ready once the storm is over. */
  readonly convergeTimeoutMs: number;
  /** Deadline for every deleted object to be gone once the storm is over. */
  readonly deleteTimeoutMs: number;
  readonly faultSettings?: FaultSettings;
  /** Progress lines (events as they happen). */
  readonly log: (line: string) => void;
}

const clusterId = 'chaos';
/** The team accounts of a two-account run, in namespace order: roles `skylift-chaos` in each. */
export const chaosTeamAccounts = ['111111111111', '222222222222'] as const;
/** Objects the run creates or deletes at once. */
const writeConcurrency = 16;

/** The hosted zones a namespace's DNSRecords use. Pure. */
export function chaosZoneNames(namespace: string): string[] {
  return [`${namespace}-a.skylift.test`, `${namespace}-b.skylift.test`];
}

/** One AWS account of a run: who acts in it, for which namespaces, and what is inventoried there. */
interface RunAccount {
  readonly id: string;
  readonly roleArn?: string;
  readonly teamPolicy?: string;
  readonly namespaces: readonly string[];
  /** Straight at moto as this account, for setup and the inventory. */
  readonly aws: AwsClients;
  /** Zones inventoried here, by name. */
  readonly zones: readonly (InventoryZone & { readonly name: string })[];
}

/** Everything a run started, in the order it must be stopped. */
interface Environment {
  readonly stack: LocalStack;
  readonly proxy: AwsFaultProxy;
  readonly admin: KubeClient;
  /** The namespaces of the workload and their zones. */
  readonly parts: readonly WorkloadPart[];
  /** The team accounts, then (two-account run) the operator's own. */
  readonly accounts: readonly RunAccount[];
  /** The TeamPolicies' label group (two-account run). */
  readonly policyGroup?: string;
}

/** The invariants over one account's inventory. */
interface AccountCheck {
  readonly account: RunAccount;
  readonly results: InvariantResult[];
}

/** The phases of a run over one environment, and what they observed. */
class ChaosRun {
  private readonly o: ChaosOptions;
  private readonly env: Environment;
  private readonly log: EventLog;
  private readonly phases: PhaseRecorder;
  private readonly fleet: OperatorFleet;
  private readonly faults: FaultInjector;
  private readonly sampler: ReadySampler;
  private readonly schedule: SeededRandom;
  private readonly workload: Workload;
  private readonly appliedAt = new Map<string, number>();
  private readonly failovers: Failover[] = [];
  private operatorKills = 0;
  private apiServerRestarts = 0;
  private etcdRestarts = 0;
  private readonly namespaces: readonly string[];

  constructor(o: ChaosOptions, env: Environment, log: EventLog) {
    this.o = o;
    this.env = env;
    this.log = log;
    this.phases = new PhaseRecorder(() => env.proxy.calls(), log);
    this.schedule = SeededRandom.derive(o.seed, 'schedule');
    this.workload = chaosWorkloads(env.parts, o.resources, SeededRandom.derive(o.seed, 'workload'));
    this.namespaces = env.parts.map((p) => p.namespace);
    this.fleet = new OperatorFleet({
      dir: o.dir,
      kubeconfig: env.stack.kubeconfig,
      awsEndpoint: env.proxy.endpoint,
      namespaces: this.namespaces,
      clusterId,
      ...(env.policyGroup !== undefined
        ? { extraArgs: ['--team-policy-selector', policySelector(env.policyGroup)] }
        : {}),
      onEvent: (e) => {
        log.add(`operator-${e.kind}`, `${e.slot}: ${e.detail}`);
      },
    });
    this.faults = new FaultInjector(
      env.proxy,
      SeededRandom.derive(o.seed, 'faults'),
      (e) => {
        log.add(e.kind, e.detail);
      },
      o.faultSettings ?? defaultFaultSettings,
    );
    this.sampler = new ReadySampler(env.admin, this.namespaces, () => log.now());
  }

  /** Stops the operators, the faults and the sampler. */
  async stop(): Promise<void> {
    this.faults.off('run over');
    await this.fleet.stopAll();
    await this.sampler.stop();
  }

  /** Runs every phase and builds the report. */
  async run(): Promise<ChaosReport> {
    const killsCreate = this.o.kills > 0 ? Math.ceil(this.o.kills * 0.75) : 0;
    const firstApplied = await this.createStorm(killsCreate);
    await this.leaderFailover();
    await this.faultedConverge();
    const allReadyAt = await this.converge();
    const crs = await listCrStates(this.env.admin, this.namespaces);
    const chosen = pickHalf(this.workload.items, this.schedule);
    const byKey = new Map(crs.map((cr) => [crKey(cr), cr]));
    const deleted: DeletedCr[] = chosen.flatMap((item) => {
      const cr = byKey.get(crKey(item));
      if (cr === undefined) return [];
      const { kind, namespace, name, uid, record } = cr;
      return [{ kind, namespace, name, uid, ...(record !== undefined ? { record } : {}) }];
    });
    const deletedUids = new Set(deleted.map((d) => d.uid));
    // Per account: the invariants, and the listener and rule ARNs of the doomed load balancers
    // there, to ask AWS about once they are gone.
    const children = new Map<string, string[]>();
    const afterConverge: AccountCheck[] = [];
    for (const account of this.env.accounts) {
      const inventory = await collectInventory(account.aws, { zones: account.zones });
      children.set(
        account.id,
        childArns(inventory.loadBalancers.filter((lb) => deletedUids.has(lb.owner.uid))),
      );
      afterConverge.push({ account, results: this.check(account, inventory, crs) });
    }
    this.logChecks('after converging', afterConverge);

    const firstDelete = await this.deleteStorm(chosen, this.o.kills - killsCreate);
    const allGoneAt = await this.settleDeletion(chosen);
    const crsAfter = await listCrStates(this.env.admin, this.namespaces);
    const afterDelete: AccountCheck[] = [];
    for (const account of this.env.accounts) {
      const inventory = await collectInventory(account.aws, { zones: account.zones });
      const lingering = await findLingeringChildren(account.aws.elbv2, children.get(account.id) ?? []);
      afterDelete.push({ account, results: this.check(account, inventory, crsAfter, deleted, lingering) });
    }
    this.logChecks('after deleting', afterDelete);
    const teamPolicies = await this.deletePolicies();
    return this.report({
      afterConverge,
      afterDelete,
      teamPolicies,
      allReadyAfterMs: allReadyAt !== undefined ? allReadyAt - firstApplied : undefined,
      deletion: {
        requested: chosen.length,
        allGoneAfterMs: allGoneAt !== undefined ? allGoneAt - firstDelete : undefined,
      },
    });
  }

  private check(
    account: RunAccount,
    inventory: Awaited<ReturnType<typeof collectInventory>>,
    crs: readonly CrState[],
    deleted?: readonly DeletedCr[],
    lingeringChildren?: readonly string[],
  ): InvariantResult[] {
    return checkInvariants({
      inventory,
      crs,
      clusterId,
      account: { id: account.id, namespaces: account.namespaces },
      ...(deleted !== undefined ? { deleted } : {}),
      ...(lingeringChildren !== undefined ? { lingeringChildren } : {}),
    });
  }

  private logChecks(when: string, checks: readonly AccountCheck[]): void {
    this.log.add(
      'invariants',
      `${when}: ${checks.map((c) => `account ${c.account.id} ${holding(c.results)}`).join(', ')}`,
    );
  }

  /**
   * Stops the operators, then deletes the run's TeamPolicies (cluster-scoped, so they must not
   * outlive the run) and counts what the selector still lists. Undefined without policies.
   */
  private async deletePolicies(): Promise<ChaosTeamPolicies | undefined> {
    const group = this.env.policyGroup;
    if (group === undefined) return undefined;
    await this.fleet.stopAll();
    const selector = policySelector(group);
    const names = this.env.accounts.flatMap((a) => (a.teamPolicy !== undefined ? [a.teamPolicy] : []));
    await deleteTeamPolicies(this.env.admin, group);
    const left = await this.env.admin.get<{ items: TeamPolicy[] }>(resourcePath(teamPolicyType), {
      labelSelector: selector,
    });
    this.log.add('team-policies', `deleted ${names.join(', ')}; ${left.items.length} left`);
    return { selector, names, leftAfterRun: left.items.length };
  }

  /**
   * One operator without leader election; applies the workload while killing
   * the operator `kills` times, restarting kube-apiserver and etcd in between.
   * Returns when the first object was applied.
   */
  private async createStorm(kills: number): Promise<number> {
    this.phases.begin();
    await this.fleet.start('single');
    if (this.o.faults) this.faults.on('create storm');
    const restarts = controlPlaneRestarts(this.o.apiServerRestarts, this.o.etcdRestarts);
    // Spread the restarts evenly between the kills (after kill number i).
    const restartAfter = new Map<number, ControlPlaneRestart[]>();
    if (kills > 0)
      restarts.forEach((what, r) => {
        const i = Math.min(kills - 1, Math.floor(((r + 1) * kills) / (restarts.length + 1)));
        restartAfter.set(i, [...(restartAfter.get(i) ?? []), what]);
      });
    const firstApplied = this.log.now();
    await Promise.all([this.apply(), this.killLoop(kills, 'create', restartAfter)]);
    if (kills === 0) for (const what of restarts) await this.restart(what);
    this.phases.end('create-storm', this.sampler.latest);
    return firstApplied;
  }

  private async apply(): Promise<void> {
    const { admin } = this.env;
    await forEachLimit(this.workload.supporting, writeConcurrency, (obj) => {
      const namespace = obj.metadata.namespace ?? '';
      return kubeWrite(`create ${String(obj.kind)} ${namespace}/${obj.metadata.name}`, () =>
        admin.create(resourcePath(typeOf(obj), { namespace }), obj),
      );
    });
    await forEachLimit(this.workload.items, writeConcurrency, async (item) => {
      this.appliedAt.set(crKey(item), this.log.now());
      await kubeWrite(`create ${crKey(item)}`, () =>
        admin.create(resourcePath(typeOf(item.object), { namespace: item.namespace }), item.object),
      );
    });
    this.log.add(
      'applied',
      `${this.workload.items.length} Skylift objects and ${this.workload.supporting.length} Services/EndpointSlices`,
    );
  }

  private async killLoop(
    count: number,
    phase: string,
    restartAfter: ReadonlyMap<number, readonly ControlPlaneRestart[]>,
  ): Promise<void> {
    for (let i = 0; i < count; i++) {
      await this.randomPause();
      await this.fleet.kill('solo', true);
      this.operatorKills++;
      this.log.add('kill', `${phase} ${i + 1}/${count}: operator SIGKILLed and restarted`);
      for (const what of restartAfter.get(i) ?? []) await this.restart(what);
    }
  }

  /** Restarts kube-apiserver, or etcd under a running kube-apiserver, while the operator works. */
  private async restart(what: ControlPlaneRestart): Promise<void> {
    const cp = this.env.stack.controlPlane;
    const t = this.log.now();
    if (what === 'apiserver') {
      this.log.add('apiserver-stop', 'restarting kube-apiserver under load');
      await cp.restartApiServer();
      this.apiServerRestarts++;
      this.log.add('apiserver-ready', `kube-apiserver serving again after ${this.log.now() - t} ms`);
    } else {
      this.log.add('etcd-stop', 'restarting etcd under load (kube-apiserver keeps running)');
      await cp.restartEtcd();
      this.etcdRestarts++;
      this.log.add(
        'etcd-ready',
        `etcd healthy and kube-apiserver ready again after ${this.log.now() - t} ms`,
      );
    }
  }

  /** A random moment: the chaos schedule's pause before the next kill. */
  private randomPause(): Promise<void> {
    return delay(this.schedule.int(this.o.killDelayMs[0], this.o.killDelayMs[1]));
  }

  /** Two replicas with leader election; the Lease holder is SIGKILLed `leaderKills` times. */
  private async leaderFailover(): Promise<void> {
    const { admin } = this.env;
    await this.fleet.stopAll();
    await this.fleet.start('ha');
    let holder = await waitFor(() => this.fleet.leaseHolder(admin), {
      timeoutMs: 60_000,
      intervalMs: 200,
      description: 'a replica to hold the Lease',
    });
    this.log.add('leader', `${slotOfHolder(holder) ?? '?'} leads (${holder})`);
    for (let l = 0; l < this.o.leaderKills; l++) {
      await this.randomPause();
      holder = (await this.fleet.leaseHolder(admin)) ?? holder;
      const slot = slotOfHolder(holder);
      if (slot === undefined) throw new Error(`lease holder ${holder} is not a chaos replica`);
      const killedAt = this.log.now();
      await this.fleet.kill(slot, false);
      this.log.add('leader-kill', `leader ${slot} SIGKILLed`);
      const previous = holder;
      holder = await waitFor(
        async () => {
          const h = await this.fleet.leaseHolder(admin);
          return h !== undefined && h !== previous ? h : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 200, description: `a new leader after ${slot} was killed` },
      );
      const successor = slotOfHolder(holder) ?? holder;
      this.failovers.push({ killed: slot, successor, afterMs: this.log.now() - killedAt });
      this.log.add('takeover', `${successor} leads after ${this.log.now() - killedAt} ms`);
      // Only now, so that the standby (not the restarted replica) is the one that takes over.
      await this.fleet.restart(slot);
    }
    this.phases.end('leader-failover', this.sampler.latest);
  }

  /**
   * The leader works on while AWS still misbehaves: most writes (and so most
   * lost answers to creates) happen here, as killed operators got little done.
   */
  private async faultedConverge(): Promise<void> {
    if (this.o.faults) {
      await delay(this.o.faultedConvergeMs);
      this.faults.off('create storm over');
    }
    this.phases.end('faulted-converge', this.sampler.latest);
  }

  /** Waits (up to the deadline) until every object is Ready; returns when, or undefined. */
  private async converge(): Promise<number | undefined> {
    const keys = this.workload.items.map(crKey);
    const at = await this.deadline(
      () => (this.sampler.allReady(keys) ? this.log.now() : undefined),
      this.o.convergeTimeoutMs,
      `${keys.length} objects Ready`,
    );
    if (at !== undefined) this.log.add('converged', `all ${keys.length} objects Ready`);
    this.phases.end('converge', this.sampler.latest);
    return at;
  }

  /** One operator again; deletes `chosen` while killing it `kills` times. Returns when deleting began. */
  private async deleteStorm(chosen: readonly WorkloadItem[], kills: number): Promise<number> {
    const { admin } = this.env;
    await this.fleet.stopAll();
    await this.fleet.start('single');
    if (this.o.faults) this.faults.on('delete storm');
    const firstDelete = this.log.now();
    await Promise.all([
      (async () => {
        await forEachLimit(chosen, writeConcurrency, (item) =>
          kubeWrite(`delete ${crKey(item)}`, () =>
            admin.delete(resourcePath(typeOf(item.object), { namespace: item.namespace, name: item.name })),
          ),
        );
        this.log.add('deleting', `${chosen.length} objects asked to be deleted`);
      })(),
      this.killLoop(kills, 'delete', new Map()),
      // The fault window stays open at least this long, however quickly the kills are done.
      delay(this.o.deleteStormMs),
    ]);
    if (this.o.faults) this.faults.off('delete storm over');
    this.phases.end('delete-storm', this.sampler.latest);
    return firstDelete;
  }

  /** Waits (up to the deadline) until every deleted object is gone; returns when, or undefined. */
  private async settleDeletion(chosen: readonly WorkloadItem[]): Promise<number | undefined> {
    const doomed = new Set(chosen.map(crKey));
    const at = await this.deadline(
      async () => {
        const crs = await listCrStates(this.env.admin, this.namespaces);
        return crs.some((cr) => doomed.has(crKey(cr))) ? undefined : this.log.now();
      },
      this.o.deleteTimeoutMs,
      `${chosen.length} deleted objects gone`,
    );
    if (at !== undefined) this.log.add('deleted', `all ${chosen.length} deleted objects gone`);
    this.phases.end('delete-settle', this.sampler.latest);
    return at;
  }

  /** waitFor, but a missed deadline is an event (the invariants will say what is wrong), not an error. */
  private async deadline(
    probe: () => Promise<number | undefined> | number | undefined,
    timeoutMs: number,
    description: string,
  ): Promise<number | undefined> {
    try {
      return await waitFor(probe, { timeoutMs, intervalMs: 500, description });
    } catch (err) {
      this.log.add('deadline', err instanceof Error ? err.message : String(err));
      return undefined;
    }
  }

  private readyAfter(kind: SkyliftKind): Distribution {
    return distribution(
      this.workload.items
        .filter((i) => i.kind === kind)
        .flatMap((i) => {
          const ready = this.sampler.firstReady.get(crKey(i));
          const applied = this.appliedAt.get(crKey(i));
          return ready !== undefined && applied !== undefined ? [ready - applied] : [];
        }),
    );
  }

  private report(r: {
    afterConverge: readonly AccountCheck[];
    afterDelete: readonly AccountCheck[];
    teamPolicies: ChaosTeamPolicies | undefined;
    allReadyAfterMs: number | undefined;
    deletion: ChaosReport['deletion'];
  }): ChaosReport {
    const o = this.o;
    const calls = this.env.proxy.calls();
    const assumes = calls.filter((c) => c.service === 'sts' && c.operation === 'AssumeRole');
    const merged = (checks: readonly AccountCheck[]): InvariantResult[] =>
      mergeAccountResults(checks.map((c) => ({ account: c.account.id, results: c.results })));
    const afterConverge = merged(r.afterConverge);
    const afterDelete = merged(r.afterDelete);
    const accounts: ChaosAccountReport[] = this.env.accounts.map((a) => {
      const results = (checks: readonly AccountCheck[]): InvariantResult[] =>
        checks.find((c) => c.account === a)?.results ?? [];
      const invariants = { afterConverge: results(r.afterConverge), afterDelete: results(r.afterDelete) };
      return {
        account: a.id,
        ...(a.roleArn !== undefined ? { roleArn: a.roleArn } : {}),
        ...(a.teamPolicy !== undefined ? { teamPolicy: a.teamPolicy } : {}),
        namespaces: a.namespaces,
        zones: a.zones.map((z) => z.name),
        invariants,
        passed: allHold(invariants.afterConverge) && allHold(invariants.afterDelete),
      };
    });
    return {
      seed: o.seed,
      settings: {
        accounts: o.accounts ?? 2,
        resources: o.resources,
        kills: o.kills,
        leaderKills: o.leaderKills,
        apiServerRestarts: o.apiServerRestarts,
        etcdRestarts: o.etcdRestarts,
        faults: o.faults,
        killDelayMs: o.killDelayMs,
        faultedConvergeMs: o.faultedConvergeMs,
        deleteStormMs: o.deleteStormMs,
        convergeTimeoutMs: o.convergeTimeoutMs,
        deleteTimeoutMs: o.deleteTimeoutMs,
        faultSettings: o.faultSettings ?? defaultFaultSettings,
      },
      workload: {
        total: this.workload.items.length,
        ...kindTotals(this.workload),
        namespaces: this.namespaces,
      },
      startedAt: new Date(Date.now() - this.log.now()).toISOString(),
      durationMs: this.log.now(),
      phases: this.phases.phases,
      events: this.log.events,
      counts: {
        operatorKills: this.operatorKills,
        leaderKills: this.failovers.length,
        takeovers: this.failovers.filter((f) => f.successor !== f.killed).length,
        apiServerRestarts: this.apiServerRestarts,
        etcdRestarts: this.etcdRestarts,
        unexpectedOperatorExits: this.log.count('operator-unexpected-exit'),
        operatorStarts: this.log.count('operator-start'),
        fiveXxBursts: this.faults.burstCount,
      },
      convergence: {
        allReadyAfterMs: r.allReadyAfterMs,
        readyAfterMs: {
          DNSRecord: this.readyAfter('DNSRecord'),
          MyIngress: this.readyAfter('MyIngress'),
          ManagedDB: this.readyAfter('ManagedDB'),
        },
        failovers: this.failovers,
      },
      deletion: r.deletion,
      awsCalls: {
        total: calls.length,
        byOperation: this.env.proxy.countsByOperation(),
        byOutcome: outcomeCounts(calls),
        assumeRole: {
          calls: assumes.length,
          faulted: assumes.filter((c) => c.outcome !== 'forwarded' && c.outcome !== 'latency').length,
        },
      },
      invariants: { afterConverge, afterDelete },
      accounts,
      ...(r.teamPolicies !== undefined ? { teamPolicies: r.teamPolicies } : {}),
      passed:
        accounts.length > 0 &&
        accounts.every((a) => a.passed) &&
        (r.teamPolicies === undefined || r.teamPolicies.leftAfterRun === 0),
      logDir: o.dir,
    };
  }
}

/** What a control-plane restart stops and starts again. */
type ControlPlaneRestart = 'apiserver' | 'etcd';

/** The restarts of a create storm in the order they happen: alternating while both kinds are left. Pure. */
export function controlPlaneRestarts(apiServer: number, etcd: number): ControlPlaneRestart[] {
  const out: ControlPlaneRestart[] = [];
  for (let i = 0; i < Math.max(apiServer, etcd); i++) {
    if (i < apiServer) out.push('apiserver');
    if (i < etcd) out.push('etcd');
  }
  return out;
}

/** Objects per kind in a workload, as the report counts them. Pure. */
function kindTotals(w: Workload): { dns: number; myIngress: number; managedDb: number } {
  const n = (kind: SkyliftKind): number => w.items.filter((i) => i.kind === kind).length;
  return { dns: n('DNSRecord'), myIngress: n('MyIngress'), managedDb: n('ManagedDB') };
}

function holding(results: readonly InvariantResult[]): string {
  return `${results.filter((r) => r.ok).length}/${results.length} hold`;
}

/** Makes `zones` (all exclusive to Skylift) and tagged subnets in one account; returns the zones. Idempotent. */
async function prepareAccount(
  aws: AwsClients,
  zones: readonly string[],
): Promise<(InventoryZone & { name: string })[]> {
  await ensureSubnets(aws);
  const ids = await ensureZones(aws, zones);
  return zones.map((name, i) => ({ name, id: ids[i] ?? '', exclusive: true }));
}

/**
 * The accounts of a run, prepared. One account: namespace `chaos` in the operator's own account,
 * with its two zones and subnets, no TeamPolicy. Two: namespaces `chaos-1` and `chaos-2`, each
 * selected (by name) by its own TeamPolicy of label group `policyGroup` whose role is in
 * {@link chaosTeamAccounts}; every namespace's zones exist in every account, the operator's own
 * included (same-named decoys: a record written as the wrong account lands in one and shows as
 * misplaced, not as a failed write), and so do tagged subnets (a load balancer made as the wrong
 * account is made, and found). Setup happens with each account's own credentials (AssumeRole).
 */
async function prepareAccounts(
  endpoint: string,
  admin: KubeClient,
  policyGroup: string | undefined,
  clients: AccountClients[],
): Promise<{ parts: WorkloadPart[]; accounts: RunAccount[] }> {
  const own = await ownAccountClients(endpoint);
  clients.push(own);
  if (policyGroup === undefined) {
    const namespace = 'chaos';
    const zones = chaosZoneNames(namespace);
    return {
      parts: [{ namespace, zones }],
      accounts: [
        {
          id: own.account,
          namespaces: [namespace],
          aws: own.aws,
          zones: await prepareAccount(own.aws, zones),
        },
      ],
    };
  }
  const parts = chaosTeamAccounts.map((_, i) => {
    const namespace = `chaos-${i + 1}`;
    return { namespace, zones: chaosZoneNames(namespace) };
  });
  const allZones = parts.flatMap((p) => p.zones);
  const accounts: RunAccount[] = [];
  for (const [i, id] of chaosTeamAccounts.entries()) {
    const part = parts[i];
    if (part === undefined) continue;
    const roleArn = `arn:aws:iam::${id}:role/skylift-chaos`;
    const team = await assumedAccountClients(endpoint, roleArn, `chaos-setup-${part.namespace}`);
    clients.push(team);
    const teamPolicy = `${policyGroup}-${part.namespace}`;
    await applyTeamPolicy(admin, policyGroup, teamPolicy, {
      namespaces: { names: [part.namespace] },
      aws: { roleArn, externalId: `chaos-${part.namespace}` },
    });
    accounts.push({
      id: team.account,
      roleArn,
      teamPolicy,
      namespaces: [part.namespace],
      aws: team.aws,
      zones: await prepareAccount(team.aws, allZones),
    });
  }
  accounts.push({
    id: own.account,
    namespaces: [],
    aws: own.aws,
    zones: await prepareAccount(own.aws, allZones),
  });
  return { parts, accounts };
}

/** Starts the stack and the proxy and prepares the accounts, the CRDs, the namespaces and the TeamPolicies. */
async function startEnvironment(
  o: ChaosOptions,
  log: EventLog,
  cleanups: (() => Promise<void>)[],
): Promise<Environment> {
  log.add('stack', `starting kube-apiserver, etcd, kube-controller-manager and moto in ${o.dir}`);
  const stack = await startLocalStack({ dir: join(o.dir, 'stack') });
  cleanups.unshift(() => stack.stop());
  const proxyRng = SeededRandom.derive(o.seed, 'proxy');
  const proxy = await AwsFaultProxy.start({ target: stack.emulator.endpoint, random: () => proxyRng.next() });
  cleanups.unshift(() => proxy.stop());
  const admin = new KubeClient(loadKubeconfig(stack.kubeconfig));
  await installCrds(admin);
  const policyGroup = (o.accounts ?? 2) === 2 ? `chaos-${randomBytes(3).toString('hex')}` : undefined;
  // Cluster-scoped: deleted by the run when it gets to its end, else here.
  if (policyGroup !== undefined) cleanups.unshift(() => deleteTeamPolicies(admin, policyGroup));
  const clients: AccountClients[] = [];
  cleanups.push(() => {
    for (const c of clients) destroyAwsClients(c.aws);
    return Promise.resolve();
  });
  const { parts, accounts } = await prepareAccounts(stack.emulator.endpoint, admin, policyGroup, clients);
  for (const p of parts) await admin.create('/api/v1/namespaces', { metadata: { name: p.namespace } });
  log.add(
    'stack',
    `ready: ${stack.controlPlane.server}, moto ${stack.emulator.endpoint}, proxy ${proxy.endpoint}`,
  );
  log.add(
    'accounts',
    accounts
      .map(
        (a) =>
          `${a.id}${a.teamPolicy !== undefined ? ` (TeamPolicy ${a.teamPolicy}, ${a.roleArn ?? ''})` : " (the operator's own)"}: ${a.namespaces.join(', ') || 'no namespace'}`,
      )
      .join('; '),
  );
  return { stack, proxy, admin, parts, accounts, ...(policyGroup !== undefined ? { policyGroup } : {}) };
}

/**
 * Runs the whole chaos scenario in `opts.dir` and returns its report;
 * `passed` is false when any invariant broke. Throws only when the run itself
 * cannot proceed (the stack does not start, kube-apiserver does not come
 * back, no replica takes the Lease); missed convergence and deletion
 * deadlines are not thrown but show up as broken invariants. Always stops
 * everything it started.
 */
export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const log = new EventLog(opts.log);
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const env = await startEnvironment(opts, log, cleanups);
    const run = new ChaosRun(opts, env, log);
    cleanups.unshift(() => run.stop());
    return await run.run();
  } finally {
    for (const c of cleanups) await c().catch(() => undefined);
  }
}
