// MyIngress after create (issue 29, item 7), on the real apiserver and moto through the fault
// proxy: tags removed from the spec leave the load balancer and its target groups, endpoints
// followed are not drift while a target deregistered by hand is, and throttled creates are retried
// without duplicating anything.
import { EC2Client } from '@aws-sdk/client-ec2';
import {
  AddTagsCommand,
  DeregisterTargetsCommand,
  DescribeLoadBalancersCommand,
  DescribeTagsCommand,
  DescribeTargetGroupsCommand,
  DescribeTargetHealthCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { myIngressType, type MyIngress, type MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import { myIngressController } from '../../src/kinds/myingress/controller.ts';
import type { MyIngressSettings } from '../../src/kinds/myingress/settings.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { startController, type RunningController } from '../support/controllers.ts';
import { counterValue } from '../support/gadgetController.ts';
import { eventsFor, kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { vpcWithTwoSubnets } from '../support/vpc.ts';

let admin: KubeClient;
let proxy: AwsFaultProxy;
let elb: ElasticLoadBalancingV2Client;
let subnets: string[];
const running: RunningController[] = [];

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  proxy = await startFaultProxy();
  const direct = awsClientConfig(stackInfo().awsEndpoint);
  elb = new ElasticLoadBalancingV2Client(direct);
  subnets = (await vpcWithTwoSubnets(new EC2Client(direct), 40)).subnets;
});
afterAll(async () => {
  await proxy.stop();
});
afterEach(async () => {
  proxy.clearFaults();
  for (const r of running.splice(0)) await r.stop();
});

/** A namespace with Services web and api and their endpoints, served by a MyIngress controller. */
async function setup(
  prefix: string,
  settings: Partial<MyIngressSettings>,
  resyncPeriod: string,
): Promise<{ ns: string; op: RunningController }> {
  const ns = await newNamespace(admin, prefix);
  const op = await startController((s) => myIngressController(s, { pollMs: 300, ...settings }), {
    namespace: ns,
    endpoint: proxy.endpoint,
    resyncPeriod,
  });
  running.push(op);
  for (const [name, ips] of [
    ['web', ['10.40.1.10', '10.40.2.11']],
    ['api', ['10.40.1.20']],
  ] as const) {
    await admin.create(`/api/v1/namespaces/${ns}/services`, {
      metadata: { name },
      spec: { ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
    });
    await putEndpoints(ns, name, ips);
  }
  return { ns, op };
}

/** The EndpointSlice of Service `service`, as the EndpointSlice controller would make it (no Pods run here). */
async function putEndpoints(ns: string, service: string, ips: readonly string[]): Promise<void> {
  const body = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${service}-1`,
      labels: {
        'kubernetes.io/service-name': service,
        'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
      },
    },
    addressType: 'IPv4',
    ports: [{ port: 8080, protocol: 'TCP' }],
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
  };
  await admin.patch(`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices/${service}-1`, body, 'apply', {
    fieldManager: 'test',
    force: true,
  });
}

/** One listener forwarding to web, a rule forwarding to api: two target groups. */
const spec = (tags?: Record<string, string>): MyIngressSpec => ({
  subnets,
  scheme: 'internal',
  listeners: [
    { port: 80, protocol: 'HTTP', defaultAction: { forward: { service: { name: 'web', port: 80 } } } },
  ],
  rules: [{ priority: 10, paths: ['/api/*'], action: { forward: { service: { name: 'api', port: 80 } } } }],
  ...(tags !== undefined ? { tags } : {}),
});

async function createIngress(ns: string, name: string, s: MyIngressSpec): Promise<void> {
  await admin.create(resourcePath(myIngressType, { namespace: ns }), {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'MyIngress',
    metadata: { name },
    spec: s,
  });
}

function condition(m: MyIngress | undefined, type: string) {
  return m?.status?.conditions?.find((c) => c.type === type);
}

/** The object once Ready=True and Synced=True at its current generation. */
async function waitSettled(ns: string, name: string, timeoutMs = 60_000): Promise<MyIngress> {
  return waitFor(
    async () => {
      const m = await readObject<MyIngress>(admin, myIngressType, ns, name);
      const gen = m?.metadata.generation;
      const ready = condition(m, 'Ready');
      const synced = condition(m, 'Synced');
      return ready?.status === 'True' && synced?.status === 'True' && m?.status?.observedGeneration === gen
        ? m
        : undefined;
    },
    { timeoutMs, description: `${ns}/${name} Ready and Synced` },
  );
}

function targetGroupArns(m: MyIngress): string[] {
  return (m.status?.targetGroups as { arn: string }[]).map((t) => t.arn);
}

async function tagsOf(arns: readonly string[]): Promise<Map<string, Record<string, string>>> {
  const out = await elb.send(new DescribeTagsCommand({ ResourceArns: [...arns] }));
  return new Map(
    (out.TagDescriptions ?? []).map((d) => [
      d.ResourceArn ?? '',
      Object.fromEntries((d.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? ''])),
    ]),
  );
}

async function targetsOf(tgArn: string): Promise<string[]> {
  const h = await elb.send(new DescribeTargetHealthCommand({ TargetGroupArn: tgArn }));
  return (h.TargetHealthDescriptions ?? [])
    .map((t) => `${t.Target?.Id ?? ''}:${t.Target?.Port ?? ''}`)
    .sort();
}

const ownershipKeys = ['skylift.dev/cluster', 'skylift.dev/owner', 'skylift.dev/uid'];

describe('MyIngress spec.tags after create', () => {
  it('adds, changes and removes them on the load balancer and every target group, leaving tags others added', async () => {
    const { ns } = await setup('ming-tags', {}, '1s');
    await createIngress(ns, 'tagged', spec({ a: '1', b: '2' }));
    const m = await waitSettled(ns, 'tagged');
    const lbArn = String(m.status?.arn);
    const tgArns = targetGroupArns(m);
    expect(tgArns).toHaveLength(2);
    const all = [lbArn, ...tgArns];
    const before = await tagsOf(all);
    for (const arn of all) expect(before.get(arn)).toMatchObject({ a: '1', b: '2' });
    // Someone tags each resource by hand: not the spec's, so never Skylift's to remove.
    await elb.send(new AddTagsCommand({ ResourceArns: all, Tags: [{ Key: 'handmade', Value: 'yes' }] }));

    await admin.patch(
      resourcePath(myIngressType, { namespace: ns, name: 'tagged' }),
      [{ op: 'replace', path: '/spec/tags', value: { a: '1', c: '3' } }],
      'json',
    );
    const after = await waitFor(
      async () => {
        const t = await tagsOf(all);
        return all.every((arn) => {
          const x = t.get(arn) ?? {};
          return x.a === '1' && x.c === '3' && !('b' in x);
        })
          ? t
          : undefined;
      },
      { timeoutMs: 30_000, description: 'a=1 and c=3, no b, on the load balancer and both target groups' },
    );
    for (const arn of all) {
      const x = after.get(arn) ?? {};
      expect(x.handmade).toBe('yes');
      for (const k of ownershipKeys) expect(x[k]).toBe(before.get(arn)?.[k]);
      expect(x['skylift.dev/user-tags']).toBe('a,c');
    }
    await waitSettled(ns, 'tagged');
  });
});

describe('MyIngress targets', () => {
  it('counts endpoints that moved as an update, a target deregistered by hand as drift', async () => {
    // Every look a full one (--elbv2-full-check-period 0): nothing recalled, and what Skylift left
    // must still tell a followed change from drift.
    const { ns, op } = await setup('ming-targets', { fullCheckMs: 0 }, '1s');
    await createIngress(ns, 'shop', spec());
    const m = await waitSettled(ns, 'shop');
    const web = (m.status?.targetGroups as { service: string; arn: string }[]).find((t) =>
      t.service.startsWith('web'),
    );
    const webArn = web?.arn ?? '';
    expect(await targetsOf(webArn)).toEqual(['10.40.1.10:8080', '10.40.2.11:8080']);

    // A rollout: a Pod replaced by another, then one more.
    await putEndpoints(ns, 'web', ['10.40.1.10', '10.40.3.12']);
    await waitFor(
      async () =>
        (await targetsOf(webArn)).join(',') === '10.40.1.10:8080,10.40.3.12:8080' ? true : undefined,
      { timeoutMs: 30_000, description: 'the rollout followed' },
    );
    await putEndpoints(ns, 'web', ['10.40.1.10', '10.40.3.12', '10.40.3.13']);
    await waitFor(async () => ((await targetsOf(webArn)).length === 3 ? true : undefined), {
      timeoutMs: 30_000,
      description: 'the scale-up followed',
    });
    await waitSettled(ns, 'shop');
    const followed = await eventsFor(admin, ns, 'shop');
    expect(followed.filter((e) => e.reason === 'DriftCorrected').map((e) => e.note)).toEqual([]);
    expect(followed.some((e) => e.reason === 'Updated' && /targets of web/.test(e.note))).toBe(true);
    expect(await counterValue(op.metrics.driftCorrections, {})).toBe(0);

    // By hand in AWS: that is drift.
    await elb.send(
      new DeregisterTargetsCommand({ TargetGroupArn: webArn, Targets: [{ Id: '10.40.3.13', Port: 8080 }] }),
    );
    const drift = await waitFor(
      async () => (await eventsFor(admin, ns, 'shop')).find((e) => e.reason === 'DriftCorrected'),
      { timeoutMs: 30_000, description: 'a DriftCorrected Event' },
    );
    expect(drift.note).toMatch(/targets of web/);
    expect(await counterValue(op.metrics.driftCorrections, {})).toBeGreaterThanOrEqual(1);
    await waitFor(async () => ((await targetsOf(webArn)).length === 3 ? true : undefined), {
      timeoutMs: 30_000,
      description: 'the target registered again',
    });
  });
});

describe('MyIngress creates answered with Throttling', () => {
  it.each([
    { operation: 'CreateLoadBalancer', reason: 'nothing was created: the create is sent again' },
    { operation: 'CreateTargetGroup', reason: 'the first child of a new load balancer' },
    { operation: 'CreateListener', reason: 'after the target groups' },
  ])(
    '$operation: shows Throttled while refused, then Ready with one of each ($reason)',
    async ({ operation }) => {
      const { ns } = await setup(`ming-thr-${operation.slice(6).toLowerCase()}`, {}, '10m');
      proxy.resetCalls();
      // Refused until the test has seen the condition, then answered.
      const rule = proxy.inject({ service: 'elasticloadbalancing', operation, fault: { kind: 'throttle' } });
      await createIngress(ns, 'busy', spec());
      const throttled = await waitFor(
        async () => {
          const m = await readObject<MyIngress>(admin, myIngressType, ns, 'busy');
          const synced = condition(m, 'Synced');
          return rule.hits >= 2 && synced?.reason === 'Throttled' ? m : undefined;
        },
        { timeoutMs: 30_000, description: `Synced=False Throttled after two refused ${operation}` },
      );
      expect(condition(throttled, 'Synced')).toMatchObject({ status: 'False', reason: 'Throttled' });
      expect(condition(throttled, 'Synced')?.message).toMatch(/Throttling/);
      expect(condition(throttled, 'Ready')?.reason).not.toBe('Terminal');
      rule.remove();
      const m = await waitSettled(ns, 'busy', 60_000);
      expect(proxy.count({ operation, outcome: 'throttle' })).toBeGreaterThanOrEqual(2);

      // Only this test's controller calls AWS since the reset: each create carried out once.
      expect(proxy.count({ operation: 'CreateLoadBalancer', outcome: 'forwarded' })).toBe(1);
      expect(proxy.count({ operation: 'CreateTargetGroup', outcome: 'forwarded' })).toBe(2);
      expect(proxy.count({ operation: 'CreateListener', outcome: 'forwarded' })).toBe(1);
      const lbs = (await elb.send(new DescribeLoadBalancersCommand({}))).LoadBalancers ?? [];
      expect(lbs.filter((l) => l.LoadBalancerArn === m.status?.arn)).toHaveLength(1);
      const tgs = ((await elb.send(new DescribeTargetGroupsCommand({}))).TargetGroups ?? []).filter((t) =>
        (t.LoadBalancerArns ?? []).includes(String(m.status?.arn)),
      );
      expect(tgs).toHaveLength(2);
      expect((m.status?.listeners as unknown[]).length).toBe(1);
    },
  );
});
