// Runs one scenario: fresh AWS state and namespace, the operator as its own
// process, then create → all Ready, one no-op resync window, delete → all
// gone, and what is left in AWS. Each phase is measured at the proxy (AWS
// calls), /metrics (Kubernetes requests) and /proc (CPU, memory).
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import type { LocalStack } from '../dev/stack.ts';
import { emulatorEnv } from '../dev/emulator.ts';
import { KubeApiError, type KubeClient } from '../src/runtime/kube/client.ts';
import { resourcePath, type KubeObject, type ResourceType } from '../src/apis/meta.ts';
import { typeOf } from '../dev/samples.ts';
import { route53RateLimit, type AwsFaultProxy } from '../dev/awsFaultProxy.ts';
import type { BenchSettings } from './args.ts';
import type {
  AwsCalls,
  CallsByAccount,
  KubeRequests,
  OperatorUse,
  PhaseResult,
  QuietResult,
  ScenarioResult,
  TeamsResult,
} from './report.ts';
import {
  countAwsResources,
  ensureSubnets,
  ensureZones,
  type AwsClients,
  type AwsInventory,
} from './lib/awsAccount.ts';
import { forEachLimit } from './lib/concurrency.ts';
import { requestTiming, type RequestTiming } from './lib/costPerObject.ts';
import { startOperator, type OperatorProcess } from './lib/operatorProcess.ts';
import type { ProcSample } from './lib/procStats.ts';
import {
  accountCallsDelta,
  awsCallsByAccount,
  kubeRequestsByVerb,
  kubeWriteVerbs,
  reconcileCount,
  type AccountCalls,
} from './lib/promText.ts';
import { Propagation } from './lib/propagation.ts';
import { quietResult } from './lib/quiet.ts';
import { SessionAccounts } from './lib/sessionAccounts.ts';
import { ReadinessTracker } from './lib/readiness.ts';
import { counterDelta, distribution, perUnit, total } from './lib/stats.ts';
import {
  applyTeams,
  assertNoTeamPolicies,
  createNamespaces,
  destroyTeamAccounts,
  prepareTeamAccounts,
  removeTeams,
  teamsOperatorFlags,
  waitPoliciesServing,
  type TeamAccountSetup,
} from './lib/teamsSetup.ts';
import { benchZoneNames, scenarioObjects, teamsPlan, type Scenario, type TeamsPlan } from './scenarios.ts';

/** What every scenario shares. */
export interface BenchContext {
  readonly stack: LocalStack;
  /** Counting proxy in front of the emulator; the operator's only way to AWS. */
  readonly proxy: AwsFaultProxy;
  /** Straight to the emulator, for setup and leftover checks. */
  readonly aws: AwsClients;
  readonly admin: KubeClient;
  readonly settings: BenchSettings;
  /** Operator logs go here, one file per scenario. */
  readonly logDir: string;
  /** Progress lines (stderr). */
  readonly say: (line: string) => void;
  /** The CLI entry point the operator runs from (compiled, or src/cli/main.ts). */
  readonly operatorEntry: string;
}

/** The `skylift run` flags a scenario uses (besides --namespaces). */
export function operatorFlags(settings: BenchSettings): string[] {
  return [
    '--leader-elect=false',
    '--resync-period',
    `${Math.round(settings.resyncPeriodMs / 1000)}s`,
    ...settings.operatorArgs,
  ];
}

/** Deadline for a scenario's create or delete phase: generous, growing with its size. */
export function phaseTimeoutMs(scenario: Scenario): number {
  const perObject = scenario.group.route53RatePerSecond !== undefined ? 300 : 150;
  return 180_000 + scenario.size * perObject;
}

/** Counters at one moment, to diff phases. */
export interface Snapshot {
  readonly at: number;
  readonly aws: Record<string, number>;
  readonly throttled: number;
  readonly kube: Record<string, number>;
  readonly reconciles: number;
  /** AWS calls per account as the operator counted them. */
  readonly byAccount: Record<string, AccountCalls>;
  readonly proc: ProcSample;
}

/** The proxy's, the operator's metrics' and /proc's counters now. */
export async function snapshot(proxy: AwsFaultProxy, operator: OperatorProcess): Promise<Snapshot> {
  const [metrics, proc] = await Promise.all([operator.metrics(), operator.sample()]);
  return {
    at: performance.now(),
    aws: proxy.countsByOperation(),
    throttled: proxy.count({ outcome: 'rateLimit' }),
    kube: kubeRequestsByVerb(metrics),
    reconciles: reconcileCount(metrics),
    byAccount: awsCallsByAccount(metrics),
    proc,
  };
}

/** One phase from the counters at its start and end, `n` objects (per-resource figures). */
export function phase(
  before: Snapshot,
  after: Snapshot,
  n: number,
  durationMs: number,
  latencies?: number[],
  timing?: RequestTiming,
): PhaseResult {
  const awsDelta = counterDelta(before.aws, after.aws);
  const aws: AwsCalls = {
    total: total(awsDelta),
    perResource: perUnit(total(awsDelta), n),
    perResourceByOperation: Object.fromEntries(
      Object.entries(awsDelta)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([op, c]) => [op, perUnit(c, n)]),
    ),
    byOperation: Object.fromEntries(Object.entries(awsDelta).sort(([a], [b]) => a.localeCompare(b))),
    throttled: after.throttled - before.throttled,
  };
  const kubeDelta = counterDelta(before.kube, after.kube);
  const writes = kubeWriteVerbs.reduce((sum, v) => sum + (kubeDelta[v] ?? 0), 0);
  const kube: KubeRequests = { writes, writesPerResource: perUnit(writes, n), byVerb: kubeDelta };
  const cpuSeconds = after.proc.cpuSeconds - before.proc.cpuSeconds;
  return {
    durationMs: Math.round(durationMs),
    ...(latencies !== undefined ? { perResourceMs: distribution(latencies) } : {}),
    ...timing,
    aws,
    kube,
    reconcilesPerResource: perUnit(after.reconciles - before.reconciles, n),
    cpuSeconds: Math.round(cpuSeconds * 100) / 100,
    cpuMsPerResource: perUnit(cpuSeconds * 1000, n),
  };
}

/** The operator's CPU and memory from its last sample, with the RSS readings taken along the way. */
export function operatorUse(
  last: ProcSample,
  n: number,
  rss: { afterCreate?: ProcSample; afterResync?: ProcSample } = {},
): OperatorUse {
  return {
    peakRssBytes: last.peakRssBytes,
    cpuSeconds: Math.round(last.cpuSeconds * 100) / 100,
    cpuMsPerResource: perUnit(last.cpuSeconds * 1000, n),
    ...(rss.afterCreate !== undefined ? { rssAfterCreateBytes: rss.afterCreate.rssBytes } : {}),
    ...(rss.afterResync !== undefined ? { rssAfterResyncBytes: rss.afterResync.rssBytes } : {}),
  };
}

async function createIgnoringConflict(
  client: KubeClient,
  type: ResourceType,
  obj: KubeObject,
): Promise<void> {
  try {
    await client.create(resourcePath(type, { namespace: obj.metadata.namespace }), obj);
  } catch (err) {
    if (!(err instanceof KubeApiError && err.statusCode === 409)) throw err;
  }
}

async function deleteIgnoringMissing(client: KubeClient, type: ResourceType, obj: KubeObject): Promise<void> {
  try {
    await client.delete(resourcePath(type, { namespace: obj.metadata.namespace, name: obj.metadata.name }));
  } catch (err) {
    if (!(err instanceof KubeApiError && err.statusCode === 404)) throw err;
  }
}

/** Each DNSRecord's FQDN (lower case, no trailing dot) with when it was seen Ready. */
function readyByFqdn(measured: readonly KubeObject[], tracker: ReadinessTracker): Map<string, number> {
  const out = new Map<string, number>();
  for (const obj of measured) {
    const spec = (obj as KubeObject & { spec?: { name?: string; zoneName?: string } }).spec;
    const ready = tracker.readyAt(tracker.idOf(obj));
    if (spec?.name === undefined || spec.zoneName === undefined || ready === undefined) continue;
    out.set(`${spec.name}.${spec.zoneName}`.toLowerCase().replace(/\.$/, ''), ready);
  }
  return out;
}

/** What a scenario made (or is making) that its end must undo; filled in as it is made. */
interface Made {
  /** Namespaces to delete at the end. */
  readonly namespaces: string[];
  /** The label group of the scenario's TeamPolicies, once any may exist. */
  policyGroup?: string;
  /** Team accounts' clients, to destroy. */
  teamAccounts: TeamAccountSetup[];
}

/** A scenario ready for the operator: its objects, how to run the operator, where to count leftovers. */
interface Setup {
  /** The namespace the tracker and the operator watch; undefined: all (teams). */
  readonly watchNamespace: string | undefined;
  readonly supporting: readonly KubeObject[];
  readonly measured: readonly KubeObject[];
  readonly quiet?: { readonly object: KubeObject; readonly afterCreates: number };
  readonly operatorArgs: readonly string[];
  /** Each account's clients and the zones to count records in, for leftovers. */
  readonly inventories: readonly { readonly aws: AwsClients; readonly zoneIds: readonly string[] }[];
  readonly teams?: {
    readonly plan: TeamsPlan;
    /** The scenario's own `skylift run` flags (none without TeamPolicies). */
    readonly flags: readonly string[];
    /**
     * The TeamPolicies' label group and the namespace of the operator's teams record, to wait until
     * the policies serve; absent: no TeamPolicy (`dns-namespaces`), nothing to wait for.
     */
    readonly serving?: { readonly group: string; readonly systemNamespace: string };
  };
}

/** One namespace in the operator's own account, no TeamPolicy: the zones or subnets, the namespace. */
async function setUpSingle(
  ctx: BenchContext,
  scenario: Scenario,
  prefix: string,
  made: Made,
): Promise<Setup> {
  const zoneNames = benchZoneNames(scenario.group.zones);
  const zoneIds = await ensureZones(ctx.aws, zoneNames);
  if (scenario.group.type.kind === 'MyIngress') await ensureSubnets(ctx.aws);
  const namespace = prefix;
  made.namespaces.push(namespace);
  await ctx.admin.create('/api/v1/namespaces', { metadata: { name: namespace } });
  const objects = scenarioObjects(scenario, namespace, zoneNames);
  return {
    watchNamespace: namespace,
    supporting: objects.supporting,
    measured: objects.measured,
    operatorArgs: ['--namespaces', namespace, ...operatorFlags(ctx.settings)],
    inventories: [{ aws: ctx.aws, zoneIds }],
  };
}

/**
 * Team accounts (zones or subnets made as each role), the namespaces, the TeamPolicies and the
 * operator's system namespace; the operator watches every namespace, as the chart installs it.
 */
async function setUpTeams(ctx: BenchContext, scenario: Scenario, prefix: string, made: Made): Promise<Setup> {
  const plan = teamsPlan(scenario, prefix);
  if (plan.policies.length === 0) return setUpSpreadWithoutPolicies(ctx, scenario, plan, made);
  made.teamAccounts = await prepareTeamAccounts(
    ctx.stack.emulator.endpoint,
    plan,
    scenario.group.type.kind === 'MyIngress',
  );
  const systemNamespace = `${prefix}-sys`;
  made.namespaces.push(systemNamespace, ...plan.namespaces.map((n) => n.name));
  made.policyGroup = prefix;
  await applyTeams(ctx.admin, plan, prefix, systemNamespace, ctx.settings.concurrency);
  const flags = teamsOperatorFlags(prefix, systemNamespace);
  return {
    watchNamespace: undefined,
    supporting: plan.supporting,
    measured: plan.measured,
    ...(plan.quiet !== undefined ? { quiet: plan.quiet } : {}),
    operatorArgs: [...operatorFlags(ctx.settings), ...flags],
    inventories: [
      ...made.teamAccounts.map((a) => ({ aws: a.clients.aws, zoneIds: a.zoneIds })),
      // The operator's own account: anything there was made as the wrong identity.
      { aws: ctx.aws, zoneIds: [] },
    ],
    teams: { plan, flags, serving: { group: prefix, systemNamespace } },
  };
}

/**
 * The spread without TeamPolicies (`dns-namespaces`): the zones in the operator's own account, made
 * with the emulator's credentials as for `dns`, and the namespaces. The operator watches every
 * namespace with no teams flags, so it serves each as a single team, with its own identity.
 */
async function setUpSpreadWithoutPolicies(
  ctx: BenchContext,
  scenario: Scenario,
  plan: TeamsPlan,
  made: Made,
): Promise<Setup> {
  await assertNoTeamPolicies(ctx.admin);
  const zoneIds = await ensureZones(
    ctx.aws,
    plan.accounts.flatMap((a) => a.zoneNames),
  );
  if (scenario.group.type.kind === 'MyIngress') await ensureSubnets(ctx.aws);
  made.namespaces.push(...plan.namespaces.map((n) => n.name));
  await createNamespaces(ctx.admin, plan.namespaces, ctx.settings.concurrency);
  return {
    watchNamespace: undefined,
    supporting: plan.supporting,
    measured: plan.measured,
    operatorArgs: operatorFlags(ctx.settings),
    inventories: [{ aws: ctx.aws, zoneIds }],
    teams: { plan, flags: [] },
  };
}

/** The inventories added up. */
async function leftoversOf(setup: Setup): Promise<AwsInventory> {
  const sum = { route53Records: 0, loadBalancers: 0, targetGroups: 0, dbInstances: 0 };
  for (const inv of setup.inventories) {
    const c = await countAwsResources(inv.aws, inv.zoneIds);
    sum.route53Records += c.route53Records;
    sum.loadBalancers += c.loadBalancers;
    sum.targetGroups += c.targetGroups;
    sum.dbInstances += c.dbInstances;
  }
  return sum;
}

/** The teams section of a result: what the scenario was made of, and the calls counted so far. */
function teamsResult(
  setup: NonNullable<Setup['teams']>,
  proxy: AwsFaultProxy,
  t: {
    policiesServingMs: number;
    callsBeforeCreate: Record<string, number>;
    callsByAccount: TeamsResult['callsByAccount'];
  },
): TeamsResult {
  const { plan } = setup;
  const sts = Object.fromEntries(
    Object.entries(proxy.countsByOperation())
      .filter(([op]) => op.startsWith('sts:'))
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  return {
    namespaces: plan.namespaces.length,
    policies: plan.policies.length,
    accounts: plan.accounts.map((a) => ({
      account: a.id,
      ...(a.roleArn !== undefined ? { roleArn: a.roleArn } : {}),
      policies: a.policies.length,
      namespaces: a.namespaces.length,
      objects: a.objects,
      zones: a.zoneNames,
    })),
    operatorFlags: setup.flags,
    policiesServingMs: setup.serving === undefined ? null : Math.round(t.policiesServingMs),
    callsBeforeCreate: t.callsBeforeCreate,
    stsCalls: sts,
    callsByAccount: t.callsByAccount,
  };
}

/**
 * Runs `scenario` start to finish and returns its measurements; a failure in
 * any phase is reported in the result (status `failed`) after best-effort
 * cleanup, never thrown, so a long run continues with the next scenario.
 */
export async function runScenario(ctx: BenchContext, scenario: Scenario): Promise<ScenarioResult> {
  const { admin, proxy, settings } = ctx;
  const type = scenario.group.type;
  const base = {
    id: scenario.id,
    group: scenario.group.name,
    kind: type.kind,
    size: scenario.size,
    zones: scenario.group.zones,
    route53RatePerSecond: scenario.group.route53RatePerSecond ?? null,
  };
  type Measured =
    | 'create'
    | 'resync'
    | 'delete'
    | 'steadyState'
    | 'operator'
    | 'leftovers'
    | 'propagation'
    | 'teams'
    | 'quiet';
  const partial: { -readonly [K in Measured]?: ScenarioResult[K] } = {};

  await ctx.stack.emulator.reset();
  proxy.clearFaults();
  proxy.resetCalls();
  const prefix = `bench-${scenario.id}-${randomBytes(3).toString('hex')}`;
  const made: Made = { namespaces: [], teamAccounts: [] };
  let setup: Setup | undefined;
  let tracker: ReadinessTracker | undefined;
  let operator: OperatorProcess | undefined;
  let deleted = false;
  // The counters when the create phase began, for the calls per account of a scenario cut short.
  let createStart: Snapshot | undefined;
  // Every measured object, the quiet one last; and their tracker ids.
  let objects: KubeObject[] = [];
  let ids: string[] = [];
  // Teams: what is known so far, so a failed scenario still reports it.
  const teamsSoFar: {
    policiesServingMs: number;
    callsBeforeCreate: Record<string, number>;
    callsByAccount: { create?: CallsByAccount; resync?: CallsByAccount; delete?: CallsByAccount };
  } = { policiesServingMs: 0, callsBeforeCreate: {}, callsByAccount: {} };
  const quietSeen = { firstBulkAt: 0, createdAt: 0, answeredBefore: 0, created: false };
  const quietNow = (): QuietResult | undefined => {
    if (setup?.quiet === undefined || tracker === undefined || !quietSeen.created) return undefined;
    const t = tracker;
    return quietResult({
      object: t.idOf(setup.quiet.object),
      firstBulkAt: quietSeen.firstBulkAt,
      createdAfterBulkCreates: quietSeen.answeredBefore,
      createdAt: quietSeen.createdAt,
      readyAt: t.readyAt(t.idOf(setup.quiet.object)),
      bulkReadyAt: setup.measured.map((o) => t.readyAt(t.idOf(o))),
    });
  };
  const withTeams = (): void => {
    if (setup?.teams !== undefined) partial.teams = teamsResult(setup.teams, proxy, teamsSoFar);
    const q = quietNow();
    if (q !== undefined) partial.quiet = q;
  };
  try {
    setup =
      scenario.group.teams === undefined
        ? await setUpSingle(ctx, scenario, prefix, made)
        : await setUpTeams(ctx, scenario, prefix, made);
    const { measured, quiet } = setup;
    objects = [...measured, ...(quiet !== undefined ? [quiet.object] : [])];
    for (const obj of setup.supporting) await createIgnoringConflict(admin, typeOf(obj), obj);
    tracker = new ReadinessTracker(admin, type, setup.watchNamespace);
    await tracker.start();
    const tr = tracker;
    ids = objects.map((o) => tr.idOf(o));

    // Assumed roles: which account each session's keys are in, so the quota is per account.
    const sessions = new SessionAccounts();
    if (setup.teams !== undefined) proxy.inject(sessions.rule());
    const operatorStarted = performance.now();
    operator = await startOperator({
      args: setup.operatorArgs,
      kubeconfig: ctx.stack.kubeconfig,
      env: emulatorEnv(proxy.endpoint),
      logFile: join(ctx.logDir, `${scenario.id}.operator.log`),
      entry: ctx.operatorEntry,
      nodeFlags: settings.operatorNodeFlags,
    });
    if (setup.teams?.serving !== undefined) {
      ctx.say(
        `${scenario.id}: waiting for ${setup.teams.plan.policies.length} TeamPolicies to serve ${setup.teams.plan.namespaces.length} namespaces`,
      );
      await waitPoliciesServing(
        admin,
        setup.teams.plan,
        setup.teams.serving.group,
        setup.teams.serving.systemNamespace,
        60_000 + setup.teams.plan.namespaces.length * 200,
      );
      teamsSoFar.policiesServingMs = performance.now() - operatorStarted;
    }
    const rate = scenario.group.route53RatePerSecond;
    if (rate !== undefined) proxy.inject(route53RateLimit(rate, rate, sessions.bucketOf));
    const propagation =
      scenario.group.route53PendingMs !== undefined
        ? new Propagation(scenario.group.route53PendingMs)
        : undefined;
    if (propagation !== undefined) proxy.inject(propagation.rule());

    // Create until every object was seen Ready.
    ctx.say(
      `${scenario.id}: creating ${objects.length} ${type.kind} objects${setup.teams !== undefined ? ` in ${setup.teams.plan.namespaces.length} namespaces` : ''}`,
    );
    const s0 = await snapshot(proxy, operator);
    createStart = s0;
    teamsSoFar.callsBeforeCreate = proxy.countsByOperation();
    const t0 = performance.now();
    quietSeen.firstBulkAt = t0;
    let answered = 0;
    let quietCreate: Promise<void> | undefined;
    const createQuiet = async (object: KubeObject): Promise<void> => {
      quietSeen.answeredBefore = answered;
      quietSeen.createdAt = performance.now();
      quietSeen.created = true;
      tr.markCreated(tr.idOf(object), quietSeen.createdAt);
      await createIgnoringConflict(admin, type, object);
    };
    await forEachLimit(measured, settings.concurrency, async (obj) => {
      tr.markCreated(tr.idOf(obj));
      await createIgnoringConflict(admin, type, obj);
      answered++;
      if (quiet !== undefined && answered === quiet.afterCreates) {
        quietCreate = createQuiet(quiet.object);
        // Awaited after the bulk creates; handled now so a failure is not an unhandled rejection meanwhile.
        quietCreate.catch(() => undefined);
      }
    });
    await quietCreate;
    const lastCreateAnswered = performance.now();
    const lastReady = await tr.waitAllReady(ids, phaseTimeoutMs(scenario));
    const s1 = await snapshot(proxy, operator);
    partial.create = phase(
      s0,
      s1,
      objects.length,
      lastReady - t0,
      tr.readyLatencies(),
      requestTiming({ firstRequestAt: t0, lastAnsweredAt: lastCreateAnswered, lastDoneAt: lastReady }),
    );
    teamsSoFar.callsByAccount.create = accountCallsDelta(s0.byAccount, s1.byAccount);
    if (propagation !== undefined) partial.propagation = propagation.result(readyByFqdn(measured, tr));
    const q = quietNow();
    ctx.say(
      `${scenario.id}: all Ready after ${(partial.create.durationMs / 1000).toFixed(1)} s${q !== undefined ? ` (the quiet record after ${((q.readyMs ?? 0) / 1000).toFixed(1)} s)` : ''}; measuring one resync period`,
    );

    // One resync period with nothing changing: a measuring window, not a synchronisation wait.
    await delay(settings.idleWindowMs);
    const s2 = await snapshot(proxy, operator);
    partial.resync = phase(s1, s2, objects.length, s2.at - s1.at);
    teamsSoFar.callsByAccount.resync = accountCallsDelta(s1.byAccount, s2.byAccount);
    partial.steadyState = {
      awsCallsPerMinute: Math.round((partial.resync.aws.total * 60_000) / partial.resync.durationMs),
      cpuSecondsPerMinute:
        Math.round(((partial.resync.cpuSeconds * 60_000) / partial.resync.durationMs) * 100) / 100,
    };

    // Delete until every object is gone (finalizers removed: AWS confirmed the deletion).
    ctx.say(`${scenario.id}: deleting`);
    const t3 = performance.now();
    await forEachLimit(objects, settings.concurrency, async (obj) => {
      tr.markDeleteRequested(tr.idOf(obj));
      await deleteIgnoringMissing(admin, type, obj);
    });
    const lastDeleteAnswered = performance.now();
    deleted = true;
    const lastGone = await tr.waitAllGone(ids, phaseTimeoutMs(scenario));
    const s3 = await snapshot(proxy, operator);
    partial.delete = phase(
      s2,
      s3,
      objects.length,
      Math.max(lastGone, t3) - t3,
      tr.deleteLatencies(),
      requestTiming({ firstRequestAt: t3, lastAnsweredAt: lastDeleteAnswered, lastDoneAt: lastGone }),
    );
    teamsSoFar.callsByAccount.delete = accountCallsDelta(s2.byAccount, s3.byAccount);
    partial.operator = operatorUse(s3.proc, objects.length, { afterCreate: s1.proc, afterResync: s2.proc });
    partial.leftovers = await leftoversOf(setup);
    withTeams();
    ctx.say(`${scenario.id}: done`);
    return { ...base, status: 'ok', readyCount: tr.readyCount(ids), ...partial };
  } catch (err) {
    const readyCount = tracker?.readyCount(ids) ?? 0;
    const message = err instanceof Error ? err.message : String(err);
    ctx.say(`${scenario.id}: FAILED: ${message}`);
    if (
      operator !== undefined &&
      createStart !== undefined &&
      teamsSoFar.callsByAccount.create === undefined
    ) {
      // Cut short while creating: the calls until now.
      const from = createStart;
      const now = await operator.metrics().catch(() => undefined);
      if (now !== undefined)
        teamsSoFar.callsByAccount.create = accountCallsDelta(from.byAccount, awsCallsByAccount(now));
    }
    withTeams();
    if (operator !== undefined) {
      const s = await operator.sample().catch(() => undefined);
      if (s !== undefined) partial.operator = operatorUse(s, objects.length);
      if (!deleted && tracker !== undefined) {
        // Best effort, so the next scenario starts from a clean AWS account either way (it also resets moto).
        await forEachLimit(objects, settings.concurrency, (obj) =>
          deleteIgnoringMissing(admin, type, obj),
        ).catch(() => undefined);
        await tracker.waitAllGone(ids, 60_000).catch(() => undefined);
      }
    }
    return {
      ...base,
      status: 'failed',
      error: `${message}\n--- operator log tail ---\n${operator?.tail() ?? ''}`,
      readyCount,
      ...partial,
    };
  } finally {
    await operator?.stop();
    if (tracker !== undefined) {
      // What cleanup could not delete keeps its finalizer with no operator left to remove it, and
      // would hold its namespace in Terminating, under the next scenario's watch: let it go.
      const left = new Set(tracker.present(ids));
      const stuck = objects.filter((o) => left.has(tracker?.idOf(o) ?? ''));
      await forEachLimit(stuck, settings.concurrency, async (obj) => {
        await admin
          .patch(
            resourcePath(type, { namespace: obj.metadata.namespace, name: obj.metadata.name }),
            { metadata: { finalizers: null } },
            'merge',
          )
          .catch(() => undefined);
      });
      await tracker.stop();
    }
    proxy.clearFaults();
    if (made.policyGroup !== undefined) await removeTeams(admin, made.policyGroup).catch(() => undefined);
    destroyTeamAccounts(made.teamAccounts);
    await forEachLimit(made.namespaces, settings.concurrency, (ns) =>
      admin.delete(`/api/v1/namespaces/${ns}`).then(
        () => undefined,
        () => undefined,
      ),
    );
  }
}
