// Rollouts through a MyIngress under load, counted request by request: the sample app's Deployment
// on a node cluster behind Service `web` and MyIngress `shop`, load through the ALB data plane's
// listener, and each change (rolling update, scale, a Pod deleted) held under load until the
// Deployment has settled. Shared by test/node/rollout.test.ts (which asserts on the failures) and
// `make bench`'s myingress-rollout scenario (which reports them): what is deployed, how a change is
// made and how it is measured live here once. Every wait and the load are bounded in time and count.
import {
  DescribeTargetHealthCommand,
  type ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import type { AlbDataPlane, Endpoint } from '../../dev/albDataPlane/dataPlane.ts';
import { kubectl } from '../../dev/kubectl.ts';
import { waitFor } from '../../dev/wait.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { myIngressType } from '../../src/kinds/myingress/api.ts';
import { targetHealthGate, type PodLike } from '../../src/kinds/myingress/readinessGate.ts';
import { KubeApiError, type KubeClient } from '../../src/runtime/kube/client.ts';
import { setTimeout as delay } from 'node:timers/promises';
import { percentile } from './stats.ts';
import { ok, RATE, report, startLoad, tally, type Outcome } from './trafficLoad.ts';

/**
 * The preStop pause of the gated Deployment, seconds (docs/myingress.md: at least the data plane's
 * propagation delay plus Skylift's deregistration).
 */
export const rolloutPreStopSeconds = 8;
/** The data plane's health checks run this much faster than the spec says (5 s → 0.5 s). */
export const rolloutHealthCheckTimeScale = 0.1;
/** The operator's `--target-health-gate-poll-period` while a gated Pod waits. */
export const rolloutGatePollPeriod = '500ms';
/** Replicas the Deployment starts with (and returns to after a scale 3→1). */
export const rolloutReplicas = 3;
/** Requests one change may send at most (at {@link RATE}/s: 240 s). */
export const rolloutMaxRequests = 12_000;
/** How long one change may keep the load on at most. */
export const rolloutMaxLoadMs = 240_000;

/** The changes measured, in the order a matrix runs them. */
export const rolloutCases = [
  'rolling maxSurge 1 / maxUnavailable 0',
  'rolling maxSurge 0 / maxUnavailable 1',
  'scale 3→1',
  'scale 1→3',
  'a Pod deleted',
] as const;

/** One change measured under load. */
export type RolloutCase = (typeof rolloutCases)[number];

/** What a rollout driver works with: the cluster, AWS as the operator sees it, the data plane. */
export interface RolloutRig {
  /** Admin client of the node cluster's apiserver. */
  readonly admin: KubeClient;
  /** The admin kubeconfig file, for kubectl. */
  readonly kubeconfig: string;
  /**
   * ELBv2 through the fault proxy carrying the data plane's DescribeTargetHealth rule: target
   * health as the data plane measured it, as the operator reads it.
   */
  readonly elb: ElasticLoadBalancingV2Client;
  readonly dataPlane: AlbDataPlane;
  /** The sample app image, imported into the node (`nodeImages.hello.name`). */
  readonly image: string;
  /** The subnet tag the MyIngress selects its subnets by. */
  readonly subnetTag: { readonly key: string; readonly value: string };
  /** Progress and per-change lines. */
  readonly log: (line: string) => void;
}

/** A deployed app: its MyIngress's load balancer and target group, and the listener's endpoint. */
export interface DeployedApp {
  readonly lb: string;
  readonly tg: string;
  readonly ep: Endpoint;
}

/** What one change under load came to. */
export interface RolloutRun {
  readonly outcomes: readonly Outcome[];
  /** Requests sent (all answered or failed by the time the run returns). */
  readonly sent: number;
  /** Requests not answered 2xx by a Pod. */
  readonly failed: number;
  /** Failed requests by `status reason` (status 0: no HTTP answer). */
  readonly failureKinds: Readonly<Record<string, number>>;
  /** For each Pod the change started: ms from its creation to the first request it answered. */
  readonly firstRequestMs: number[];
  /** For each Pod the change removed: ms from its deletion to the last request it answered. */
  readonly lastRequestMs: number[];
  /** From the load's start to its stop (the change and the wait for it to settle), ms. */
  readonly durationMs: number;
}

/**
 * The app's manifest: Deployment `web` of `replicas` Pods (with the preStop pause when
 * `preStopSeconds` is set), Service `web`, MyIngress `shop` in the subnets carrying `subnetTag`.
 * Pure.
 */
export function rolloutManifest(
  image: string,
  preStopSeconds: number | undefined,
  subnetTag: RolloutRig['subnetTag'],
  replicas = rolloutReplicas,
): string {
  const preStop = preStopSeconds !== undefined;
  return `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: ${replicas}
  selector:
    matchLabels: { app: web }
  strategy:
    type: RollingUpdate
    rollingUpdate: { maxSurge: 1, maxUnavailable: 0 }
  template:
    metadata:
      labels: { app: web }
    spec:
      terminationGracePeriodSeconds: ${preStop ? preStopSeconds + 10 : 2}
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
              sleep: { seconds: ${preStopSeconds} }`
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
      ${subnetTag.key}: '${subnetTag.value}'
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
}

interface PodView extends PodLike {
  readonly metadata: PodLike['metadata'] & {
    readonly creationTimestamp?: string;
    readonly deletionGracePeriodSeconds?: number;
  };
}

async function appPods(rig: RolloutRig, ns: string): Promise<PodView[]> {
  const pods = await rig.admin.get<{ items: PodView[] }>(`/api/v1/namespaces/${ns}/pods`, {
    labelSelector: 'app=web',
  });
  return pods.items;
}

/** Runs kubectl against the rig's cluster; throws with its stderr unless it exits 0. */
async function run(rig: RolloutRig, args: readonly string[], input?: string): Promise<void> {
  const out = await kubectl(rig.kubeconfig, args, input);
  if (out.code !== 0) throw new Error(`kubectl ${args.join(' ')}: exit ${out.code}: ${out.stderr.trim()}`);
}

/** The Deployment's Pods that are Ready and not being deleted, name → IP. */
export async function readyPods(rig: RolloutRig, ns: string): Promise<Map<string, string>> {
  return new Map(
    (await appPods(rig, ns))
      .filter(
        (p) =>
          p.metadata.deletionTimestamp === undefined &&
          p.status?.podIP !== undefined &&
          p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
      )
      .map((p) => [p.metadata.name, p.status?.podIP ?? '']),
  );
}

/** Pod name → when it was created (ms; the apiserver keeps whole seconds), for every Pod of the Deployment now. */
async function podStarts(rig: RolloutRig, ns: string): Promise<Map<string, number>> {
  return new Map(
    (await appPods(rig, ns)).map((p) => [p.metadata.name, Date.parse(p.metadata.creationTimestamp ?? '')]),
  );
}

/** Waits until the target group holds exactly the `count` Ready Pods, all healthy (as the data plane measured). */
async function serving(
  rig: RolloutRig,
  ns: string,
  tgArn: string,
  count: number,
  description: string,
): Promise<Map<string, string>> {
  return waitFor(
    async () => {
      const pods = await readyPods(rig, ns);
      if (pods.size !== count) return undefined;
      const h = await rig.elb.send(new DescribeTargetHealthCommand({ TargetGroupArn: tgArn }));
      const healthy = (h.TargetHealthDescriptions ?? [])
        .filter((d) => d.TargetHealth?.State === 'healthy')
        .map((d) => `${d.Target?.Id ?? ''}:${d.Target?.Port ?? 0}`)
        .sort();
      const want = [...pods.values()].map((ip) => `${ip}:8080`).sort();
      return JSON.stringify(healthy) === JSON.stringify(want) ? pods : undefined;
    },
    { timeoutMs: 180_000, description: `${ns}: ${description}`, intervalMs: 250 },
  );
}

/**
 * Labels `ns` for the target-health readiness gate and waits until the apiserver's admission policy
 * (installed with installTargetHealthGate) gates its Pods: the apiserver loads a new policy
 * asynchronously, so Pods are dry-run until one comes back gated (at most 30 s).
 */
export async function enableTargetHealthGate(rig: RolloutRig, ns: string): Promise<void> {
  await rig.admin.patch(
    `/api/v1/namespaces/${ns}`,
    { metadata: { labels: { [targetHealthGate.label]: targetHealthGate.enabled } } },
    'merge',
  );
  await waitFor(
    async () => {
      const p = await rig.admin.create<PodLike>(
        `/api/v1/namespaces/${ns}/pods`,
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'probe' },
          spec: { containers: [{ name: 'c', image: rig.image }] },
        },
        { dryRun: 'All' },
      );
      return (p.spec?.readinessGates ?? []).length > 0 ? true : undefined;
    },
    { timeoutMs: 30_000, description: 'the target-health gate policy is in force', intervalMs: 200 },
  );
}

/**
 * Deploys the app in `ns` (with the preStop pause when `preStopSeconds` is set) and waits until
 * {@link rolloutReplicas} Pods serve through the listener.
 */
export async function deployApp(
  rig: RolloutRig,
  ns: string,
  preStopSeconds: number | undefined,
): Promise<DeployedApp> {
  const applied = await kubectl(
    rig.kubeconfig,
    ['apply', '-n', ns, '-f', '-'],
    rolloutManifest(rig.image, preStopSeconds, rig.subnetTag),
  );
  if (applied.code !== 0 || applied.stderr !== '')
    throw new Error(`${ns}: kubectl apply: exit ${applied.code}: ${applied.stderr.trim()}`);
  const shop = await waitFor(
    async () => {
      let m: { status?: { arn?: string; targetGroups?: { arn: string }[] } };
      try {
        m = await rig.admin.get(resourcePath(myIngressType, { namespace: ns, name: 'shop' }));
      } catch (err) {
        if (err instanceof KubeApiError && err.statusCode === 404) return undefined;
        throw err;
      }
      const lb = m.status?.arn;
      const tg = m.status?.targetGroups?.[0]?.arn;
      return lb !== undefined && tg !== undefined ? { lb, tg } : undefined;
    },
    { timeoutMs: 60_000, description: `${ns}: MyIngress shop has a load balancer and a target group` },
  );
  await serving(rig, ns, shop.tg, rolloutReplicas, `${rolloutReplicas} Pods serving`);
  const ep = await waitFor(() => rig.dataPlane.endpointOf(shop.lb, 80), {
    timeoutMs: 30_000,
    description: `${ns}: the data plane serves listener 80`,
  });
  return { ...shop, ep };
}

/**
 * Deletes MyIngress `shop` in `ns` and waits (at most 60 s) until it is gone, so its load balancer
 * is deleted while the operator still runs. Never throws: what went wrong is logged.
 */
export async function removeApp(rig: RolloutRig, ns: string): Promise<void> {
  const path = resourcePath(myIngressType, { namespace: ns, name: 'shop' });
  await rig.admin.delete(path).catch(() => undefined);
  await waitFor(
    async () => {
      try {
        await rig.admin.get(path);
        return undefined;
      } catch (err) {
        if (err instanceof KubeApiError && err.statusCode === 404) return true;
        throw err;
      }
    },
    { timeoutMs: 60_000, description: `${ns}: MyIngress shop gone` },
  ).catch((err: unknown) => {
    rig.log(`cleanup: ${err instanceof Error ? err.message : String(err)}`);
  });
}

/** Notes in `deletedAt` when each terminating Pod of `pods` was deleted (its deletionTimestamp less its grace period). */
function noteDeletions(pods: readonly PodView[], deletedAt: Map<string, number>): void {
  for (const p of pods) {
    const t = p.metadata.deletionTimestamp;
    if (t !== undefined && !deletedAt.has(p.metadata.name))
      deletedAt.set(p.metadata.name, Date.parse(t) - (p.metadata.deletionGracePeriodSeconds ?? 0) * 1000);
  }
}

/**
 * Waits until the Deployment has exactly `count` Pods, none of them terminating, all Ready and
 * healthy in the target group; meanwhile notes when each terminating Pod was deleted.
 */
async function settled(
  rig: RolloutRig,
  ns: string,
  tgArn: string,
  count: number,
  description: string,
  deletedAt: Map<string, number>,
): Promise<void> {
  await waitFor(
    async () => {
      const pods = await appPods(rig, ns);
      noteDeletions(pods, deletedAt);
      return pods.length === count && pods.every((p) => p.metadata.deletionTimestamp === undefined)
        ? true
        : undefined;
    },
    {
      timeoutMs: 180_000,
      description: `${ns}: ${description}: ${count} Pods, none terminating`,
      intervalMs: 250,
    },
  );
  await serving(rig, ns, tgArn, count, `${description}: ${count} Pods serving`);
}

/**
 * Runs `change` under load (at most {@link rolloutMaxRequests} requests / {@link rolloutMaxLoadMs})
 * and keeps the load on until the Deployment has settled at `count` Pods (none terminating, all
 * serving) and a second of requests (every one before it answered) all succeeded; logs and
 * returns what it came to.
 */
export async function underLoad(
  rig: RolloutRig,
  ns: string,
  app: DeployedApp,
  phase: string,
  count: number,
  change: () => Promise<void>,
): Promise<RolloutRun> {
  const before = await podStarts(rig, ns);
  const load = startLoad(app.ep, rolloutMaxRequests, rolloutMaxLoadMs);
  const started = Date.now();
  const deletedAt = new Map<string, number>();
  // Pods leave while `change` runs too (a rollout waits for its end, and a Pod without a preStop
  // pause is gone within its 2 s grace): look for terminating ones every 250 ms while the load is on.
  const watching = new AbortController();
  const watcher = (async (): Promise<void> => {
    const until = started + rolloutMaxLoadMs;
    while (!watching.signal.aborted && Date.now() < until) {
      await appPods(rig, ns).then(
        (pods) => noteDeletions(pods, deletedAt),
        () => undefined,
      );
      await delay(250);
    }
  })();
  let outcomes: Outcome[];
  try {
    await change();
    await settled(rig, ns, app.tg, count, phase, deletedAt);
    await waitFor(() => load.lastAnswered(RATE)?.every(ok) || undefined, {
      timeoutMs: 60_000,
      description: `${ns}: ${phase}: a second of requests all answered`,
      intervalMs: 100,
    });
  } finally {
    watching.abort();
    outcomes = await load.stop();
    await watcher;
  }
  const durationMs = Date.now() - started;
  report(`${ns} ${phase}`, outcomes, started, 'rollout');
  const after = await podStarts(rig, ns);
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
  rig.log(
    `${ns} ${phase}: Pod start → first request ${JSON.stringify(firstRequestMs)} ms; Pod deletion → last request it answered ${JSON.stringify(lastRequestMs)} ms`,
  );
  const { failures } = tally(outcomes);
  const failureKinds: Record<string, number> = {};
  for (const f of failures) failureKinds[f] = (failureKinds[f] ?? 0) + 1;
  return {
    outcomes,
    sent: outcomes.length,
    failed: failures.length,
    failureKinds,
    firstRequestMs,
    lastRequestMs,
    durationMs,
  };
}

/** The Deployment's `spec.replicas`. */
async function replicasOf(rig: RolloutRig, ns: string): Promise<number> {
  const d = await rig.admin.get<{ spec?: { replicas?: number } }>(
    `/apis/apps/v1/namespaces/${ns}/deployments/web`,
  );
  return d.spec?.replicas ?? 1;
}

/** Scales to `count` (outside any load) and waits until it has settled there; nothing if it is there already. */
async function scaledTo(rig: RolloutRig, ns: string, app: DeployedApp, count: number): Promise<void> {
  if ((await replicasOf(rig, ns)) === count) return;
  await run(rig, ['scale', '-n', ns, 'deployment/web', `--replicas=${count}`]);
  await settled(rig, ns, app.tg, count, `prepared at ${count}`, new Map());
}

/** Sets the Deployment's rolling update strategy (no rollout: the Pod template is unchanged). */
async function strategy(
  rig: RolloutRig,
  ns: string,
  maxSurge: number,
  maxUnavailable: number,
): Promise<void> {
  await run(rig, [
    'patch',
    '-n',
    ns,
    'deployment/web',
    '--type=merge',
    '-p',
    JSON.stringify({ spec: { strategy: { rollingUpdate: { maxSurge, maxUnavailable } } } }),
  ]);
}

/** Restarts the Deployment's Pods and waits until the rollout is complete (at most 180 s). */
async function restart(rig: RolloutRig, ns: string): Promise<void> {
  await run(rig, ['rollout', 'restart', '-n', ns, 'deployment/web']);
  await run(rig, ['rollout', 'status', '-n', ns, 'deployment/web', '--timeout=180s']);
}

/**
 * Measures one change under load in `ns`. Before the load starts it brings the Deployment where the
 * change begins (the strategy of a rolling update; 3 replicas, or 1 for a scale 1→3), so cases may
 * run in any order; in {@link rolloutCases} order that costs nothing. `phase` names it in the
 * log (default: the case).
 */
export async function runRolloutCase(
  rig: RolloutRig,
  ns: string,
  app: DeployedApp,
  which: RolloutCase,
  phase: string = which,
): Promise<RolloutRun> {
  const scale = (n: number) => (): Promise<void> =>
    run(rig, ['scale', '-n', ns, 'deployment/web', `--replicas=${n}`]);
  switch (which) {
    case 'rolling maxSurge 1 / maxUnavailable 0':
      await strategy(rig, ns, 1, 0);
      await scaledTo(rig, ns, app, rolloutReplicas);
      return underLoad(rig, ns, app, phase, rolloutReplicas, () => restart(rig, ns));
    case 'rolling maxSurge 0 / maxUnavailable 1':
      await strategy(rig, ns, 0, 1);
      await scaledTo(rig, ns, app, rolloutReplicas);
      return underLoad(rig, ns, app, phase, rolloutReplicas, () => restart(rig, ns));
    case 'scale 3→1':
      await scaledTo(rig, ns, app, 3);
      return underLoad(rig, ns, app, phase, 1, scale(1));
    case 'scale 1→3':
      await scaledTo(rig, ns, app, 1);
      return underLoad(rig, ns, app, phase, 3, scale(3));
    case 'a Pod deleted': {
      await scaledTo(rig, ns, app, rolloutReplicas);
      const [victim] = [...(await readyPods(rig, ns)).keys()];
      if (victim === undefined) throw new Error(`${ns}: no Ready Pod to delete`);
      return underLoad(rig, ns, app, phase, rolloutReplicas, () =>
        run(rig, ['delete', 'pod', '-n', ns, victim, '--wait=false']),
      );
    }
  }
}

/** The median (nearest rank) of `values`, or null when there are none. Pure. */
export function medianOf(values: readonly number[]): number | null {
  return values.length === 0 ? null : percentile(values, 50);
}
