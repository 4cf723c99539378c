// MyIngress rules with header, query string and method conditions and a weighted forward, proven by
// traffic through the ALB data plane (dev/albDataPlane/): requests with the header (any case of its
// value) and the method, or with the query pair, reach one Service; the rest are split between two
// Services by weight, counted; a weight changed after create is one ModifyRule and nothing else,
// and the split follows it; a resync with nothing changed writes nothing. The data plane picks a
// weighted target group with a seeded generator, so the counts are the same at every run; the
// assertions hold for any generator all the same (each backend gets some, the heavier more). No
// kubelet runs: the test lists each Service's endpoint itself, at an address the data plane dials
// as a loopback server standing for the Pod.
import { EC2Client } from '@aws-sdk/client-ec2';
import {
  DescribeListenersCommand,
  DescribeRulesCommand,
  ElasticLoadBalancingV2Client,
  type Rule,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AlbDataPlane, Endpoint } from '../../dev/albDataPlane/dataPlane.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { myIngressType, type BackendServiceSpec, type MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { startAlbDataPlane } from '../support/albDataPlane.ts';
import {
  serviceTo,
  startLoopbackBackend,
  stopLoopbackBackend,
  type LoopbackBackend,
} from '../support/loopbackBackends.ts';
import type { RunningController } from '../support/controllers.ts';
import { kubeClient, readObject } from '../support/kube.ts';
import {
  createMyIngress,
  myIngressReconciles,
  patchMyIngressSpec,
  serveMyIngressNamespace,
} from '../support/myingressObjects.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { vpcWithTwoSubnets } from '../support/vpc.ts';

/** What one request asks. */
interface Ask {
  readonly path?: string;
  readonly method?: string;
  readonly headers?: Record<string, string>;
}

/** One request to the served listener; the answering backend's name (`404`, `0` for an error). */
function send(ep: Endpoint, ask: Ask = {}): Promise<string> {
  return new Promise((resolveAnswer) => {
    const req = request(
      {
        host: ep.host,
        port: ep.port,
        method: ask.method ?? 'GET',
        path: ask.path ?? '/shop',
        headers: { host: 'match.example.com', ...ask.headers },
        timeout: 5000,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          resolveAnswer(res.statusCode === 200 ? Buffer.concat(chunks).toString() : String(res.statusCode));
        });
        res.on('error', () => resolveAnswer('0'));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => resolveAnswer('0'));
    req.end();
  });
}

/** `n` requests one after another; how many each answer got. */
async function round(ep: Endpoint, n: number, ask: Ask = {}): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const who = await send(ep, ask);
    out[who] = (out[who] ?? 0) + 1;
  }
  return out;
}

/** A small seeded generator (mulberry32): the data plane's weighted choice, the same at every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ROUND = 20;
const SPLIT = 200;

let admin: KubeClient;
let proxy: AwsFaultProxy;
let ec2: EC2Client;
let elb: ElasticLoadBalancingV2Client;
let dp: AlbDataPlane;
let subnets: string[];
let backends: LoopbackBackend[];
const running: RunningController[] = [];

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  const direct = awsClientConfig(stackInfo().awsEndpoint);
  ec2 = new EC2Client(direct);
  elb = new ElasticLoadBalancingV2Client(direct);
  ({ subnets } = await vpcWithTwoSubnets(ec2, 34));
  proxy = await startFaultProxy();
  backends = [
    await startLoopbackBackend('A', '127.0.0.91', 4),
    await startLoopbackBackend('B', '127.0.0.92', 4),
    await startLoopbackBackend('C', '127.0.0.93', 4),
  ];
  dp = await startAlbDataPlane({
    healthCheckTimeScale: 0.05,
    propagationDelayMs: 200,
    pollMs: 200,
    random: seeded(30),
    dialAddress: (ip) => ip.replace(/^10\.250\.4\./, '127.0.0.'),
  });
});

afterAll(async () => {
  await dp.stop();
  await proxy.stop();
  for (const b of backends) await stopLoopbackBackend(b);
  elb.destroy();
  ec2.destroy();
});

afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

const healthCheck = { path: '/health', intervalSeconds: 5, timeoutSeconds: 2, healthyThresholdCount: 2 };
const svc = (name: string): BackendServiceSpec => ({ name, port: 80, healthCheck });

/** The rules: canary header (values `canary`) and GET or HEAD → C; query backend=c → C; the rest split between A and B. */
const rules = (
  weightA: number,
  weightB: number,
  canary: string[] = ['on', 'yes'],
): NonNullable<MyIngressSpec['rules']> => [
  {
    priority: 1,
    paths: ['/shop*'],
    headers: [{ name: 'X-Canary', values: canary }],
    methods: ['GET', 'HEAD'],
    action: { forward: { service: svc('web-c') } },
  },
  {
    priority: 2,
    queryStrings: [{ key: 'backend', value: 'c' }],
    action: { forward: { service: svc('web-c') } },
  },
  {
    priority: 3,
    paths: ['/shop*'],
    action: {
      forward: {
        services: [
          { ...svc('web-a'), weight: weightA },
          { ...svc('web-b'), weight: weightB },
        ],
      },
    },
  },
];

/** The non-default rules of the load balancer's listener on port 80, read from the emulator. */
async function rulesOf(lbArn: string): Promise<Rule[]> {
  const listeners =
    (await elb.send(new DescribeListenersCommand({ LoadBalancerArn: lbArn }))).Listeners ?? [];
  const l = listeners.find((x) => x.Port === 80);
  const all = (await elb.send(new DescribeRulesCommand({ ListenerArn: l?.ListenerArn ?? '' }))).Rules ?? [];
  return all.filter((r) => r.IsDefault !== true);
}

const writesOf = (counts: Record<string, number>): string[] =>
  Object.keys(counts)
    .filter((k) => /:(Create|Delete|Modify|Set|Register|Deregister|Add|Remove|Authorize|Revoke)/.test(k))
    .sort();

describe('MyIngress header, query string and method conditions and weighted forwards', () => {
  it('routes by header, method and query string, splits the rest by weight, and follows a weight change with one ModifyRule', async () => {
    const { ns, controller } = await serveMyIngressNamespace(admin, 'ming-match', {
      endpoint: proxy.endpoint,
      resyncPeriod: '1s',
    });
    running.push(controller);
    const [a, b, c] = backends as [LoopbackBackend, LoopbackBackend, LoopbackBackend];
    await serviceTo(admin, ns, 'web-a', a);
    await serviceTo(admin, ns, 'web-b', b);
    await serviceTo(admin, ns, 'web-c', c);
    const mi = await createMyIngress(admin, ns, 'match', {
      subnets,
      scheme: 'internal',
      inboundCIDRs: ['127.0.0.0/8'],
      listeners: [{ port: 80, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 404 } } }],
      rules: rules(3, 1),
    });
    const lb = mi.status?.arn ?? '';
    expect(lb).not.toBe('');
    // As AWS has them: the conditions, and one forward with two weighted target groups.
    const created = await rulesOf(lb);
    const byPriority = new Map(created.map((r) => [r.Priority, r]));
    expect(
      byPriority
        .get('1')
        ?.Conditions?.map((x) => x.Field)
        .sort(),
    ).toEqual(['http-header', 'http-request-method', 'path-pattern']);
    expect(byPriority.get('2')?.Conditions?.[0]?.QueryStringConfig?.Values).toEqual([
      { Key: 'backend', Value: 'c' },
    ]);
    const weights = (r: Rule | undefined): number[] =>
      (r?.Actions?.[0]?.ForwardConfig?.TargetGroups ?? []).map((g) => g.Weight ?? -1).sort();
    expect(weights(byPriority.get('3'))).toEqual([1, 3]);
    expect(mi.status?.targetGroups?.map((t) => t.service).sort()).toEqual(['web-a', 'web-b', 'web-c']);

    const ep = await waitFor(() => dp.endpointOf(lb, 80), {
      timeoutMs: 30_000,
      description: 'the data plane serving port 80',
    });
    // Until every target has passed its first health check and the data plane has the rules.
    await waitFor(
      async () => {
        const seen = await round(ep, 40);
        const canary = await send(ep, { headers: { 'x-canary': 'on' } });
        return (seen.A ?? 0) > 0 && (seen.B ?? 0) > 0 && canary === 'C' ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, description: 'all three backends served' },
    );

    // The header (either value, any case) with GET or HEAD → C; another method or no header → the split.
    const hits0 = backends.map((x) => x.hits);
    expect(await round(ep, ROUND, { headers: { 'x-canary': 'on' } })).toEqual({ C: ROUND });
    expect(await round(ep, ROUND, { headers: { 'X-Canary': 'YES' } })).toEqual({ C: ROUND });
    expect(await round(ep, ROUND, { path: '/shop/cart?backend=c' })).toEqual({ C: ROUND });
    expect(backends.map((x, i) => x.hits - (hits0[i] ?? 0))).toEqual([0, 0, 3 * ROUND]);
    const post = await round(ep, ROUND, { method: 'POST', headers: { 'x-canary': 'on' } });
    expect(post.C).toBeUndefined();
    expect((post.A ?? 0) + (post.B ?? 0)).toBe(ROUND);
    expect((await round(ep, ROUND, { headers: { 'x-canary': 'off' } })).C).toBeUndefined();
    expect(await round(ep, ROUND, { path: '/other' })).toEqual({ '404': ROUND });

    // 3:1 over SPLIT requests: both get some, A more than B (the band is wide on purpose).
    const split = await round(ep, SPLIT);
    console.info(`weights 3:1 over ${SPLIT} requests: ${JSON.stringify(split)}`);
    expect((split.A ?? 0) + (split.B ?? 0)).toBe(SPLIT);
    expect(split.B ?? 0).toBeGreaterThan(0);
    expect(split.A ?? 0).toBeGreaterThan(split.B ?? 0);

    // The weights turned round after create: the rule modified in place, nothing else written.
    const arnsBefore = created.map((r) => r.RuleArn).sort();
    proxy.resetCalls();
    await patchMyIngressSpec(admin, ns, 'match', { rules: rules(1, 3) });
    expect(writesOf(proxy.countsByOperation())).toEqual(['elasticloadbalancing:ModifyRule']);
    expect(proxy.countsByOperation()['elasticloadbalancing:ModifyRule']).toBe(1);
    const modified = await rulesOf(lb);
    expect(modified.map((r) => r.RuleArn).sort()).toEqual(arnsBefore);
    expect(weights(modified.find((r) => r.Priority === '3'))).toEqual([1, 3]);
    const tgOf = (r: Rule | undefined, w: number): string | undefined =>
      r?.Actions?.[0]?.ForwardConfig?.TargetGroups?.find((g) => g.Weight === w)?.TargetGroupArn;
    // The target groups stayed and swapped weights.
    expect(
      tgOf(
        modified.find((r) => r.Priority === '3'),
        3,
      ),
    ).toBe(tgOf(byPriority.get('3'), 1));

    await dp.synced();
    const flipped = await round(ep, SPLIT);
    console.info(`weights 1:3 over ${SPLIT} requests: ${JSON.stringify(flipped)}`);
    expect((flipped.A ?? 0) + (flipped.B ?? 0)).toBe(SPLIT);
    expect(flipped.A ?? 0).toBeGreaterThan(0);
    expect(flipped.B ?? 0).toBeGreaterThan(flipped.A ?? 0);

    // A header changed after create: the same, one ModifyRule.
    proxy.resetCalls();
    await patchMyIngressSpec(admin, ns, 'match', { rules: rules(1, 3, ['beta']) });
    expect(writesOf(proxy.countsByOperation())).toEqual(['elasticloadbalancing:ModifyRule']);
    await dp.synced();
    expect(await round(ep, ROUND, { headers: { 'x-canary': 'beta' } })).toEqual({ C: ROUND });
    expect((await round(ep, ROUND, { headers: { 'x-canary': 'on' } })).C).toBeUndefined();

    // Resyncs with nothing changed: reads only.
    proxy.resetCalls();
    await myIngressReconciles(controller, 2);
    expect(writesOf(proxy.countsByOperation())).toEqual([]);

    await admin.delete(resourcePath(myIngressType, { namespace: ns, name: 'match' }));
    await waitFor(
      async () => ((await readObject(admin, myIngressType, ns, 'match')) === undefined ? true : undefined),
      { timeoutMs: 60_000, description: 'match deleted' },
    );
  });
});
