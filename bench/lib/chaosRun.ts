// One chaos run, shared by `make chaos` (bench/chaos.ts) and the small run in
// `make test` (test/e2e/chaos.test.ts): its own local stack, the operator
// behind the counting fault proxy, a mixed workload converging while the
// operator is SIGKILLed, kube-apiserver restarts, AWS misbehaves and a
// leader dies; then half of the objects are deleted under the same storm,
// and the invariants are checked against AWS (directly) and the apiserver.
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { installCrds } from '../../src/dev/installCrds.ts';
import { typeOf } from '../../src/dev/samples.ts';
import { startLocalStack, type LocalStack } from '../../src/dev/stack.ts';
import { waitFor } from '../../src/dev/wait.ts';
import { KubeClient, loadKubeConfig } from '../../src/runtime/kube/client.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { AwsFaultProxy } from '../../test/support/awsFaultProxy.ts';
import { awsClients, ensureSubnets, ensureZones, type AwsClients } from './awsAccount.ts';
import { childArns, collectInventory, findLingeringChildren, type InventoryZone } from './awsInventory.ts';
import { FaultInjector, defaultFaultSettings, type FaultSettings } from './chaosFaults.ts';
import { OperatorFleet, slotOfHolder } from './chaosOperators.ts';
import { SeededRandom } from './chaosRandom.ts';
import { EventLog, PhaseRecorder, outcomeCounts, type ChaosReport, type Failover } from './chaosReport.ts';
import { ReadySampler, crKey, kubeWrite } from './chaosSampler.ts';
import { chaosWorkload, kindCounts, pickHalf, type Workload, type WorkloadItem } from './chaosWorkload.ts';
import { forEachLimit } from './concurrency.ts';
import { listCrStates } from './crStates.ts';
import { checkInvariants, type DeletedCr, type InvariantResult, type SkyliftKind } from './invariants.ts';
import { distribution, type Distribution } from './stats.ts';

export type { ChaosReport } from './chaosReport.ts';

/** What a chaos run does. */
export interface ChaosOptions {
  /** Working directory: the local stack, operator logs and pid files. */
  readonly dir: string;
  /** Skylift objects to converge (60 % DNSRecords, 25 % MyIngresses, 15 % ManagedDBs). */
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

const namespace = 'chaos';
const clusterId = 'chaos';
const zoneNames = ['chaos-a.skylift.test', 'chaos-b.skylift.test'];
/** Objects the run creates or deletes at once. */
const writeConcurrency = 16;

/** Everything a run started, in the order it must be stopped. */
interface Environment {
  readonly stack: LocalStack;
  readonly proxy: AwsFaultProxy;
  /** Straight at moto, for setup and the inventory. */
  readonly aws: AwsClients;
  readonly zones: readonly InventoryZone[];
  readonly admin: KubeClient;
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

  constructor(o: ChaosOptions, env: Environment, log: EventLog) {
    this.o = o;
    this.env = env;
    this.log = log;
    this.phases = new PhaseRecorder(() => env.proxy.calls(), log);
    this.schedule = SeededRandom.derive(o.seed, 'schedule');
    this.workload = chaosWorkload(namespace, o.resources, zoneNames, SeededRandom.derive(o.seed, 'workload'));
    this.fleet = new OperatorFleet({
      dir: o.dir,
      kubeconfig: env.stack.kubeconfig,
      awsEndpoint: env.proxy.endpoint,
      namespace,
      clusterId,
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
    this.sampler = new ReadySampler(env.admin, namespace, () => log.now());
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
    const inventory = await collectInventory(this.env.aws, { zones: this.env.zones });
    const crs = await listCrStates(this.env.admin, namespace);
    const afterConverge = checkInvariants({ inventory, crs, clusterId });
    this.log.add('invariants', `after converging: ${holding(afterConverge)}`);

    const chosen = pickHalf(this.workload.items, this.schedule);
    const byKey = new Map(crs.map((cr) => [crKey(cr), cr]));
    const deleted: DeletedCr[] = chosen.flatMap((item) => {
      const cr = byKey.get(crKey(item));
      if (cr === undefined) return [];
      const { kind, name, uid, record } = cr;
      return [{ kind, namespace, name, uid, ...(record !== undefined ? { record } : {}) }];
    });
    const deletedUids = new Set(deleted.map((d) => d.uid));
    // Listener and rule ARNs of the doomed load balancers, to ask AWS about once they are gone.
    const children = childArns(inventory.loadBalancers.filter((lb) => deletedUids.has(lb.owner.uid)));
    const firstDelete = await this.deleteStorm(chosen, this.o.kills - killsCreate);
    const allGoneAt = await this.settleDeletion(chosen);
    const afterDelete = checkInvariants({
      inventory: await collectInventory(this.env.aws, { zones: this.env.zones }),
      crs: await listCrStates(this.env.admin, namespace),
      clusterId,
      deleted,
      lingeringChildren: await findLingeringChildren(this.env.aws.elbv2, children),
    });
    this.log.add('invariants', `after deleting: ${holding(afterDelete)}`);
    return this.report({
      afterConverge,
      afterDelete,
      allReadyAfterMs: allReadyAt !== undefined ? allReadyAt - firstApplied : undefined,
      deletion: {
        requested: chosen.length,
        allGoneAfterMs: allGoneAt !== undefined ? allGoneAt - firstDelete : undefined,
      },
    });
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
    await forEachLimit(this.workload.supporting, writeConcurrency, (obj) =>
      kubeWrite(`create ${String(obj.kind)} ${obj.metadata.name}`, () =>
        admin.create(resourcePath(typeOf(obj), { namespace }), obj),
      ),
    );
    await forEachLimit(this.workload.items, writeConcurrency, async (item) => {
      this.appliedAt.set(crKey(item), this.log.now());
      await kubeWrite(`create ${item.kind} ${item.name}`, () =>
        admin.create(resourcePath(typeOf(item.object), { namespace }), item.object),
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
          kubeWrite(`delete ${item.kind} ${item.name}`, () =>
            admin.delete(resourcePath(typeOf(item.object), { namespace, name: item.name })),
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
        const crs = await listCrStates(this.env.admin, namespace);
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
    afterConverge: InvariantResult[];
    afterDelete: InvariantResult[];
    allReadyAfterMs: number | undefined;
    deletion: ChaosReport['deletion'];
  }): ChaosReport {
    const o = this.o;
    const calls = this.env.proxy.calls();
    return {
      seed: o.seed,
      settings: {
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
      workload: { total: this.workload.items.length, ...kindCounts(o.resources) },
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
      },
      invariants: { afterConverge: r.afterConverge, afterDelete: r.afterDelete },
      passed: [...r.afterConverge, ...r.afterDelete].every((x) => x.ok),
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

function holding(results: readonly InvariantResult[]): string {
  return `${results.filter((r) => r.ok).length}/${results.length} hold`;
}

/** Starts the stack and the proxy and prepares the account, the CRDs and the namespace. */
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
  const aws = awsClients(stack.emulator.endpoint);
  await ensureSubnets(aws);
  const zones = (await ensureZones(aws, zoneNames)).map((id) => ({ id, exclusive: true }));
  const admin = new KubeClient(loadKubeConfig(stack.kubeconfig));
  await installCrds(admin);
  await admin.create('/api/v1/namespaces', { metadata: { name: namespace } });
  log.add(
    'stack',
    `ready: ${stack.controlPlane.server}, moto ${stack.emulator.endpoint}, proxy ${proxy.endpoint}`,
  );
  return { stack, proxy, aws, zones, admin };
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
