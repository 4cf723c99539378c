// MyIngress on the real apiserver and moto (through the fault proxy), with a
// VPC and subnets created the way a user would have them.
import { CreateSubnetCommand, CreateVpcCommand, EC2Client } from '@aws-sdk/client-ec2';
import {
  CreateTargetGroupCommand,
  DeleteLoadBalancerCommand,
  DeregisterTargetsCommand,
  DescribeListenersCommand,
  DescribeLoadBalancersCommand,
  DescribeRulesCommand,
  DescribeTagsCommand,
  DescribeTargetGroupAttributesCommand,
  DescribeTargetGroupsCommand,
  DescribeTargetHealthCommand,
  ElasticLoadBalancingV2Client,
  ModifyListenerCommand,
  ModifyRuleCommand,
  ModifyTargetGroupAttributesCommand,
  RegisterTargetsCommand,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { myIngressType, type MyIngress, type MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import { myIngressController } from '../../src/kinds/myingress/controller.ts';
import type { MyIngressSettings } from '../../src/kinds/myingress/settings.ts';
import { waitFor } from '../../dev/wait.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import type { Condition } from '../../src/apis/managed.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { startController, type RunningController } from '../support/controllers.ts';
import { counterValue } from '../support/gadgetController.ts';
import { eventsFor, kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { targetGroupName } from '../../src/kinds/myingress/names.ts';

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
  const ec2 = new EC2Client(direct);
  const vpc = await ec2.send(new CreateVpcCommand({ CidrBlock: '10.20.0.0/16' }));
  const vpcId = vpc.Vpc?.VpcId ?? '';
  subnets = [];
  for (const [cidr, az] of [
    ['10.20.1.0/24', 'us-east-1a'],
    ['10.20.2.0/24', 'us-east-1b'],
  ] as const) {
    const s = await ec2.send(
      new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: cidr, AvailabilityZone: az }),
    );
    subnets.push(s.Subnet?.SubnetId ?? '');
  }
});
afterAll(async () => {
  await proxy.stop();
});
afterEach(async () => {
  proxy.clearFaults();
  for (const r of running.splice(0)) await r.stop();
});

/**
 * A namespace with Service web and its endpoints, served by a MyIngress controller (`settings` and
 * `resyncPeriod` as given, polling every 300 ms).
 */
async function setup(
  prefix: string,
  settings: Partial<MyIngressSettings> = {},
  resyncPeriod?: string,
): Promise<string> {
  const ns = await newNamespace(admin, prefix);
  running.push(
    await startController((s) => myIngressController(s, { pollMs: 300, ...settings }), {
      namespace: ns,
      endpoint: proxy.endpoint,
      ...(resyncPeriod !== undefined ? { resyncPeriod } : {}),
    }),
  );
  await admin.create(`/api/v1/namespaces/${ns}/services`, {
    metadata: { name: 'web' },
    spec: { ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
  });
  await putEndpoints(ns, [
    { ip: '10.20.1.10', ready: true },
    { ip: '10.20.2.11', ready: true },
  ]);
  return ns;
}

async function putEndpoints(ns: string, eps: { ip: string; ready: boolean }[]): Promise<void> {
  const body = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: 'web-1',
      // As the EndpointSlice controller labels its slices (the stack runs no kubelet, no Pods).
      labels: {
        'kubernetes.io/service-name': 'web',
        'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
      },
    },
    addressType: 'IPv4',
    ports: [{ port: 8080, protocol: 'TCP' }],
    endpoints: eps.map((e) => ({ addresses: [e.ip], conditions: { ready: e.ready } })),
  };
  await admin.patch(`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices/web-1`, body, 'apply', {
    fieldManager: 'test',
    force: true,
  });
}

const spec = (): MyIngressSpec => ({
  subnets,
  scheme: 'internal',
  listeners: [
    {
      port: 80,
      protocol: 'HTTP',
      defaultAction: { forward: { service: { name: 'web', port: 80, healthCheck: { path: '/healthz' } } } },
    },
  ],
  rules: [
    { priority: 10, paths: ['/old/*'], action: { fixedResponse: { statusCode: 410, body: 'gone' } } },
    {
      priority: 20,
      hosts: ['api.example.com'],
      action: { forward: { service: { name: 'web', port: 80, healthCheck: { path: '/healthz' } } } },
    },
  ],
});

async function waitReady(ns: string, name: string, timeoutMs = 60_000): Promise<MyIngress> {
  return waitFor(
    async () => {
      const m = await readObject<MyIngress>(admin, myIngressType, ns, name);
      return m?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true
        ? m
        : undefined;
    },
    { timeoutMs, description: `${ns}/${name} Ready` },
  );
}

async function targetsOf(tgArn: string): Promise<string[]> {
  const h = await elb.send(new DescribeTargetHealthCommand({ TargetGroupArn: tgArn }));
  return (h.TargetHealthDescriptions ?? [])
    .map((t) => `${t.Target?.Id ?? ''}:${t.Target?.Port ?? ''}`)
    .sort();
}

describe('MyIngress', () => {
  it('creates the load balancer, listener, rules and an IP target group that follows the Service', async () => {
    const ns = await setup('ming-life');
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'shop' },
      spec: spec(),
    });
    const m = await waitReady(ns, 'shop');
    const st = m.status ?? {};
    expect(st.arn).toMatch(/^arn:aws:elasticloadbalancing:us-east-1:\d+:loadbalancer\/app\/sky-/);
    expect(st.dnsName).toEqual(expect.any(String));
    expect(st.canonicalHostedZoneId).toEqual(expect.any(String));
    expect(st.state).toBe('active');
    expect((st.listeners as { port: number }[]).map((l) => l.port)).toEqual([80]);
    expect((st.rules as { priority: number }[]).map((r) => r.priority)).toEqual([10, 20]);
    const tgs = st.targetGroups as { service: string; arn: string; registeredTargets: number }[];
    expect(tgs).toHaveLength(1);
    expect(tgs[0]?.registeredTargets).toBe(2);
    const tgArn = tgs[0]?.arn ?? '';
    expect(await targetsOf(tgArn)).toEqual(['10.20.1.10:8080', '10.20.2.11:8080']);
    const tg = (await elb.send(new DescribeTargetGroupsCommand({ TargetGroupArns: [tgArn] })))
      .TargetGroups?.[0];
    expect(tg).toMatchObject({ TargetType: 'ip', Port: 8080, HealthCheckPath: '/healthz' });
    // Issue 14, item 10: finishing a create (listeners, rules, target group) is not drift.
    const finished = await waitFor(
      async () => (await eventsFor(admin, ns, 'shop')).find((e) => e.reason === 'Updated'),
      { timeoutMs: 30_000, description: 'a Normal Updated Event for the listeners' },
    );
    expect(finished).toMatchObject({ type: 'Normal' });
    expect(finished.note).toContain('listener 80 created');
    expect((await eventsFor(admin, ns, 'shop')).filter((e) => e.reason === 'DriftCorrected')).toEqual([]);

    await putEndpoints(ns, [
      { ip: '10.20.1.10', ready: false },
      { ip: '10.20.2.11', ready: true },
      { ip: '10.20.2.12', ready: true },
    ]);
    await waitFor(
      async () =>
        (await targetsOf(tgArn)).join(',') === '10.20.2.11:8080,10.20.2.12:8080' ? true : undefined,
      {
        timeoutMs: 30_000,
        description: 'targets following the EndpointSlice',
      },
    );
  });

  // Issue 15: a hand-made EndpointSlice labelled with a Service's name put any address — another
  // team's Pod IP — behind an internet-facing load balancer.
  it("registers only the EndpointSlice controller's addresses, never a hand-made slice's", async () => {
    const ns = await setup('ming-slices');
    for (const [name, labels] of [
      ['web-by-hand', { 'kubernetes.io/service-name': 'web' }],
      [
        'web-other-controller',
        { 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': 'someone-else' },
      ],
    ] as const) {
      await admin.create(`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name, labels },
        addressType: 'IPv4',
        ports: [{ port: 8080, protocol: 'TCP' }],
        endpoints: [
          { addresses: [name === 'web-by-hand' ? '10.99.0.1' : '10.99.0.2'], conditions: { ready: true } },
        ],
      });
    }
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'shop' },
      spec: spec(),
    });
    const m = await waitReady(ns, 'shop');
    const tgArn = (m.status?.targetGroups as { arn: string }[] | undefined)?.[0]?.arn ?? '';
    expect(await targetsOf(tgArn)).toEqual(['10.20.1.10:8080', '10.20.2.11:8080']);
  });

  it('changes one rule with one ModifyRule and nothing else', async () => {
    const ns = await setup('ming-rule');
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'shop' },
      spec: spec(),
    });
    const m = await waitReady(ns, 'shop');
    const listenerArn = (m.status?.listeners as { arn: string }[])[0]?.arn ?? '';
    proxy.resetCalls();
    const rules = spec().rules ?? [];
    await admin.patch(
      resourcePath(myIngressType, { namespace: ns, name: 'shop' }),
      { spec: { rules: [{ ...rules[0], paths: ['/legacy/*'] }, rules[1]] } },
      'merge',
    );
    await waitFor(
      async () => {
        const r = (await elb.send(new DescribeRulesCommand({ ListenerArn: listenerArn }))).Rules?.find(
          (x) => x.Priority === '10',
        );
        return JSON.stringify(r?.Conditions ?? []).includes('/legacy/*') ? true : undefined;
      },
      { timeoutMs: 30_000, description: 'rule 10 modified' },
    );
    await waitReady(ns, 'shop');
    const writes = Object.entries(proxy.countsByOperation()).filter(([op]) =>
      /:(Create|Delete|Modify|Set|Register|Deregister|Add|Remove)/.test(op),
    );
    expect(Object.fromEntries(writes)).toEqual({ 'elasticloadbalancing:ModifyRule': 1 });
  });

  it('deletes rules, listeners, the load balancer and its target groups', async () => {
    const ns = await setup('ming-del');
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'shop' },
      spec: spec(),
    });
    const m = await waitReady(ns, 'shop');
    const lbArn = String(m.status?.arn);
    const tgArn = (m.status?.targetGroups as { arn: string }[])[0]?.arn ?? '';
    await admin.delete(resourcePath(myIngressType, { namespace: ns, name: 'shop' }));
    await waitFor(
      async () => ((await readObject(admin, myIngressType, ns, 'shop')) === undefined ? true : undefined),
      { timeoutMs: 60_000, description: 'shop deleted' },
    );
    const lbs = await elb.send(new DescribeLoadBalancersCommand({})).then((o) => o.LoadBalancers ?? []);
    expect(lbs.find((l) => l.LoadBalancerArn === lbArn)).toBeUndefined();
    const listeners = await elb.send(new DescribeListenersCommand({ LoadBalancerArn: lbArn })).then(
      (o) => o.Listeners ?? [],
      () => [],
    );
    expect(listeners).toEqual([]);
    const tgs = await elb.send(new DescribeTargetGroupsCommand({})).then((o) => o.TargetGroups ?? []);
    expect(tgs.find((t) => t.TargetGroupArn === tgArn)).toBeUndefined();
  });

  it('still deletes its target groups when the deletion fails after the load balancer is gone', async () => {
    const ns = await setup('ming-del-tg');
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'shop' },
      spec: spec(),
    });
    const m = await waitReady(ns, 'shop');
    const tgArn = (m.status?.targetGroups as { arn: string }[])[0]?.arn ?? '';
    // One DeleteTargetGroup fails through all its SDK attempts: the reconcile ends in an error with
    // the load balancer already gone, and the next one must not take "no load balancer" for "done".
    const failed = proxy.inject({
      service: 'elasticloadbalancing',
      operation: 'DeleteTargetGroup',
      fault: { kind: 'error', status: 503 },
      times: 3,
    });
    await admin.delete(resourcePath(myIngressType, { namespace: ns, name: 'shop' }));
    await waitFor(
      async () => ((await readObject(admin, myIngressType, ns, 'shop')) === undefined ? true : undefined),
      { timeoutMs: 60_000, description: 'shop deleted' },
    );
    expect(failed.hits).toBe(3);
    const tgs = await elb.send(new DescribeTargetGroupsCommand({})).then((o) => o.TargetGroups ?? []);
    expect(tgs.filter((t) => t.TargetGroupArn === tgArn)).toEqual([]);
  });

  it('explains deletion protection instead of hanging on the finalizer', async () => {
    const ns = await setup('ming-prot');
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'guarded' },
      spec: { ...spec(), attributes: { deletionProtection: true } },
    });
    await waitReady(ns, 'guarded');
    await admin.delete(resourcePath(myIngressType, { namespace: ns, name: 'guarded' }));
    const stuck = await waitFor(
      async () => {
        const m = await readObject<MyIngress>(admin, myIngressType, ns, 'guarded');
        const c = m?.status?.conditions?.find((x) => x.type === 'Synced');
        return c?.reason === 'Terminal' ? c : undefined;
      },
      { timeoutMs: 30_000, description: 'a Terminal condition about deletion protection' },
    );
    expect(stuck.message).toContain('deletion protection is on');
    await admin.patch(
      resourcePath(myIngressType, { namespace: ns, name: 'guarded' }),
      { spec: { attributes: { deletionProtection: false } } },
      'merge',
    );
    // Issue 14, item 4: following the message's advice finishes the deletion, with nothing done in AWS by hand.
    const lbArn = String((await readObject<MyIngress>(admin, myIngressType, ns, 'guarded'))?.status?.arn);
    await waitFor(
      async () => ((await readObject(admin, myIngressType, ns, 'guarded')) === undefined ? true : undefined),
      { timeoutMs: 60_000, description: 'guarded deleted' },
    );
    const { DescribeLoadBalancersCommand } = await import('@aws-sdk/client-elastic-load-balancing-v2');
    await expect(elb.send(new DescribeLoadBalancersCommand({ LoadBalancerArns: [lbArn] }))).rejects.toThrow();
  });

  it('reports Provisioning until AWS says the load balancer is active', async () => {
    const ns = await setup('ming-prov');
    // Provisioning until the test has seen it reported (a new object's progress is written once it
    // lasts longer than the first-status hold, 5 s).
    const provisioningRule = proxy.inject({
      service: 'elasticloadbalancing',
      operation: 'DescribeLoadBalancers',
      times: 10_000,
      fault: {
        kind: 'rewrite',
        rewrite: (body) => body.replace(/<Code>active<\/Code>/g, '<Code>provisioning</Code>'),
      },
    });
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'slow' },
      spec: spec(),
    });
    const provisioning = await waitFor(
      async () => {
        const m = await readObject<MyIngress>(admin, myIngressType, ns, 'slow');
        const c = m?.status?.conditions?.find((x) => x.type === 'Ready');
        return c?.reason === 'Provisioning' ? c : undefined;
      },
      { timeoutMs: 30_000, description: 'Ready=False Provisioning' },
    );
    expect(provisioning.status).toBe('False');
    provisioningRule.remove();
    const m = await waitReady(ns, 'slow');
    expect(m.status?.state).toBe('active');
  });

  it('converges through ELBv2 throttling', async () => {
    const ns = await setup('ming-throttle');
    // The first look is throttled for certain; then 30 % of calls, five times at most. Creates are
    // sent once (no SDK retry), so unbounded random throttling could fail pass after pass and the
    // per-object backoff (0.5 s doubling) outgrow any deadline: seen once in a clean run.
    proxy.inject({
      service: 'elasticloadbalancing',
      operation: 'DescribeLoadBalancers',
      fault: { kind: 'throttle', code: 'Throttling' },
      times: 1,
    });
    proxy.inject({
      service: 'elasticloadbalancing',
      fault: { kind: 'throttle', code: 'Throttling' },
      probability: 0.3,
      times: 5,
    });
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'busy' },
      spec: spec(),
    });
    const m = await waitReady(ns, 'busy', 90_000);
    expect(proxy.count({ service: 'elasticloadbalancing', outcome: 'throttle' })).toBeGreaterThan(0);
    const lbs = (await elb.send(new DescribeLoadBalancersCommand({}))).LoadBalancers ?? [];
    expect(lbs.filter((l) => l.LoadBalancerArn === m.status?.arn)).toHaveLength(1);
    expect(lbs.filter((l) => (l.LoadBalancerName ?? '').includes('ming-throttle'))).toHaveLength(1);
  });
});

// Issue 27, item 7: a status.arn written by someone with status rights (forged, or left by a
// restore of old status) made the object follow another load balancer: Conflict, and its own load
// balancer was never deleted. status.arn is followed only to the object's own load balancer.
describe('MyIngress with a forged status.arn', () => {
  it('keeps to its own load balancer, and deletes it (not the other) when deleted', async () => {
    const ns = await setup('ming-forged', {}, '2s');
    const create = (name: string) =>
      admin.create(resourcePath(myIngressType, { namespace: ns }), {
        apiVersion: 'aws.skylift.dev/v1alpha1',
        kind: 'MyIngress',
        metadata: { name },
        spec: spec(),
      });
    await create('shop');
    await create('other');
    const own = String((await waitReady(ns, 'shop')).status?.arn);
    const other = String((await waitReady(ns, 'other')).status?.arn);
    expect(own).not.toBe(other);

    await admin.patch(
      `${resourcePath(myIngressType, { namespace: ns, name: 'shop' })}/status`,
      { status: { arn: other } },
      'merge',
    );
    // The next resync looks at its own load balancer again, Synced, and puts its ARN back.
    const back = await waitFor(
      async () => {
        const m = await readObject<MyIngress>(admin, myIngressType, ns, 'shop');
        const synced = m?.status?.conditions?.find((c) => c.type === 'Synced');
        return m?.status?.arn === own && synced?.status === 'True' ? m : undefined;
      },
      { timeoutMs: 30_000, description: 'shop back on its own load balancer' },
    );
    expect(back.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');

    await admin.patch(
      `${resourcePath(myIngressType, { namespace: ns, name: 'shop' })}/status`,
      { status: { arn: other } },
      'merge',
    );
    await admin.delete(resourcePath(myIngressType, { namespace: ns, name: 'shop' }));
    await waitFor(
      async () => ((await readObject(admin, myIngressType, ns, 'shop')) === undefined ? true : undefined),
      { timeoutMs: 60_000, description: 'shop deleted' },
    );
    const lbs = await elb.send(new DescribeLoadBalancersCommand({})).then((o) => o.LoadBalancers ?? []);
    expect(lbs.find((l) => l.LoadBalancerArn === own)).toBeUndefined();
    expect(lbs.find((l) => l.LoadBalancerArn === other)).toBeDefined();
    expect((await waitReady(ns, 'other')).status?.arn).toBe(other);
  });
});

// Issue 27, item 6: deleting a MyIngress with deletionPolicy Orphan and adopting its load balancer
// in a new object (the documented way to replace the object) left the old object's target group
// in AWS forever: the new object made its own and never looked at the old one again.
describe('MyIngress adopting an orphaned load balancer', () => {
  it('deletes the target group the old object made, once its listener points at its own', async () => {
    const ns = await setup('ming-readopt');
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'old' },
      spec: { ...spec(), deletionPolicy: 'Orphan' },
    });
    const old = await waitReady(ns, 'old');
    const lbArn = String(old.status?.arn);
    const oldTg = (old.status?.targetGroups as { arn: string }[])[0]?.arn ?? '';
    await admin.delete(resourcePath(myIngressType, { namespace: ns, name: 'old' }));
    await waitFor(
      async () => ((await readObject(admin, myIngressType, ns, 'old')) === undefined ? true : undefined),
      { timeoutMs: 60_000, description: 'old deleted, its load balancer orphaned' },
    );
    const tgExists = async (arn: string): Promise<boolean> =>
      elb.send(new DescribeTargetGroupsCommand({ TargetGroupArns: [arn] })).then(
        (o) => (o.TargetGroups ?? []).length > 0,
        () => false,
      );
    expect(await tgExists(oldTg)).toBe(true);

    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'new' },
      spec: { ...spec(), externalName: lbArn },
    });
    const adopted = await waitReady(ns, 'new');
    expect(adopted.status?.arn).toBe(lbArn);
    // Its status records its own target group once a look has seen it.
    const newTg = await waitFor(
      async () => {
        const m = await readObject<MyIngress>(admin, myIngressType, ns, 'new');
        const arn = (m?.status?.targetGroups as { arn: string }[] | undefined)?.[0]?.arn;
        return arn !== undefined && arn !== oldTg ? arn : undefined;
      },
      { timeoutMs: 30_000, description: 'the new object’s own target group in its status' },
    );
    expect(await tgExists(newTg)).toBe(true);
    await waitFor(async () => ((await tgExists(oldTg)) ? undefined : true), {
      timeoutMs: 30_000,
      description: 'the old object’s target group deleted',
    });
  });
});

describe('MyIngress creation is never duplicated', () => {
  it('finds its own load balancer, target group, listener and rule when the create answers are lost', async () => {
    const ns = await setup('ming-lost');
    // Each create is carried out by AWS but its answer never arrives: neither the SDK nor the
    // operator may send it again blindly (moto, unlike AWS, even accepts a second listener on a port).
    for (const operation of ['CreateLoadBalancer', 'CreateTargetGroup', 'CreateListener', 'CreateRule'])
      proxy.inject({ service: 'elasticloadbalancing', operation, fault: { kind: 'dropResponse' }, times: 1 });
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'once' },
      spec: spec(),
    });
    const m = await waitReady(ns, 'once', 90_000);
    expect(proxy.count({ operation: 'CreateLoadBalancer', outcome: 'dropResponse' })).toBe(1);
    expect(proxy.count({ operation: 'CreateTargetGroup', outcome: 'dropResponse' })).toBe(1);
    expect(proxy.count({ operation: 'CreateListener', outcome: 'dropResponse' })).toBe(1);
    expect(proxy.count({ operation: 'CreateRule', outcome: 'dropResponse' })).toBe(1);
    const listeners = (
      await elb.send(new DescribeListenersCommand({ LoadBalancerArn: String(m.status?.arn) }))
    ).Listeners;
    expect(listeners?.map((l) => l.Port)).toEqual([80]);
    const rules = (
      (await elb.send(new DescribeRulesCommand({ ListenerArn: listeners?.[0]?.ListenerArn }))).Rules ?? []
    ).filter((r) => r.IsDefault !== true);
    expect(rules.map((r) => r.Priority).sort()).toEqual(['10', '20']);
    const lbs = ((await elb.send(new DescribeLoadBalancersCommand({}))).LoadBalancers ?? []).filter((l) =>
      (l.LoadBalancerName ?? '').includes('ming-lost'),
    );
    expect(lbs.map((l) => l.LoadBalancerArn)).toEqual([m.status?.arn]);
    const tgs = ((await elb.send(new DescribeTargetGroupsCommand({}))).TargetGroups ?? []).filter(
      (t) =>
        (t.TargetGroupName ?? '').endsWith('-web-80') &&
        (m.status?.targetGroups as { arn: string }[]).some((x) => x.arn === t.TargetGroupArn),
    );
    expect(tgs).toHaveLength(1);
  });
});

describe('MyIngress target groups a crash left unrecorded', () => {
  // The crash window: CreateTargetGroup succeeded, the operator was killed before the status
  // recorded it, and the spec dropped that backend before the next reconcile. Nothing then names
  // the target group (status, spec): only its ownership tags do.

  /** A target group made by hand beside the object's, carrying `tags`; returns its ARN. */
  async function handMade(like: string, backend: string, tags: Record<string, string>): Promise<string> {
    const mine = (await elb.send(new DescribeTargetGroupsCommand({ TargetGroupArns: [like] })))
      .TargetGroups?.[0];
    const out = await elb.send(
      new CreateTargetGroupCommand({
        // Where the object's create would have put a backend's (its uid's deterministic name).
        Name: targetGroupName(tags['skylift.dev/uid'] ?? 'untagged', backend, 8080),
        Protocol: 'HTTP',
        Port: 8080,
        VpcId: mine?.VpcId ?? '',
        TargetType: 'ip',
        Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })),
      }),
    );
    return out.TargetGroups?.[0]?.TargetGroupArn ?? '';
  }

  async function tagsOfTg(arn: string): Promise<Record<string, string>> {
    const d = await elb.send(new DescribeTagsCommand({ ResourceArns: [arn] }));
    return Object.fromEntries((d.TagDescriptions?.[0]?.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));
  }

  const tgExists = async (arn: string): Promise<boolean> =>
    elb.send(new DescribeTargetGroupsCommand({ TargetGroupArns: [arn] })).then(
      (o) => (o.TargetGroups ?? []).length > 0,
      () => false,
    );

  /** The object Ready, with its own target group's ARN and ownership tags. */
  async function readyShop(ns: string): Promise<{ own: string; ours: Record<string, string> }> {
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'shop' },
      spec: spec(),
    });
    const m = await waitReady(ns, 'shop');
    const own = (m.status?.targetGroups as { arn: string }[])[0]?.arn ?? '';
    const all = await tagsOfTg(own);
    const ours = Object.fromEntries(
      ['skylift.dev/cluster', 'skylift.dev/owner', 'skylift.dev/uid'].map((k) => [k, all[k] ?? '']),
    );
    return { own, ours };
  }

  it('deletes one carrying its ownership tags at its next full look, and leaves another object’s alone', async () => {
    const ns = await setup('ming-orphan', { fullCheckMs: 2000 }, '1s');
    const { own, ours } = await readyShop(ns);
    const orphan = await handMade(own, 'dropped', ours);
    const foreign = await handMade(own, `foreign-${ns}`, {
      ...ours,
      'skylift.dev/uid': 'another-object-uid',
    });
    const untagged = await handMade(own, `untagged-${ns}`, { team: 'someone' });
    proxy.resetCalls();
    await waitFor(async () => ((await tgExists(orphan)) ? undefined : true), {
      timeoutMs: 30_000,
      description: 'the unrecorded target group deleted at a full look',
    });
    const event = await waitFor(
      async () =>
        (await eventsFor(admin, ns, 'shop')).find((e) => e.note.includes('unused target group deleted')),
      { timeoutMs: 10_000, description: 'an Updated Event naming the deletion' },
    );
    // Our own leftover, not someone's change: not counted as drift.
    expect(event.reason).toBe('Updated');
    expect(proxy.count({ service: 'tagging', operation: 'GetResources' })).toBeGreaterThanOrEqual(1);
    expect(proxy.count({ operation: 'DeleteTargetGroup' })).toBe(1);
    expect(await tgExists(own)).toBe(true);
    expect(await tgExists(foreign)).toBe(true);
    expect(await tgExists(untagged)).toBe(true);
    await waitReady(ns, 'shop');
  });

  it('deletes one carrying its ownership tags with the object, and leaves another object’s alone', async () => {
    // The default full-check period: no full look comes between the crash and the deletion.
    const ns = await setup('ming-orphan-del');
    const { own, ours } = await readyShop(ns);
    const orphan = await handMade(own, 'dropped', ours);
    const foreign = await handMade(own, `foreign-${ns}`, {
      ...ours,
      'skylift.dev/uid': 'another-object-uid',
    });
    await admin.delete(resourcePath(myIngressType, { namespace: ns, name: 'shop' }));
    await waitFor(
      async () => ((await readObject(admin, myIngressType, ns, 'shop')) === undefined ? true : undefined),
      { timeoutMs: 60_000, description: 'shop deleted' },
    );
    expect(await tgExists(own)).toBe(false);
    expect(await tgExists(orphan)).toBe(false);
    expect(await tgExists(foreign)).toBe(true);
  });
});

describe('MyIngress AWS call costs', () => {
  it('measures create, no-op resync and delete, and writes nothing on a no-op resync', async () => {
    const ns = await newNamespace(admin, 'ming-cost');
    const op = await startController((s) => myIngressController(s, { pollMs: 300 }), {
      namespace: ns,
      endpoint: proxy.endpoint,
      resyncPeriod: '1s',
    });
    running.push(op);
    await admin.create(`/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'web' },
      spec: { ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
    });
    await putEndpoints(ns, [{ ip: '10.20.1.10', ready: true }]);
    proxy.resetCalls();
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'cost' },
      spec: spec(),
    });
    await waitReady(ns, 'cost');
    const create = proxy.countsByOperation();

    // A few resyncs with nothing changed: reads only.
    const { counterValue } = await import('../support/gadgetController.ts');
    const before = await counterValue(op.metrics.reconcileTotal, { controller: 'myingress' });
    proxy.resetCalls();
    await waitFor(
      async () =>
        (await counterValue(op.metrics.reconcileTotal, { controller: 'myingress' })) >= before + 3
          ? true
          : undefined,
      {
        timeoutMs: 30_000,
        description: 'three resyncs',
      },
    );
    const resyncs = (await counterValue(op.metrics.reconcileTotal, { controller: 'myingress' })) - before;
    const resync = proxy.countsByOperation();
    const writes = Object.keys(resync).filter((k) =>
      /:(Create|Delete|Modify|Set|Register|Deregister|Add|Remove)/.test(k),
    );
    expect(writes).toEqual([]);
    // Target group attributes are read at full looks only, never at a resync (issue 29).
    expect(resync['elasticloadbalancing:DescribeTargetGroupAttributes']).toBeUndefined();
    // With AWS's defaults (no deregistrationDelaySeconds, no slowStartSeconds) a create sets none.
    expect(create['elasticloadbalancing:ModifyTargetGroupAttributes']).toBeUndefined();

    proxy.resetCalls();
    await admin.delete(resourcePath(myIngressType, { namespace: ns, name: 'cost' }));
    await waitFor(
      async () => ((await readObject(admin, myIngressType, ns, 'cost')) === undefined ? true : undefined),
      { timeoutMs: 60_000, description: 'cost deleted' },
    );
    const del = proxy.countsByOperation();
    process.stdout.write(
      `[myingress-cost] create=${JSON.stringify(create)}\n[myingress-cost] ${resyncs} no-op resyncs=${JSON.stringify(resync)}\n[myingress-cost] delete=${JSON.stringify(del)}\n`,
    );
    const perCreate = elbv2Calls(create);
    const perResync = elbv2Calls(resync) / resyncs;
    process.stdout.write(
      `[myingress-cost] ELBv2 calls: ${perCreate} per create, ${perResync.toFixed(2)} per no-op resync, ${elbv2Calls(del)} per delete\n` +
        `[myingress-cost] EC2 calls (the managed security group): ${ec2Calls(create)} per create, ${(ec2Calls(resync) / resyncs).toFixed(2)} per no-op resync, ${ec2Calls(del)} per delete\n`,
    );
    // The managed security group is read at full looks only: a no-op resync makes no EC2 call.
    expect(ec2Calls(resync)).toBe(0);
    // Issue 16: the create (one listener, two rules, one backend) makes 6 writes and at most 4 reads;
    // a resync with nothing changed describes the load balancer alone (docs/myingress.md#what-a-resync-checks).
    expect(perCreate).toBeLessThanOrEqual(10);
    expect(perResync).toBeLessThanOrEqual(1);
    expect(create['elasticloadbalancing:CreateLoadBalancer']).toBe(1);
    expect(create['elasticloadbalancing:CreateTargetGroup']).toBe(1);
    expect(del['elasticloadbalancing:DeleteLoadBalancer']).toBe(1);
    expect(del['elasticloadbalancing:DeleteTargetGroup']).toBe(1);
    // Target groups by ownership tag: looked for at full looks and deletion, never at a no-op resync.
    expect(resync['tagging:GetResources']).toBeUndefined();
    expect(create['tagging:GetResources']).toBeUndefined();
    expect(del['tagging:GetResources']).toBe(1);
  });
});

/** EC2 calls among counts by operation. */
function ec2Calls(counts: Readonly<Record<string, number>>): number {
  return Object.entries(counts)
    .filter(([op]) => op.startsWith('ec2:'))
    .reduce((n, [, c]) => n + c, 0);
}

/** ELBv2 calls among counts by operation. */
function elbv2Calls(counts: Readonly<Record<string, number>>): number {
  return Object.entries(counts)
    .filter(([op]) => op.startsWith('elasticloadbalancing:'))
    .reduce((n, [, c]) => n + c, 0);
}

describe('MyIngress target group attributes (issue 29)', () => {
  /** The target group's deregistration delay and slow start, as ELBv2 lists them. */
  async function attributesOf(
    tgArn: string,
  ): Promise<{ delay: string | undefined; slowStart: string | undefined }> {
    const out = await elb.send(new DescribeTargetGroupAttributesCommand({ TargetGroupArn: tgArn }));
    const a = new Map((out.Attributes ?? []).map((x) => [x.Key ?? '', x.Value ?? '']));
    return {
      delay: a.get('deregistration_delay.timeout_seconds'),
      slowStart: a.get('slow_start.duration_seconds'),
    };
  }

  const withSettings = (settings: {
    deregistrationDelaySeconds?: number;
    slowStartSeconds?: number;
  }): MyIngressSpec => {
    const s = spec();
    const service = { name: 'web', port: 80, healthCheck: { path: '/healthz' }, ...settings };
    return {
      ...s,
      listeners: [{ port: 80, protocol: 'HTTP', defaultAction: { forward: { service } } }],
      rules: [
        s.rules?.[0] ?? { priority: 10, paths: ['/'], action: { fixedResponse: { statusCode: 404 } } },
        { priority: 20, hosts: ['api.example.com'], action: { forward: { service } } },
      ],
    };
  };

  it('sets them at create, changes one with one ModifyTargetGroupAttributes, and puts back a change made by hand at the next full look', async () => {
    const ns = await setup('ming-tgattrs', { fullCheckMs: 3000 }, '1s');
    proxy.resetCalls();
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'shop' },
      spec: withSettings({ deregistrationDelaySeconds: 30 }),
    });
    const m = await waitReady(ns, 'shop');
    const tgArn = (m.status?.targetGroups as { arn: string }[])[0]?.arn ?? '';
    expect(await attributesOf(tgArn)).toEqual({ delay: '30', slowStart: '0' });
    // Set once, right after the create; only the attribute that differs from AWS's default.
    expect(proxy.countsByOperation()['elasticloadbalancing:ModifyTargetGroupAttributes']).toBe(1);

    proxy.resetCalls();
    await admin.patch(
      resourcePath(myIngressType, { namespace: ns, name: 'shop' }),
      { spec: withSettings({ deregistrationDelaySeconds: 30, slowStartSeconds: 60 }) },
      'merge',
    );
    await waitFor(async () => ((await attributesOf(tgArn)).slowStart === '60' ? true : undefined), {
      timeoutMs: 30_000,
      description: 'slow start set',
    });
    await waitReady(ns, 'shop');
    const writes = Object.entries(proxy.countsByOperation()).filter(([op]) =>
      /:(Create|Delete|Modify|Set|Register|Deregister|Add|Remove)/.test(op),
    );
    expect(Object.fromEntries(writes)).toEqual({ 'elasticloadbalancing:ModifyTargetGroupAttributes': 1 });
    expect(await attributesOf(tgArn)).toEqual({ delay: '30', slowStart: '60' });

    // Someone changes the deregistration delay in the console.
    await elb.send(
      new ModifyTargetGroupAttributesCommand({
        TargetGroupArn: tgArn,
        Attributes: [{ Key: 'deregistration_delay.timeout_seconds', Value: '200' }],
      }),
    );
    await waitFor(async () => ((await attributesOf(tgArn)).delay === '30' ? true : undefined), {
      timeoutMs: 30_000,
      description: 'the deregistration delay put back',
    });
    const drift = await waitFor(
      async () => (await eventsFor(admin, ns, 'shop')).find((e) => e.reason === 'DriftCorrected'),
      { timeoutMs: 30_000, description: 'a DriftCorrected Event' },
    );
    expect(drift.note).toContain('attributes of target group web:80: deregistration_delay.timeout_seconds');
  });
});

describe('MyIngress drift made outside Skylift', () => {
  it('is corrected at the next full look: a listener’s default action, a rule and a deregistered target', async () => {
    // Resyncs every second recall the children; a full look every 3 s sees what they cannot.
    const ns = await setup('ming-drift', { fullCheckMs: 3000 }, '1s');
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'shop' },
      spec: spec(),
    });
    const m = await waitReady(ns, 'shop');
    const listenerArn = (m.status?.listeners as { arn: string }[])[0]?.arn ?? '';
    const rule20 = (m.status?.rules as { priority: number; arn: string }[]).find((r) => r.priority === 20);
    const tgArn = (m.status?.targetGroups as { arn: string }[])[0]?.arn ?? '';
    expect(await targetsOf(tgArn)).toEqual(['10.20.1.10:8080', '10.20.2.11:8080']);

    // Someone changes all three in the console.
    await elb.send(
      new ModifyListenerCommand({
        ListenerArn: listenerArn,
        DefaultActions: [
          { Type: 'fixed-response', FixedResponseConfig: { StatusCode: '503', ContentType: 'text/plain' } },
        ],
      }),
    );
    await elb.send(
      new ModifyRuleCommand({
        RuleArn: rule20?.arn ?? '',
        Conditions: [{ Field: 'host-header', HostHeaderConfig: { Values: ['elsewhere.example.com'] } }],
      }),
    );
    await elb.send(
      new DeregisterTargetsCommand({ TargetGroupArn: tgArn, Targets: [{ Id: '10.20.2.11', Port: 8080 }] }),
    );

    await waitFor(
      async () => {
        const l = (await elb.send(new DescribeListenersCommand({ ListenerArns: [listenerArn] })))
          .Listeners?.[0];
        const r = (await elb.send(new DescribeRulesCommand({ RuleArns: [rule20?.arn ?? ''] }))).Rules?.[0];
        const forwards = JSON.stringify(l?.DefaultActions ?? []).includes(tgArn);
        const host = JSON.stringify(r?.Conditions ?? []).includes('api.example.com');
        const targets = (await targetsOf(tgArn)).length === 2;
        return forwards && host && targets ? true : undefined;
      },
      { timeoutMs: 30_000, description: 'listener, rule 20 and targets put back' },
    );
    const drift = await waitFor(
      async () => (await eventsFor(admin, ns, 'shop')).find((e) => e.reason === 'DriftCorrected'),
      { timeoutMs: 30_000, description: 'a DriftCorrected Event' },
    );
    expect(drift.note).toMatch(/listener 80 modified/);
  });
});

// Issue 27, item 13: a Service's endpoints changing — Pods coming and going — was reported as a
// Warning DriftCorrected and counted as drift. Following endpoints is an update; a target removed
// in AWS by hand is still drift (the test above).
describe('MyIngress following its Service', () => {
  it('registers changed endpoints as an update, not as drift', async () => {
    const ns = await setup('ming-follow', {}, '1s');
    const op = running.at(-1);
    if (op === undefined) throw new Error('setup started no controller');
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'shop' },
      spec: spec(),
    });
    const m = await waitReady(ns, 'shop');
    const tgArn = (m.status?.targetGroups as { arn: string }[])[0]?.arn ?? '';
    expect(await targetsOf(tgArn)).toEqual(['10.20.1.10:8080', '10.20.2.11:8080']);
    // A rollout: one Pod replaced by another.
    await putEndpoints(ns, [
      { ip: '10.20.1.10', ready: true },
      { ip: '10.20.3.12', ready: true },
    ]);
    await waitFor(
      async () =>
        (await targetsOf(tgArn)).join(',') === '10.20.1.10:8080,10.20.3.12:8080' ? true : undefined,
      { timeoutMs: 30_000, description: 'the new endpoint registered, the old one gone' },
    );
    await waitReady(ns, 'shop');
    const events = await eventsFor(admin, ns, 'shop');
    expect(events.filter((e) => e.reason === 'DriftCorrected').map((e) => e.note)).toEqual([]);
    expect(events.some((e) => e.reason === 'Updated' && /targets/.test(e.note))).toBe(true);
    expect(await counterValue(op.metrics.driftCorrections, {})).toBe(0);
  });
});

describe('MyIngress whose load balancer was deleted outside Skylift', () => {
  it('recreates it and brings the target groups it finds under their names to the spec (a stray target deregistered)', async () => {
    // Resyncs every second recall the children; no full look within the test (the default hour).
    const ns = await setup('ming-recreated', {}, '1s');
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'shop' },
      spec: spec(),
    });
    const m = await waitReady(ns, 'shop');
    const oldArn = String(m.status?.arn);
    const tgArn = (m.status?.targetGroups as { arn: string }[])[0]?.arn ?? '';
    // In the console: a stray target, then the load balancer deleted (its target groups stay).
    await elb.send(
      new RegisterTargetsCommand({ TargetGroupArn: tgArn, Targets: [{ Id: '10.20.9.9', Port: 8080 }] }),
    );
    await elb.send(new DeleteLoadBalancerCommand({ LoadBalancerArn: oldArn }));
    const recreated = await waitFor(
      async () => {
        const r = await readObject<MyIngress>(admin, myIngressType, ns, 'shop');
        const ready = r?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
        const arn = r?.status?.arn;
        return ready && arn !== undefined && arn !== oldArn ? r : undefined;
      },
      { timeoutMs: 30_000, description: 'a new load balancer, Ready' },
    );
    expect((recreated.status?.targetGroups as { arn: string }[]).map((t) => t.arn)).toEqual([tgArn]);
    await waitFor(async () => ((await targetsOf(tgArn)).length === 2 ? true : undefined), {
      timeoutMs: 30_000,
      description: 'the stray target deregistered',
    });
    expect(await targetsOf(tgArn)).toEqual(['10.20.1.10:8080', '10.20.2.11:8080']);
  });
});

// Issue 27, item 16: an ObserveOnly MyIngress kept `state: active` (and the rest of what it last
// saw) after its load balancer was deleted.
describe('MyIngress ObserveOnly whose load balancer is deleted', () => {
  it('is Ready=False NotFound and keeps no status of the load balancer that is gone', async () => {
    const ns = await setup('ming-observed-gone', {}, '1s');
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'shop' },
      spec: spec(),
    });
    const m = await waitReady(ns, 'shop');
    const arn = String(m.status?.arn);
    await admin.patch(
      resourcePath(myIngressType, { namespace: ns, name: 'shop' }),
      { spec: { managementPolicy: 'ObserveOnly' } },
      'merge',
    );
    await waitFor(
      async () => {
        const r = await readObject<MyIngress>(admin, myIngressType, ns, 'shop');
        return r?.status?.observedGeneration === r?.metadata.generation &&
          r?.metadata.finalizers === undefined
          ? true
          : undefined;
      },
      { timeoutMs: 30_000, description: 'shop observed only' },
    );
    expect((await readObject<MyIngress>(admin, myIngressType, ns, 'shop'))?.status?.state).toBe('active');
    await elb.send(new DeleteLoadBalancerCommand({ LoadBalancerArn: arn }));
    const gone = await waitFor(
      async () => {
        const r = await readObject<MyIngress>(admin, myIngressType, ns, 'shop');
        return r?.status?.conditions?.find((c) => c.type === 'Ready')?.reason === 'NotFound' ? r : undefined;
      },
      { timeoutMs: 30_000, description: 'shop Ready=False NotFound' },
    );
    expect(gone.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('False');
    expect(gone.status?.conditions?.find((c) => c.type === 'Synced')?.status).toBe('True');
    for (const field of [
      'state',
      'arn',
      'dnsName',
      'canonicalHostedZoneId',
      'listeners',
      'targetGroups',
    ] as const)
      expect(gone.status?.[field], `status.${field}`).toBeUndefined();
  });
});

describe('MyIngress forwarding to a Service that is not there (issue 14 item 11)', () => {
  /** The Ready condition once it has `reason`, written for the object's current generation. */
  async function waitReadyReason(ns: string, name: string, reason: string): Promise<Condition> {
    return waitFor(
      async () => {
        const m = await readObject<MyIngress>(admin, myIngressType, ns, name);
        const c = m?.status?.conditions?.find((x) => x.type === 'Ready');
        return c?.reason === reason && c.observedGeneration === m?.metadata.generation ? c : undefined;
      },
      { timeoutMs: 30_000, description: `${ns}/${name} Ready reason ${reason}` },
    );
  }

  async function createShop(ns: string, s: MyIngressSpec = spec()): Promise<void> {
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'shop' },
      spec: s,
    });
  }

  async function warnings(ns: string, reason: string): Promise<{ note: string; series?: unknown }[]> {
    return (await eventsFor(admin, ns, 'shop')).filter((e) => e.type === 'Warning' && e.reason === reason);
  }

  it('is Ready=False ServiceNotFound with one Warning and its load balancer, then Ready with targets once the Service appears', async () => {
    const ns = await newNamespace(admin, 'ming-nosvc');
    // The default resync (10 minutes): becoming Ready below can only come from the Service's watch event.
    const op = await startController((s) => myIngressController(s, { pollMs: 300 }), {
      namespace: ns,
      endpoint: proxy.endpoint,
    });
    running.push(op);
    await createShop(ns);

    const notFound = await waitReadyReason(ns, 'shop', 'ServiceNotFound');
    const message =
      'spec.listeners[0].defaultAction.forward.service.name "web" (also spec.rules[1].action.forward.service.name): ' +
      `Service web does not exist in namespace ${ns}; create Service web in namespace ${ns} or correct the name.`;
    expect(notFound).toMatchObject({ status: 'False', message });
    // The load balancer, its listener, rules and (empty) target group are created all the same
    // (the verdict can come with the pass that creates them; the status shows them after it).
    const m = await waitFor(
      async () => {
        const r = await readObject<MyIngress>(admin, myIngressType, ns, 'shop');
        return (r?.status?.listeners as unknown[] | undefined)?.length === 1 &&
          (r?.status?.rules as unknown[] | undefined)?.length === 2
          ? r
          : undefined;
      },
      { timeoutMs: 30_000, description: 'shop status with its listener and rules' },
    );
    // The reconcile worked: the user has to act, not the operator.
    expect(m.status?.conditions?.find((c) => c.type === 'Synced')).toMatchObject({
      status: 'True',
      reason: 'ReconcileSuccess',
    });
    expect(m.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ServiceNotFound',
      message,
    });
    const lbArn = String(m.status?.arn);
    const lbs = (await elb.send(new DescribeLoadBalancersCommand({ LoadBalancerArns: [lbArn] })))
      .LoadBalancers;
    expect(lbs?.map((l) => l.State?.Code)).toEqual(['active']);
    expect((m.status?.listeners as { port: number }[]).map((l) => l.port)).toEqual([80]);
    expect((m.status?.rules as { priority: number }[]).map((r) => r.priority)).toEqual([10, 20]);
    const tgs = m.status?.targetGroups as { service: string; arn: string; registeredTargets: number }[];
    expect(tgs.map((t) => [t.service, t.registeredTargets])).toEqual([['web', 0]]);
    const tgArn = tgs[0]?.arn ?? '';
    const listener = (await elb.send(new DescribeListenersCommand({ LoadBalancerArn: lbArn })))
      .Listeners?.[0];
    expect(listener?.DefaultActions?.[0]).toMatchObject({ Type: 'forward', TargetGroupArn: tgArn });

    const warned = await waitFor(
      async () => {
        const w = await warnings(ns, 'ServiceNotFound');
        return w.length > 0 ? w : undefined;
      },
      { timeoutMs: 10_000, description: 'a Warning Event ServiceNotFound' },
    );
    expect(warned.map((e) => e.note)).toEqual([message]);

    await admin.create(`/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'web' },
      spec: { ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
    });
    await putEndpoints(ns, [
      { ip: '10.20.1.10', ready: true },
      { ip: '10.20.2.11', ready: true },
    ]);
    const ready = await waitFor(
      async () => {
        const r = await readObject<MyIngress>(admin, myIngressType, ns, 'shop');
        const c = r?.status?.conditions?.find((x) => x.type === 'Ready');
        const registered = (r?.status?.targetGroups as { registeredTargets: number }[] | undefined)?.[0]
          ?.registeredTargets;
        return c?.status === 'True' && registered === 2 ? r : undefined;
      },
      { timeoutMs: 30_000, description: 'shop Ready with 2 targets once Service web exists' },
    );
    expect(ready.status?.conditions?.find((c) => c.type === 'Ready')?.reason).toBe('Available');
    expect(ready.status?.arn).toBe(lbArn);
    expect(await targetsOf(tgArn)).toEqual(['10.20.1.10:8080', '10.20.2.11:8080']);
    // One Warning for the whole time the Service was missing, however many reconciles saw it.
    const { counterValue } = await import('../support/gadgetController.ts');
    expect(await counterValue(op.metrics.events, { reason: 'ServiceNotFound' })).toBe(1);
    expect(await warnings(ns, 'ServiceNotFound')).toHaveLength(1);
  });

  it('does not repeat the Warning at every resync', async () => {
    const ns = await newNamespace(admin, 'ming-nosvc-resync');
    const op = await startController((s) => myIngressController(s, { pollMs: 300 }), {
      namespace: ns,
      endpoint: proxy.endpoint,
      resyncPeriod: '1s',
    });
    running.push(op);
    await createShop(ns);
    await waitReadyReason(ns, 'shop', 'ServiceNotFound');
    const { counterValue } = await import('../support/gadgetController.ts');
    const before = await counterValue(op.metrics.reconcileTotal, { controller: 'myingress' });
    await waitFor(
      async () =>
        (await counterValue(op.metrics.reconcileTotal, { controller: 'myingress' })) >= before + 3
          ? true
          : undefined,
      { timeoutMs: 30_000, description: 'three more reconciles' },
    );
    expect(
      (await readObject<MyIngress>(admin, myIngressType, ns, 'shop'))?.status?.conditions?.find(
        (c) => c.type === 'Ready',
      )?.reason,
    ).toBe('ServiceNotFound');
    // Counted at the recorder: a repeat would show here even where the API folds it into a series.
    expect(await counterValue(op.metrics.events, { reason: 'ServiceNotFound' })).toBe(1);
    const w = await warnings(ns, 'ServiceNotFound');
    expect(w).toHaveLength(1);
    expect(w[0]?.series).toBeUndefined();
  });

  it('does not find a Service of the same name in another namespace', async () => {
    const a = await newNamespace(admin, 'ming-svc-a');
    const b = await newNamespace(admin, 'ming-svc-b');
    running.push(
      await startController((s) => myIngressController(s, { pollMs: 300 }), {
        namespace: `${a},${b}`,
        endpoint: proxy.endpoint,
      }),
    );
    await admin.create(`/api/v1/namespaces/${a}/services`, {
      metadata: { name: 'web' },
      spec: { ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
    });
    await putEndpoints(a, [{ ip: '10.20.1.10', ready: true }]);
    await createShop(a);
    await createShop(b);
    // The controller sees Service web: the MyIngress beside it is Ready with its target…
    const inA = await waitReady(a, 'shop');
    expect((inA.status?.targetGroups as { registeredTargets: number }[])[0]?.registeredTargets).toBe(1);
    // …and the one in the other namespace does not borrow it.
    const inB = await waitReadyReason(b, 'shop', 'ServiceNotFound');
    expect(inB.status).toBe('False');
    expect(inB.message).toContain(
      `Service web does not exist in namespace ${b}; create Service web in namespace ${b} or correct the name.`,
    );
  });

  it('is Ready=False ServicePortNotFound for a port the Service lacks, and Ready once the Service has it', async () => {
    const ns = await setup('ming-noport');
    const s = spec();
    await createShop(ns, {
      ...s,
      listeners: [
        { port: 80, protocol: 'HTTP', defaultAction: { forward: { service: { name: 'web', port: 8443 } } } },
      ],
      rules: [],
    });
    const c = await waitReadyReason(ns, 'shop', 'ServicePortNotFound');
    expect(c).toMatchObject({
      status: 'False',
      message: `spec.listeners[0].defaultAction.forward.service.port 8443: Service web in namespace ${ns} has no port 8443 (it has 80); add port 8443 to Service web or correct the port.`,
    });
    await admin.patch(
      `/api/v1/namespaces/${ns}/services/web`,
      { spec: { ports: [{ name: 'https', port: 8443, targetPort: 8080, protocol: 'TCP' }] } },
      'merge',
    );
    const m = await waitReady(ns, 'shop', 30_000);
    expect(m.status?.conditions?.find((x) => x.type === 'Ready')?.reason).toBe('Available');
  });
});
