// The first requests through a MyIngress: the sample app's Deployment (bench/lib/rollouts.ts's
// manifest, two replicas, no readiness gate, no preStop pause) behind a Service on the node
// cluster, the operator (its AWS calls through a fault proxy) making the load balancer, and the ALB
// data plane (dev/albDataPlane/) serving its listener on loopback and forwarding to the Pod IPs the
// target group holds. Requests are counted by the Pod that answered (the sample app names it)
// through a scale-up and a scale-down. Failures during the scale-down are reported, not asserted:
// without a readiness gate and a preStop pause a terminating Pod still gets requests for a while
// (test/node/rollout.test.ts runs them with both).
import { CreateTagsCommand, EC2Client } from '@aws-sdk/client-ec2';
import { vpcWithTwoSubnets } from '../support/vpc.ts';
import {
  DescribeTargetHealthCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlbDataPlane } from '../../dev/albDataPlane/dataPlane.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { myIngressType } from '../../src/kinds/myingress/api.ts';
import { startAlbDataPlane } from '../support/albDataPlane.ts';
import { kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { kubectl } from '../../dev/kubectl.ts';
import { spawnSkylift, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { nodeInfo, stackInfo, startFaultProxy } from '../support/stack.ts';
import { burst, ok, RATE, report, startLoad, tally } from '../../bench/lib/trafficLoad.ts';
import { rolloutManifest } from '../../bench/lib/rollouts.ts';

interface PodList {
  items: {
    metadata: { name: string; deletionTimestamp?: string };
    status?: { podIP?: string; conditions?: { type: string; status: string }[] };
  }[];
}
interface MyIngressView {
  metadata: { name: string };
  status?: { arn?: string; targetGroups?: { arn: string }[] };
}

/** Subnets only this file's MyIngress selects (other node test files tag theirs kubernetes.io/role/elb). */
const SUBNET_TAG = 'skylift.test/traffic';

const admin = kubeClient();
let ns: string;
let operator: SkyliftProcess | undefined;
let proxy: AwsFaultProxy | undefined;
let dp: AlbDataPlane | undefined;
let ec2: EC2Client | undefined;
/** ELBv2 through the operator's proxy: DescribeTargetHealth says what the data plane measured. */
let elb: ElasticLoadBalancingV2Client | undefined;
/** What the data plane logged (targets changing state, listeners served), with when. */
const dataPlaneLog: { at: number; line: string }[] = [];

/** The Deployment's Pods that are Ready and not being deleted, name → IP. */
async function readyPods(): Promise<Map<string, string>> {
  const pods = await admin.get<PodList>(`/api/v1/namespaces/${ns}/pods`, { labelSelector: 'app=web' });
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

/**
 * Waits until the target group (as DescribeTargetHealth through the proxy tells it, i.e. as the
 * data plane measured it) holds exactly the `count` Ready Pods, all healthy; returns the Pods.
 */
async function podsServing(tgArn: string, count: number, description: string): Promise<Map<string, string>> {
  return waitFor(
    async () => {
      const pods = await readyPods();
      if (pods.size !== count) return undefined;
      const h = await elb?.send(new DescribeTargetHealthCommand({ TargetGroupArn: tgArn }));
      const healthy = (h?.TargetHealthDescriptions ?? [])
        .filter((d) => d.TargetHealth?.State === 'healthy')
        .map((d) => `${d.Target?.Id ?? ''}:${d.Target?.Port ?? 0}`)
        .sort();
      const want = [...pods.values()].map((ip) => `${ip}:8080`).sort();
      return JSON.stringify(healthy) === JSON.stringify(want) ? pods : undefined;
    },
    { timeoutMs: 120_000, description, intervalMs: 250 },
  );
}

beforeAll(async () => {
  await installCrds(admin);
  ns = await newNamespace(admin, 'node-traffic');
  ec2 = new EC2Client(awsClientConfig(stackInfo().awsEndpoint));
  const { subnets } = await vpcWithTwoSubnets(ec2, 78);
  await ec2.send(new CreateTagsCommand({ Resources: subnets, Tags: [{ Key: SUBNET_TAG, Value: '1' }] }));
  // Health checks every 0.5 s (5 s scaled); the propagation delay stays the default estimate.
  proxy = await startFaultProxy();
  dp = await startAlbDataPlane({
    proxy,
    healthCheckTimeScale: 0.1,
    log: (line) => dataPlaneLog.push({ at: Date.now(), line }),
  });
  elb = new ElasticLoadBalancingV2Client(awsClientConfig(proxy.endpoint));
  operator = spawnSkylift(ns, proxy.endpoint);
});

afterAll(async () => {
  // The operator removes what the MyIngress made before it stops (its finalizer).
  await admin.delete(resourcePath(myIngressType, { namespace: ns, name: 'shop' })).catch(() => undefined);
  await waitFor(
    async () => ((await readObject(admin, myIngressType, ns, 'shop')) === undefined ? true : undefined),
    { timeoutMs: 60_000, description: 'MyIngress shop gone' },
  ).catch((err: unknown) => {
    process.stdout.write(`[traffic] cleanup: ${err instanceof Error ? err.message : String(err)}\n`);
  });
  await operator?.stop();
  await dp?.stop();
  await proxy?.stop();
  elb?.destroy();
  ec2?.destroy();
});

describe('requests through a MyIngress to real Pods', () => {
  it('reach every Ready Pod, follow a scale-up, and stop failing once a scale-down settles', async () => {
    const kc = stackInfo().adminKubeconfig;
    const applied = await kubectl(
      kc,
      ['apply', '-n', ns, '-f', '-'],
      rolloutManifest(nodeInfo().helloImage, undefined, { key: SUBNET_TAG, value: '1' }, 2),
    );
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);

    const shop = await waitFor(
      async () => {
        const m = await readObject<MyIngressView>(admin, myIngressType, ns, 'shop');
        const lb = m?.status?.arn;
        const tg = m?.status?.targetGroups?.[0]?.arn;
        return lb !== undefined && tg !== undefined ? { lb, tg } : undefined;
      },
      { timeoutMs: 60_000, description: 'MyIngress shop has a load balancer and a target group' },
    );
    const two = await podsServing(shop.tg, 2, 'two Pods registered and healthy');
    const ep = await waitFor(() => dp?.endpointOf(shop.lb, 80), {
      timeoutMs: 30_000,
      description: 'the data plane serves listener 80',
    });

    // Two Pods: every request answered by one of them, both used.
    const first = await burst(ep, 100);
    report('two Pods', first);
    const t1 = tally(first);
    expect(t1.failures).toEqual([]);
    expect(Object.keys(t1.perPod).sort()).toEqual([...two.keys()].sort());

    // Scale up under load: the new Pod gets requests once registered and healthy; nothing fails.
    const upLoad = startLoad(ep, 3_000, 90_000);
    expect((await kubectl(kc, ['scale', '-n', ns, 'deployment/web', '--replicas=3'])).code).toBe(0);
    const three = await podsServing(shop.tg, 3, 'three Pods registered and healthy');
    const newPod = [...three.keys()].find((p) => !two.has(p)) ?? '';
    const sentWhenServing = upLoad.sent();
    // A further 150 requests (3 s) with the new Pod serving: it answers its share.
    await waitFor(() => (upLoad.sent() >= sentWhenServing + 150 ? true : undefined), {
      timeoutMs: 30_000,
      description: '150 requests sent with three Pods serving',
      intervalMs: 50,
    });
    const up = await upLoad.stop();
    report('scale-up 2→3 (under load)', up);
    expect(tally(up).failures).toEqual([]);
    expect(tally(up).perPod[newPod]).toBeGreaterThanOrEqual(40);
    const afterUp = await burst(ep, 150);
    report('three Pods', afterUp);
    const t3 = tally(afterUp);
    expect(t3.failures).toEqual([]);
    expect(Object.keys(t3.perPod).sort()).toEqual([...three.keys()].sort());

    // Scale down under load: failures while the two Pods go away are counted and reported only.
    const downLoad = startLoad(ep, 6_000, 120_000);
    const scaledDown = Date.now();
    expect((await kubectl(kc, ['scale', '-n', ns, 'deployment/web', '--replicas=1'])).code).toBe(0);
    const one = await podsServing(shop.tg, 1, 'one Pod registered and healthy');
    const [survivor] = [...one.keys()];
    // Settled: a second of load (every request before it answered) all answered by the Pod that stays.
    await waitFor(() => downLoad.lastAnswered(RATE)?.every((o) => ok(o) && o.pod === survivor) || undefined, {
      timeoutMs: 60_000,
      description: `only ${survivor ?? '?'} answering`,
      intervalMs: 100,
    });
    const down = await downLoad.stop();
    report('scale-down 3→1 (under load, until settled)', down, scaledDown);
    for (const l of dataPlaneLog.filter((e) => e.at >= scaledDown && / of .*targetgroup/.test(e.line)))
      process.stdout.write(`[traffic]   +${l.at - scaledDown} ms ${l.line}\n`);
    const afterDown = await burst(ep, 100);
    report('one Pod (settled)', afterDown);
    const tDown = tally(afterDown);
    expect(tDown.failures).toEqual([]);
    expect(Object.keys(tDown.perPod)).toEqual([survivor]);
  });
});
