// Zero-downtime rollouts through a MyIngress, counted request by request: the sample app's
// Deployment (3 replicas) on the node cluster behind a MyIngress, the operator (AWS through a fault
// proxy), and the ALB data plane serving the listener and health-checking the Pods. Load runs at 50
// requests/s through each change — rolling updates (maxSurge 1 / maxUnavailable 0, and maxSurge 0 /
// maxUnavailable 1), a scale 3→1 and 1→3, a Pod deleted — until the load balancer has settled.
//
// In a namespace with the target-health readiness gate and the documented preStop pause
// (docs/myingress.md#zero-downtime-rollouts) no request may fail. In a namespace without either
// (the usual Deployment) the same rolling update is counted too, and must show failures: the test
// is known to be able to fail. The full matrix, gate on and off, is `make bench`'s myingress-rollout.
import { CreateTagsCommand, EC2Client } from '@aws-sdk/client-ec2';
import {
  DescribeTargetHealthCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlbDataPlane, Endpoint } from '../../dev/albDataPlane/dataPlane.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { installCrds, installTargetHealthGate } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { myIngressType } from '../../src/kinds/myingress/api.ts';
import { targetHealthGate, type PodLike } from '../../src/kinds/myingress/readinessGate.ts';
import { startAlbDataPlane } from '../support/albDataPlane.ts';
import { kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { kubectl } from '../support/kubectl.ts';
import { spawnSkylift, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { nodeInfo, stackInfo, startFaultProxy } from '../support/stack.ts';
import { ok, RATE, report, startLoad, tally, type Outcome } from '../support/trafficLoad.ts';
import { vpcWithTwoSubnets } from '../support/vpc.ts';

/** The preStop pause of the gated Deployment (docs/myingress.md: at least the data plane's propagation delay plus Skylift's deregistration). */
const PRE_STOP_SECONDS = 8;
const SUBNET_TAG = 'skylift.test/rollout';
const admin = kubeClient();
let gated: string;
let plain: string;
let operator: SkyliftProcess | undefined;
let proxy: AwsFaultProxy | undefined;
let dp: AlbDataPlane | undefined;
let ec2: EC2Client | undefined;
let elb: ElasticLoadBalancingV2Client | undefined;

const app = (image: string, preStop: boolean): string => `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: { app: web }
  strategy:
    type: RollingUpdate
    rollingUpdate: { maxSurge: 1, maxUnavailable: 0 }
  template:
    metadata:
      labels: { app: web }
    spec:
      terminationGracePeriodSeconds: ${preStop ? PRE_STOP_SECONDS + 10 : 2}
      containers:
        - name: hello
          image: ${image}
          ports: [{ containerPort: 8080 }]
          readinessProbe:
            httpGet: { path: /, port: 8080 }
            periodSeconds: 1${
              preStop
                ? `
          lifecycle:
            preStop:
              sleep: { seconds: ${PRE_STOP_SECONDS} }`
                : ''
            }
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: { app: web }
  ports: [{ port: 80, targetPort: 8080 }]
---
apiVersion: aws.skylift.dev/v1alpha1
kind: MyIngress
metadata:
  name: shop
spec:
  scheme: internet-facing
  subnetSelector:
    tags:
      ${SUBNET_TAG}: '1'
  listeners:
    - port: 80
      protocol: HTTP
      defaultAction:
        forward:
          service:
            name: web
            port: 80
            healthCheck:
              path: /
              intervalSeconds: 5
              timeoutSeconds: 2
              healthyThresholdCount: 2
              unhealthyThresholdCount: 2
`;

interface PodView extends PodLike {
  readonly metadata: PodLike['metadata'] & { readonly creationTimestamp?: string };
}

/** The Deployment's Pods that are Ready and not being deleted, name → IP. */
async function readyPods(ns: string): Promise<Map<string, string>> {
  const pods = await admin.get<{ items: PodView[] }>(`/api/v1/namespaces/${ns}/pods`, {
    labelSelector: 'app=web',
  });
  return new Map(
    pods.items
      .filter(
        (p) =>
          p.metadata.deletionTimestamp === undefined &&
          p.status?.podIP !== undefined &&
          p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
      )
      .map((p) => [p.metadata.name, p.status?.podIP ?? '']),
  );
}

/** Pod name → when it was created (ms), for every Pod of the Deployment there is now. */
async function podStarts(ns: string): Promise<Map<string, number>> {
  const pods = await admin.get<{ items: PodView[] }>(`/api/v1/namespaces/${ns}/pods`, {
    labelSelector: 'app=web',
  });
  return new Map(pods.items.map((p) => [p.metadata.name, Date.parse(p.metadata.creationTimestamp ?? '')]));
}

/** Waits until the target group holds exactly the `count` Ready Pods, all healthy (as the data plane measured). */
async function serving(
  ns: string,
  tgArn: string,
  count: number,
  description: string,
): Promise<Map<string, string>> {
  return waitFor(
    async () => {
      const pods = await readyPods(ns);
      if (pods.size !== count) return undefined;
      const h = await elb?.send(new DescribeTargetHealthCommand({ TargetGroupArn: tgArn }));
      const healthy = (h?.TargetHealthDescriptions ?? [])
        .filter((d) => d.TargetHealth?.State === 'healthy')
        .map((d) => `${d.Target?.Id ?? ''}:${d.Target?.Port ?? 0}`)
        .sort();
      const want = [...pods.values()].map((ip) => `${ip}:8080`).sort();
      return JSON.stringify(healthy) === JSON.stringify(want) ? pods : undefined;
    },
    { timeoutMs: 180_000, description: `${ns}: ${description}`, intervalMs: 250 },
  );
}

/** Deploys the app in `ns` and waits until three Pods serve through the listener. */
async function deploy(ns: string, preStop: boolean): Promise<{ tg: string; ep: Endpoint }> {
  const applied = await kubectl(
    stackInfo().adminKubeconfig,
    ['apply', '-n', ns, '-f', '-'],
    app(nodeInfo().helloImage, preStop),
  );
  expect(applied.stderr).toBe('');
  const shop = await waitFor(
    async () => {
      const m = await readObject<{
        metadata: { name: string };
        status?: { arn?: string; targetGroups?: { arn: string }[] };
      }>(admin, myIngressType, ns, 'shop');
      const lb = m?.status?.arn;
      const tg = m?.status?.targetGroups?.[0]?.arn;
      return lb !== undefined && tg !== undefined ? { lb, tg } : undefined;
    },
    { timeoutMs: 60_000, description: `${ns}: MyIngress shop has a load balancer and a target group` },
  );
  await serving(ns, shop.tg, 3, 'three Pods serving');
  const ep = await waitFor(() => dp?.endpointOf(shop.lb, 80), {
    timeoutMs: 30_000,
    description: `${ns}: the data plane serves listener 80`,
  });
  return { tg: shop.tg, ep };
}

/** What one change under load came to. */
interface Run {
  readonly outcomes: Outcome[];
  readonly failed: number;
  /** For each Pod the change started: ms from its creation to the first request it answered. */
  readonly firstRequestMs: number[];
  /** For each Pod the change removed: ms from its deletion to the last request it answered. */
  readonly lastRequestMs: number[];
}

/**
 * Waits until the Deployment has exactly `count` Pods, none of them terminating, all Ready and
 * healthy in the target group; meanwhile notes when each terminating Pod was deleted (its
 * deletionTimestamp less its grace period).
 */
async function settled(
  ns: string,
  tgArn: string,
  count: number,
  description: string,
  deletedAt: Map<string, number>,
): Promise<void> {
  await waitFor(
    async () => {
      const pods = await admin.get<{
        items: (PodView & { metadata: { deletionGracePeriodSeconds?: number } })[];
      }>(`/api/v1/namespaces/${ns}/pods`, { labelSelector: 'app=web' });
      for (const p of pods.items) {
        const t = p.metadata.deletionTimestamp;
        if (t !== undefined && !deletedAt.has(p.metadata.name))
          deletedAt.set(p.metadata.name, Date.parse(t) - (p.metadata.deletionGracePeriodSeconds ?? 0) * 1000);
      }
      return pods.items.length === count &&
        pods.items.every((p) => p.metadata.deletionTimestamp === undefined)
        ? true
        : undefined;
    },
    {
      timeoutMs: 180_000,
      description: `${ns}: ${description}: ${count} Pods, none terminating`,
      intervalMs: 250,
    },
  );
  await serving(ns, tgArn, count, `${description}: ${count} Pods serving`);
}

/**
 * Runs `change` under load (at most 12,000 requests / 240 s) and keeps the load on until the
 * Deployment has settled at `count` Pods (none terminating, all serving) and a second of requests
 * (every one before it answered) all succeeded; reports it.
 */
async function underLoad(
  ns: string,
  s: { tg: string; ep: Endpoint },
  phase: string,
  count: number,
  change: () => Promise<void>,
): Promise<Run> {
  const before = await podStarts(ns);
  const load = startLoad(s.ep, 12_000, 240_000);
  const started = Date.now();
  const deletedAt = new Map<string, number>();
  await change();
  await settled(ns, s.tg, count, phase, deletedAt);
  await waitFor(() => load.lastAnswered(RATE)?.every(ok) || undefined, {
    timeoutMs: 60_000,
    description: `${ns}: ${phase}: a second of requests all answered`,
    intervalMs: 100,
  });
  const outcomes = await load.stop();
  report(`${ns} ${phase}`, outcomes, started, 'rollout');
  const after = await podStarts(ns);
  const firstRequestMs: number[] = [];
  for (const [pod, created] of after) {
    if (before.has(pod)) continue;
    const first = outcomes.find((o) => o.pod === pod);
    if (first !== undefined) firstRequestMs.push(first.at - created);
  }
  const lastRequestMs: number[] = [];
  for (const [pod, deleted] of deletedAt) {
    const answered = outcomes.filter((o) => o.pod === pod && ok(o));
    const last = answered[answered.length - 1];
    if (last !== undefined) lastRequestMs.push(last.at - deleted);
  }
  process.stdout.write(
    `[rollout] ${ns} ${phase}: Pod start → first request ${JSON.stringify(firstRequestMs)} ms; Pod deletion → last request it answered ${JSON.stringify(lastRequestMs)} ms\n`,
  );
  return { outcomes, failed: tally(outcomes).failures.length, firstRequestMs, lastRequestMs };
}

const kc = (): string => stackInfo().adminKubeconfig;
const run = async (args: string[]): Promise<void> => {
  const out = await kubectl(kc(), args);
  expect(out.code, out.stderr).toBe(0);
};

/** Restarts the Deployment's Pods and waits until the rollout is complete. */
async function rollout(ns: string): Promise<void> {
  await run(['rollout', 'restart', '-n', ns, 'deployment/web']);
  await run(['rollout', 'status', '-n', ns, 'deployment/web', '--timeout=180s']);
}

beforeAll(async () => {
  await installCrds(admin);
  await installTargetHealthGate(admin);
  gated = await newNamespace(admin, 'rollout-gated');
  await admin.patch(
    `/api/v1/namespaces/${gated}`,
    { metadata: { labels: { [targetHealthGate.label]: targetHealthGate.enabled } } },
    'merge',
  );
  plain = await newNamespace(admin, 'rollout-plain');
  // The apiserver loads a new policy asynchronously: dry-run Pods until one comes back gated.
  await waitFor(
    async () => {
      const p = await admin.create<PodLike>(
        `/api/v1/namespaces/${gated}/pods`,
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'probe' },
          spec: { containers: [{ name: 'c', image: nodeInfo().helloImage }] },
        },
        { dryRun: 'All' },
      );
      return (p.spec?.readinessGates ?? []).length > 0 ? true : undefined;
    },
    { timeoutMs: 30_000, description: 'the target-health gate policy is in force', intervalMs: 200 },
  );
  ec2 = new EC2Client(awsClientConfig(stackInfo().awsEndpoint));
  const { subnets } = await vpcWithTwoSubnets(ec2, 79);
  await ec2.send(new CreateTagsCommand({ Resources: subnets, Tags: [{ Key: SUBNET_TAG, Value: '1' }] }));
  proxy = await startFaultProxy();
  // Health checks every 0.5 s (5 s scaled); the propagation delay stays the default estimate (5 s).
  dp = await startAlbDataPlane({ proxy, healthCheckTimeScale: 0.1 });
  elb = new ElasticLoadBalancingV2Client(awsClientConfig(proxy.endpoint));
  operator = spawnSkylift(`${gated},${plain}`, proxy.endpoint, ['--target-health-gate-poll-period', '500ms']);
});

afterAll(async () => {
  for (const ns of [gated, plain]) {
    await admin.delete(resourcePath(myIngressType, { namespace: ns, name: 'shop' })).catch(() => undefined);
    await waitFor(
      async () => ((await readObject(admin, myIngressType, ns, 'shop')) === undefined ? true : undefined),
      { timeoutMs: 60_000, description: `${ns}: MyIngress shop gone` },
    ).catch((err: unknown) => {
      process.stdout.write(`[rollout] cleanup: ${err instanceof Error ? err.message : String(err)}\n`);
    });
  }
  await operator?.stop();
  await dp?.stop();
  await proxy?.stop();
  elb?.destroy();
  ec2?.destroy();
});

describe('rollouts through a MyIngress', () => {
  it('with the readiness gate and the preStop pause, no request fails', async () => {
    const s = await deploy(gated, true);
    const results: Record<string, number> = {};
    results['rolling maxSurge 1 / maxUnavailable 0'] = (
      await underLoad(gated, s, 'rolling maxSurge 1 / maxUnavailable 0', 3, () => rollout(gated))
    ).failed;
    await run([
      'patch',
      '-n',
      gated,
      'deployment/web',
      '--type=merge',
      '-p',
      '{"spec":{"strategy":{"rollingUpdate":{"maxSurge":0,"maxUnavailable":1}}}}',
    ]);
    results['rolling maxSurge 0 / maxUnavailable 1'] = (
      await underLoad(gated, s, 'rolling maxSurge 0 / maxUnavailable 1', 3, () => rollout(gated))
    ).failed;
    results['scale 3→1'] = (
      await underLoad(gated, s, 'scale 3→1', 1, () =>
        run(['scale', '-n', gated, 'deployment/web', '--replicas=1']),
      )
    ).failed;
    results['scale 1→3'] = (
      await underLoad(gated, s, 'scale 1→3', 3, () =>
        run(['scale', '-n', gated, 'deployment/web', '--replicas=3']),
      )
    ).failed;
    const [victim] = [...(await readyPods(gated)).keys()];
    results['a Pod deleted'] = (
      await underLoad(gated, s, 'a Pod deleted', 3, () =>
        run(['delete', 'pod', '-n', gated, victim ?? '', '--wait=false']),
      )
    ).failed;
    expect(results).toEqual({
      'rolling maxSurge 1 / maxUnavailable 0': 0,
      'rolling maxSurge 0 / maxUnavailable 1': 0,
      'scale 3→1': 0,
      'scale 1→3': 0,
      'a Pod deleted': 0,
    });
  });

  it('without them, the same rolling update fails requests (the test can tell)', async () => {
    const s = await deploy(plain, false);
    const r = await underLoad(
      plain,
      s,
      'rolling maxSurge 1 / maxUnavailable 0 (no gate, no preStop)',
      3,
      () => rollout(plain),
    );
    expect(r.failed).toBeGreaterThan(0);
  });
});
