// `make bench`'s myingress-rollout scenario: a node cluster of its own (started as the node tests
// start theirs, dev/nodeCluster.ts), the operator as a process behind a fault proxy carrying the
// ALB data plane's DescribeTargetHealth rule, and the rollout matrix of bench/lib/rollouts.ts —
// every change with the target-health gate and preStop pause (gate on) and without either
// (gate off) — under load through the data plane's listener on loopback. Reports failed requests
// and Pod timings per change; asserts nothing. A machine that cannot run a node cluster (not root,
// no node images) skips it with the reason in the report.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { EC2Client } from '@aws-sdk/client-ec2';
import { ElasticLoadBalancingV2Client } from '@aws-sdk/client-elastic-load-balancing-v2';
import { AlbDataPlane, DEFAULT_PROPAGATION_DELAY_MS } from '../../dev/albDataPlane/dataPlane.ts';
import { elbSubnetTag, ensureElbSubnets } from '../../dev/awsAccount.ts';
import { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { awsClientConfig, emulatorCredentials, emulatorEnv } from '../../dev/emulator.ts';
import { installCrds, installTargetHealthGate } from '../../dev/installCrds.ts';
import {
  nodeClusterUnavailable,
  nodeImages,
  startNodeCluster,
  type NodeCluster,
} from '../../dev/nodeCluster.ts';
import { KubeClient } from '../../src/runtime/kube/client.ts';
import { loadKubeconfig } from '../../src/runtime/kube/kubeconfigLoad.ts';
import type { BenchSettings } from '../args.ts';
import type { RolloutCaseResult, RolloutSettings, ScenarioResult } from '../report.ts';
import type { Scenario } from '../scenarios.ts';
import { startOperator, type OperatorProcess } from './operatorProcess.ts';
import {
  deployApp,
  enableTargetHealthGate,
  medianOf,
  removeApp,
  rolloutCases,
  rolloutGatePollPeriod,
  rolloutHealthCheckTimeScale,
  rolloutMaxLoadMs,
  rolloutMaxRequests,
  rolloutPreStopSeconds,
  rolloutReplicas,
  runRolloutCase,
  type RolloutRig,
} from './rollouts.ts';
import { RATE, REQUEST_TIMEOUT_MS } from './trafficLoad.ts';

/** What the rollout scenario needs from the bench run. */
export interface RolloutBenchContext {
  readonly settings: BenchSettings;
  /** The run's folder: the node cluster's state and logs, the operator's log. */
  readonly logDir: string;
  readonly say: (line: string) => void;
  /** The CLI entry point the operator runs from (compiled, or src/cli/main.ts). */
  readonly operatorEntry: string;
  /** Called with a stop function while the node cluster runs (undefined once stopped), for Ctrl-C. */
  readonly onCluster?: (stop: (() => Promise<void>) | undefined) => void;
}

/** The health check interval the app's MyIngress asks for (bench/lib/rollouts.ts's manifest). */
const specHealthCheckIntervalSeconds = 5;

/** What the matrix runs with. Pure. */
export function rolloutSettings(): RolloutSettings {
  return {
    preStopSeconds: rolloutPreStopSeconds,
    propagationDelayMs: DEFAULT_PROPAGATION_DELAY_MS,
    healthCheckTimeScale: rolloutHealthCheckTimeScale,
    healthCheckIntervalSeconds: specHealthCheckIntervalSeconds,
    gatePollPeriod: rolloutGatePollPeriod,
    requestsPerSecond: RATE,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    maxRequestsPerCase: rolloutMaxRequests,
    maxLoadMsPerCase: rolloutMaxLoadMs,
    replicas: rolloutReplicas,
  };
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Runs the matrix; never throws: a failure is the result's `error`, a machine without a node cluster a `skipped` result. */
export async function runRolloutScenario(
  ctx: RolloutBenchContext,
  scenario: Scenario,
): Promise<ScenarioResult> {
  const base = {
    id: scenario.id,
    group: scenario.group.name,
    kind: scenario.group.type.kind,
    size: scenario.size,
    zones: 0,
    route53RatePerSecond: null,
  };
  const unavailable = await nodeClusterUnavailable();
  if (unavailable !== undefined) {
    ctx.say(`${scenario.id}: SKIPPED, this machine cannot run a node cluster: ${unavailable}`);
    return { ...base, status: 'skipped', skipReason: unavailable, readyCount: 0 };
  }
  const cases: RolloutCaseResult[] = [];
  let cluster: NodeCluster | undefined;
  let proxy: AwsFaultProxy | undefined;
  let dataPlane: AlbDataPlane | undefined;
  let operator: OperatorProcess | undefined;
  let rig: RolloutRig | undefined;
  let elb: ElasticLoadBalancingV2Client | undefined;
  const namespaces: string[] = [];
  let nodeClusterStartMs = 0;
  let error: string | undefined;
  try {
    ctx.say(`${scenario.id}: starting a node cluster (containerd, kubelet, kube-proxy; root)`);
    const t0 = Date.now();
    // Short: unix socket paths below it must stay under 100 characters.
    cluster = await startNodeCluster({
      dir: join(ctx.logDir, 'nc'),
      log: (line) => ctx.say(`${scenario.id}: node: ${line}`),
    });
    nodeClusterStartMs = Date.now() - t0;
    const running = cluster;
    ctx.onCluster?.(() => running.stop());
    const kubeconfig = cluster.controlPlane.kubeconfigPath('admin');
    const admin = new KubeClient(loadKubeconfig(kubeconfig));
    await installCrds(admin);
    await installTargetHealthGate(admin);
    const ec2 = new EC2Client(awsClientConfig(cluster.emulator.endpoint));
    await ensureElbSubnets(ec2, emulatorCredentials.region).finally(() => ec2.destroy());
    proxy = await AwsFaultProxy.start({ target: cluster.emulator.endpoint });
    dataPlane = await AlbDataPlane.start({
      endpoint: cluster.emulator.endpoint,
      healthCheckTimeScale: rolloutHealthCheckTimeScale,
    });
    proxy.inject(dataPlane.describeTargetHealthRule());
    elb = new ElasticLoadBalancingV2Client(awsClientConfig(proxy.endpoint));
    rig = {
      admin,
      kubeconfig,
      elb,
      dataPlane,
      image: nodeImages.hello.name,
      subnetTag: { key: elbSubnetTag.Key, value: elbSubnetTag.Value },
      log: (line) => ctx.say(`${scenario.id}: ${line}`),
    };
    const prefix = `bench-rollout-${randomBytes(3).toString('hex')}`;
    const gated = `${prefix}-gated`;
    const plain = `${prefix}-plain`;
    for (const ns of [gated, plain]) {
      await admin.create('/api/v1/namespaces', { metadata: { name: ns } });
      namespaces.push(ns);
    }
    await enableTargetHealthGate(rig, gated);
    operator = await startOperator({
      args: [
        '--namespaces',
        `${gated},${plain}`,
        '--leader-election-namespace',
        gated,
        '--leader-elect=false',
        '--target-health-gate-poll-period',
        rolloutGatePollPeriod,
        ...ctx.settings.operatorArgs,
      ],
      kubeconfig,
      env: emulatorEnv(proxy.endpoint),
      logFile: join(ctx.logDir, `${scenario.id}.operator.log`),
      entry: ctx.operatorEntry,
      nodeFlags: ctx.settings.operatorNodeFlags,
    });
    for (const [ns, gate] of [
      [gated, 'on'],
      [plain, 'off'],
    ] as const) {
      ctx.say(`${scenario.id}: gate ${gate}: deploying the app in ${ns}`);
      const app = await deployApp(rig, ns, gate === 'on' ? rolloutPreStopSeconds : undefined);
      for (const which of rolloutCases) {
        ctx.say(`${scenario.id}: gate ${gate}: ${which}`);
        try {
          const r = await runRolloutCase(rig, ns, app, which);
          cases.push({
            case: which,
            gate,
            status: 'ok',
            sentRequests: r.sent,
            failedRequests: r.failed,
            failureKinds: r.failureKinds,
            podStartToFirstRequestMs: { values: r.firstRequestMs, median: medianOf(r.firstRequestMs) },
            podDeletionToLastRequestMs: { values: r.lastRequestMs, median: medianOf(r.lastRequestMs) },
            durationMs: r.durationMs,
          });
        } catch (err) {
          // The next case brings the Deployment to its own start first; if it cannot, it fails too.
          ctx.say(`${scenario.id}: gate ${gate}: ${which} failed: ${message(err)}`);
          cases.push({ case: which, gate, status: 'failed', error: message(err) });
        }
      }
    }
  } catch (err) {
    error = `${message(err)}${operator !== undefined ? `\n--- operator log tail ---\n${operator.tail()}` : ''}`;
    ctx.say(`${scenario.id} failed: ${message(err)}`);
  } finally {
    if (rig !== undefined && operator !== undefined) for (const ns of namespaces) await removeApp(rig, ns);
    await operator?.stop();
    await dataPlane?.stop();
    await proxy?.stop();
    elb?.destroy();
    await cluster?.stop();
    ctx.onCluster?.(undefined);
  }
  const failedCases = cases.filter((c) => c.status === 'failed');
  if (error === undefined && failedCases.length > 0)
    error = `${failedCases.length} of ${cases.length} cases failed: ${failedCases.map((c) => `${c.case} (gate ${c.gate})`).join(', ')}`;
  return {
    ...base,
    status: error === undefined ? 'ok' : 'failed',
    ...(error !== undefined ? { error } : {}),
    readyCount: cases.length - failedCases.length,
    rollout: { settings: rolloutSettings(), nodeClusterStartMs, cases },
  };
}
