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
import type { AwsCalls, KubeRequests, OperatorUse, PhaseResult, ScenarioResult } from './report.ts';
import {
  benchZoneNames,
  countAwsResources,
  ensureSubnets,
  ensureZones,
  type AwsClients,
} from './lib/awsAccount.ts';
import { forEachLimit } from './lib/concurrency.ts';
import { requestTiming, type RequestTiming } from './lib/costPerObject.ts';
import { startOperator, type OperatorProcess } from './lib/operatorProcess.ts';
import type { ProcSample } from './lib/procStats.ts';
import { kubeRequestsByVerb, kubeWriteVerbs, reconcileCount } from './lib/promText.ts';
import { Propagation } from './lib/propagation.ts';
import { ReadinessTracker } from './lib/readiness.ts';
import { counterDelta, distribution, perUnit, total } from './lib/stats.ts';
import { scenarioObjects, type Scenario } from './scenarios.ts';

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
interface Snapshot {
  readonly at: number;
  readonly aws: Record<string, number>;
  readonly throttled: number;
  readonly kube: Record<string, number>;
  readonly reconciles: number;
  readonly proc: ProcSample;
}

async function snapshot(proxy: AwsFaultProxy, operator: OperatorProcess): Promise<Snapshot> {
  const [metrics, proc] = await Promise.all([operator.metrics(), operator.sample()]);
  return {
    at: performance.now(),
    aws: proxy.countsByOperation(),
    throttled: proxy.count({ outcome: 'rateLimit' }),
    kube: kubeRequestsByVerb(metrics),
    reconciles: reconcileCount(metrics),
    proc,
  };
}

function phase(
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
function operatorUse(
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

async function deleteIgnoringMissing(
  client: KubeClient,
  type: ResourceType,
  namespace: string,
  name: string,
): Promise<void> {
  try {
    await client.delete(resourcePath(type, { namespace, name }));
  } catch (err) {
    if (!(err instanceof KubeApiError && err.statusCode === 404)) throw err;
  }
}

/** Each DNSRecord's FQDN (lower case, no trailing dot) with when it was seen Ready. */
function readyByFqdn(measured: readonly KubeObject[], tracker: ReadinessTracker): Map<string, number> {
  const out = new Map<string, number>();
  for (const obj of measured) {
    const spec = (obj as KubeObject & { spec?: { name?: string; zoneName?: string } }).spec;
    const ready = tracker.readyAt(obj.metadata.name);
    if (spec?.name === undefined || spec.zoneName === undefined || ready === undefined) continue;
    out.set(`${spec.name}.${spec.zoneName}`.toLowerCase().replace(/\.$/, ''), ready);
  }
  return out;
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
  type Measured = 'create' | 'resync' | 'delete' | 'steadyState' | 'operator' | 'leftovers' | 'propagation';
  const partial: { -readonly [K in Measured]?: ScenarioResult[K] } = {};

  await ctx.stack.emulator.reset();
  proxy.clearFaults();
  proxy.resetCalls();
  const zoneNames = benchZoneNames(scenario.group.zones);
  const zoneIds = await ensureZones(ctx.aws, zoneNames);
  if (type.kind === 'MyIngress') await ensureSubnets(ctx.aws);

  const namespace = `bench-${scenario.id}-${randomBytes(3).toString('hex')}`;
  await admin.create('/api/v1/namespaces', { metadata: { name: namespace } });
  const objects = scenarioObjects(scenario, namespace, zoneNames);
  const names = objects.measured.map((o) => o.metadata.name);
  for (const obj of objects.supporting) await createIgnoringConflict(admin, typeOf(obj), obj);

  const tracker = new ReadinessTracker(admin, type, namespace);
  await tracker.start();
  let operator: OperatorProcess | undefined;
  let deleted = false;
  try {
    operator = await startOperator({
      args: ['--namespaces', namespace, ...operatorFlags(settings)],
      kubeconfig: ctx.stack.kubeconfig,
      env: emulatorEnv(proxy.endpoint),
      logFile: join(ctx.logDir, `${scenario.id}.operator.log`),
      entry: ctx.operatorEntry,
      nodeFlags: settings.operatorNodeFlags,
    });
    if (scenario.group.route53RatePerSecond !== undefined)
      proxy.inject(route53RateLimit(scenario.group.route53RatePerSecond));
    const propagation =
      scenario.group.route53PendingMs !== undefined
        ? new Propagation(scenario.group.route53PendingMs)
        : undefined;
    if (propagation !== undefined) proxy.inject(propagation.rule());

    // Create until every object was seen Ready.
    ctx.say(`${scenario.id}: creating ${scenario.size} ${type.kind} objects`);
    const s0 = await snapshot(proxy, operator);
    const t0 = performance.now();
    await forEachLimit(objects.measured, settings.concurrency, async (obj) => {
      tracker.markCreated(obj.metadata.name);
      await createIgnoringConflict(admin, type, obj);
    });
    const lastCreateAnswered = performance.now();
    const lastReady = await tracker.waitAllReady(names, phaseTimeoutMs(scenario));
    const s1 = await snapshot(proxy, operator);
    partial.create = phase(
      s0,
      s1,
      scenario.size,
      lastReady - t0,
      tracker.readyLatencies(),
      requestTiming({ firstRequestAt: t0, lastAnsweredAt: lastCreateAnswered, lastDoneAt: lastReady }),
    );
    if (propagation !== undefined)
      partial.propagation = propagation.result(readyByFqdn(objects.measured, tracker));
    ctx.say(
      `${scenario.id}: all Ready after ${(partial.create.durationMs / 1000).toFixed(1)} s; measuring one resync period`,
    );

    // One resync period with nothing changing: a measuring window, not a synchronisation wait.
    await delay(settings.idleWindowMs);
    const s2 = await snapshot(proxy, operator);
    partial.resync = phase(s1, s2, scenario.size, s2.at - s1.at);
    partial.steadyState = {
      awsCallsPerMinute: Math.round((partial.resync.aws.total * 60_000) / partial.resync.durationMs),
      cpuSecondsPerMinute:
        Math.round(((partial.resync.cpuSeconds * 60_000) / partial.resync.durationMs) * 100) / 100,
    };

    // Delete until every object is gone (finalizers removed: AWS confirmed the deletion).
    ctx.say(`${scenario.id}: deleting`);
    const t3 = performance.now();
    await forEachLimit(names, settings.concurrency, async (name) => {
      tracker.markDeleteRequested(name);
      await deleteIgnoringMissing(admin, type, namespace, name);
    });
    const lastDeleteAnswered = performance.now();
    deleted = true;
    const lastGone = await tracker.waitAllGone(names, phaseTimeoutMs(scenario));
    const s3 = await snapshot(proxy, operator);
    partial.delete = phase(
      s2,
      s3,
      scenario.size,
      Math.max(lastGone, t3) - t3,
      tracker.deleteLatencies(),
      requestTiming({ firstRequestAt: t3, lastAnsweredAt: lastDeleteAnswered, lastDoneAt: lastGone }),
    );
    partial.operator = operatorUse(s3.proc, scenario.size, { afterCreate: s1.proc, afterResync: s2.proc });
    partial.leftovers = await countAwsResources(ctx.aws, zoneIds);
    ctx.say(`${scenario.id}: done`);
    return { ...base, status: 'ok', readyCount: tracker.readyCount(names), ...partial };
  } catch (err) {
    const readyCount = tracker.readyCount(names);
    const message = err instanceof Error ? err.message : String(err);
    ctx.say(`${scenario.id}: FAILED: ${message}`);
    if (operator !== undefined) {
      const s = await operator.sample().catch(() => undefined);
      if (s !== undefined) partial.operator = operatorUse(s, scenario.size);
      if (!deleted) {
        // Best effort, so the next scenario starts from a clean AWS account either way (it also resets moto).
        await forEachLimit(names, settings.concurrency, (name) =>
          deleteIgnoringMissing(admin, type, namespace, name),
        ).catch(() => undefined);
        await tracker.waitAllGone(names, 60_000).catch(() => undefined);
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
    await tracker.stop();
    proxy.clearFaults();
    await admin.delete(`/api/v1/namespaces/${namespace}`).catch(() => undefined);
  }
}
