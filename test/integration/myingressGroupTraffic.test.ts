// MyIngressGroup proven by traffic (issue 30): two MyIngresses of two namespaces share one load
// balancer, and requests sent through the ALB data plane (dev/albDataPlane/) to the group's listener
// reach each member's Service by Host header; a member leaving takes its host to the listener's
// default (fixed 404) while the other member's host keeps being served, without one failure, as
// its rule moves up to the freed priority (the operator's rule writes held back by the fault
// proxy, so each state between two writes is served for a while). No kubelet or EndpointSlice
// controller runs here: the test lists each Service's endpoint itself, at an address the data
// plane dials as a loopback server standing for the Pod.
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
import { myIngressType, type MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import { myIngressController } from '../../src/kinds/myingress/controller.ts';
import { myIngressGroupType } from '../../src/kinds/myingress/group/api.ts';
import { myIngressGroupController } from '../../src/kinds/myingress/group/controller.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { startAlbDataPlane } from '../support/albDataPlane.ts';
import {
  serviceTo,
  startLoopbackBackend,
  stopLoopbackBackend,
  type LoopbackBackend,
} from '../support/loopbackBackends.ts';
import { startController, type RunningController } from '../support/controllers.ts';
import { kubeClient, newNamespace, readObject } from '../support/kube.ts';
import {
  createMyIngressGroup,
  myIngressGone,
  myIngressWhere,
  readyAtGeneration,
} from '../support/myingressGroupObjects.ts';
import { submitMyIngress } from '../support/myingressObjects.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { vpcWithTwoSubnets } from '../support/vpc.ts';

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** One GET / with Host `host` to the served listener; a connection error or timeout is an answer with status 0. */
function send(ep: Endpoint, host: string): Promise<Answer> {
  return new Promise((resolveAnswer) => {
    const req = request(
      { host: ep.host, port: ep.port, path: '/', headers: { host }, timeout: 5000, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          resolveAnswer({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() });
        });
        res.on('error', (err) => {
          resolveAnswer({ status: 0, body: err.message });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => {
      resolveAnswer({ status: 0, body: err.message });
    });
    req.end();
  });
}

const HOST_A = 'a.group-traffic.example.com';
const HOST_B = 'b.group-traffic.example.com';
/** Requests per host in each counted round. */
const ROUND = 20;

let admin: KubeClient;
let proxy: AwsFaultProxy;
let ec2: EC2Client;
let elb: ElasticLoadBalancingV2Client;
let dp: AlbDataPlane;
let subnets: string[];
let backendA: LoopbackBackend;
let backendB: LoopbackBackend;
const running: RunningController[] = [];

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  const direct = awsClientConfig(stackInfo().awsEndpoint);
  ec2 = new EC2Client(direct);
  elb = new ElasticLoadBalancingV2Client(direct);
  ({ subnets } = await vpcWithTwoSubnets(ec2, 32));
  proxy = await startFaultProxy();
  backendA = await startLoopbackBackend('A', '127.0.0.71', 1);
  backendB = await startLoopbackBackend('B', '127.0.0.72', 1);
  // Health checks 20 times faster than configured (an interval of 5 s probes every 250 ms).
  // Kubernetes refuses loopback addresses in EndpointSlices: the Pods get 10.250.1.x, which the data
  // plane dials as 127.0.0.x, where the backends listen.
  dp = await startAlbDataPlane({
    healthCheckTimeScale: 0.05,
    propagationDelayMs: 500,
    // Polled more often than by default, so it serves more of the rule changes' intermediate states.
    pollMs: 200,
    dialAddress: (ip) => ip.replace(/^10\.250\.1\./, '127.0.0.'),
  });
});

afterAll(async () => {
  await dp.stop();
  await proxy.stop();
  for (const b of [backendA, backendB]) await stopLoopbackBackend(b);
  elb.destroy();
  ec2.destroy();
});

afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

/** A member routing `host` to Service `service` port 80, health-checked at `/health`. */
const member = (group: string, host: string, service: string): MyIngressSpec => ({
  group: { name: group },
  rules: [
    {
      priority: 1,
      hosts: [host],
      action: {
        forward: {
          service: {
            name: service,
            port: 80,
            healthCheck: { path: '/health', intervalSeconds: 5, timeoutSeconds: 2, healthyThresholdCount: 2 },
          },
        },
      },
    },
  ],
});

/** The non-default rules of the load balancer's listener on port 80, read from the emulator. */
async function rulesOf(lbArn: string): Promise<Rule[]> {
  const listeners =
    (await elb.send(new DescribeListenersCommand({ LoadBalancerArn: lbArn }))).Listeners ?? [];
  const l = listeners.find((x) => x.Port === 80);
  const rules = (await elb.send(new DescribeRulesCommand({ ListenerArn: l?.ListenerArn ?? '' }))).Rules ?? [];
  return rules.filter((r) => r.IsDefault !== true);
}

/** Sends `n` requests with Host `host`, one after another; the answers in order. */
async function round(ep: Endpoint, host: string, n: number): Promise<Answer[]> {
  const out: Answer[] = [];
  for (let i = 0; i < n; i++) out.push(await send(ep, host));
  return out;
}

const summary = (answers: readonly Answer[]): Record<string, number> =>
  answers.reduce<Record<string, number>>((acc, a) => {
    const k = `${a.status} ${a.body.slice(0, 40)}`;
    return { ...acc, [k]: (acc[k] ?? 0) + 1 };
  }, {});

describe('MyIngressGroup traffic', () => {
  it('routes each member host to its own Service through the shared listener, and a member leaving sends its host to the default 404 while the other keeps serving', async () => {
    const a = await newNamespace(admin, 'gtraffic-a');
    const b = await newNamespace(admin, 'gtraffic-b');
    const opts = { namespace: `${a},${b}`, endpoint: proxy.endpoint };
    running.push(await startController((s) => myIngressController(s, { pollMs: 300 }), opts));
    running.push(await startController((s) => myIngressGroupController(s, { pollMs: 300 }), opts));
    await serviceTo(admin, a, 'web-a', backendA);
    await serviceTo(admin, b, 'web-b', backendB);
    const g = await createMyIngressGroup(admin, {
      subnets,
      scheme: 'internal',
      listeners: [{ port: 80, protocol: 'HTTP' }],
      // The managed security group lets the loopback client in (the data plane enforces it).
      inboundCIDRs: ['127.0.0.0/8'],
      allowedNamespaces: { from: 'All' },
    });
    await submitMyIngress(admin, a, 'shop', member(g, HOST_A, 'web-a'));
    await submitMyIngress(admin, b, 'shop', member(g, HOST_B, 'web-b'));
    const [memberA, memberB] = await Promise.all([
      myIngressWhere(admin, a, 'shop', readyAtGeneration, 'Ready'),
      myIngressWhere(admin, b, 'shop', readyAtGeneration, 'Ready'),
    ]);
    const lb = memberA.status?.arn ?? '';
    expect(lb).not.toBe('');
    expect(memberB.status?.arn).toBe(lb);
    // Namespace a sorts first: its rule has priority 1, b's 2.
    expect((await rulesOf(lb)).map((r) => r.Priority).sort()).toEqual(['1', '2']);

    const ep = await waitFor(() => dp.endpointOf(lb, 80), {
      timeoutMs: 30_000,
      description: "the data plane serving the group's listener",
    });
    // Until the targets have passed their first health check (and the data plane has seen the rules).
    await waitFor(
      async () =>
        (await send(ep, HOST_A)).body === 'A' && (await send(ep, HOST_B)).body === 'B' ? true : undefined,
      { timeoutMs: 30_000, description: 'both hosts served through the data plane' },
    );

    // Counted: every request for a host reaches its own backend, none the other's.
    const [hitsA0, hitsB0] = [backendA.hits, backendB.hits];
    const toA = await round(ep, HOST_A, ROUND);
    const toB = await round(ep, HOST_B, ROUND);
    expect(summary(toA)).toEqual({ '200 A': ROUND });
    expect(summary(toB)).toEqual({ '200 B': ROUND });
    expect([backendA.hits - hitsA0, backendB.hits - hitsB0]).toEqual([ROUND, ROUND]);

    // Member a leaves. While the group takes its rule off and moves b's up to priority 1, host B is
    // asked on every poll and must never fail; host A must end at the listener's default. Each rule
    // write is held 1.5 s before it reaches the emulator, so every state between two writes lasts
    // several data plane polls (200 ms) and is served to some of those requests: a plan that
    // deleted b's rule at priority 2 before writing b's routes at priority 1 fails here.
    const slowRuleWrites = proxy.inject({
      service: 'elasticloadbalancing',
      operation: /^(CreateRule|ModifyRule|DeleteRule|SetRulePriorities)$/,
      fault: { kind: 'latency', ms: 1500 },
    });
    await admin.delete(resourcePath(myIngressType, { namespace: a, name: 'shop' }));
    const duringB: Answer[] = [];
    const duringA: Answer[] = [];
    await waitFor(
      async () => {
        duringB.push(await send(ep, HOST_B));
        const answerA = await send(ep, HOST_A);
        duringA.push(answerA);
        if (answerA.status !== 404) return undefined;
        if ((await readObject(admin, myIngressType, a, 'shop')) !== undefined) return undefined;
        const rules = await rulesOf(lb);
        return rules.length === 1 && rules[0]?.Priority === '1' ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 20, description: 'member a gone, host A at the default 404' },
    );
    await myIngressGone(admin, a, 'shop');
    slowRuleWrites.remove();
    // At least b's rule written at priority 1 and its old one deleted went through the delay.
    expect(slowRuleWrites.hits).toBeGreaterThanOrEqual(2);
    console.info(
      `during member a's removal (${slowRuleWrites.hits} rule writes): host B ${JSON.stringify(summary(duringB))}, host A ${JSON.stringify(summary(duringA))}`,
    );
    expect(duringB.length).toBeGreaterThan(0);
    expect(summary(duringB)).toEqual({ [`200 B`]: duringB.length });
    // Host A was only ever answered by A (before) or the default 404 (after); never by B.
    expect(duringA.every((x) => (x.status === 200 && x.body === 'A') || x.status === 404)).toBe(true);

    // After: the data plane has seen the final rules; counted again.
    await dp.synced();
    const hitsA1 = backendA.hits;
    const hitsB1 = backendB.hits;
    const afterA = await round(ep, HOST_A, ROUND);
    const afterB = await round(ep, HOST_B, ROUND);
    expect(afterA.every((x) => x.status === 404)).toBe(true);
    // That 404 is the listener's default action (the group set none: fixed 404).
    const listeners = (await elb.send(new DescribeListenersCommand({ LoadBalancerArn: lb }))).Listeners ?? [];
    expect(listeners.find((x) => x.Port === 80)?.DefaultActions?.[0]?.FixedResponseConfig?.StatusCode).toBe(
      '404',
    );
    expect(summary(afterB)).toEqual({ '200 B': ROUND });
    expect([backendA.hits - hitsA1, backendB.hits - hitsB1]).toEqual([0, ROUND]);

    // The last member out deletes the load balancer; then the group goes.
    await admin.delete(resourcePath(myIngressType, { namespace: b, name: 'shop' }));
    await myIngressGone(admin, b, 'shop');
    await admin.delete(resourcePath(myIngressGroupType, { name: g }));
    await waitFor(
      async () => ((await readObject(admin, myIngressGroupType, '', g)) === undefined ? true : undefined),
      { timeoutMs: 30_000, description: `MyIngressGroup ${g} gone` },
    );
  });
});
