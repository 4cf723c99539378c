// MyIngress observe with its backend Services (issue 14 item 11), against a
// mocked ELBv2 holding one active load balancer with its listener and target
// group: a missing Service is judged only once the Service and EndpointSlice
// caches have listed, and targets are left alone until then.
import {
  DescribeListenersCommand,
  DescribeLoadBalancerAttributesCommand,
  DescribeLoadBalancersCommand,
  DescribeRulesCommand,
  DescribeTagsCommand,
  DescribeTargetGroupsCommand,
  DescribeTargetGroupAttributesCommand,
  DescribeTargetHealthCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import {
  GetResourcesCommand,
  ResourceGroupsTaggingAPIClient,
} from '@aws-sdk/client-resource-groups-tagging-api';
import { mockClient } from 'aws-sdk-client-mock';
import { pino } from 'pino';
import { beforeEach, describe, expect, it } from 'vitest';
import { ownershipOf, ownershipTagMap, type Condition } from '../../src/apis/managed.ts';
import type { KubeObject } from '../../src/apis/meta.ts';
import { MyIngressAdapter } from '../../src/kinds/myingress/adapter.ts';
import { isServiceEndpointSlice } from '../../src/kinds/myingress/backends.ts';
import type { MyIngress } from '../../src/kinds/myingress/api.ts';
import { targetGroupName } from '../../src/kinds/myingress/names.ts';
import { LoadBalancerDescriber, TagDescriber } from '../../src/providers/elbv2/describeBatcher.ts';
import { TaggedResources } from '../../src/providers/aws/taggedResources.ts';
import type { ReconcileContext } from '../../src/runtime/adapter.ts';
import { realClock } from '../../src/runtime/clock.ts';
import { TargetHealthBoard } from '../../src/kinds/myingress/targetHealthBoard.ts';
import { managedGroupId, mockManagedGroup } from '../support/managedGroupMock.ts';

const elb = mockClient(ElasticLoadBalancingV2Client);
// No target group found by ownership tag (looks.ts asks at full looks).
mockClient(ResourceGroupsTaggingAPIClient).on(GetResourcesCommand).resolves({ ResourceTagMappingList: [] });
const lbArn = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/sky-1-shop-shop/1';
const tgArn = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/sky-1-web-80/2';
const pollMs = 300;

function ingress(ready?: Partial<Condition>): MyIngress {
  return {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'MyIngress',
    metadata: { name: 'shop', namespace: 'shop', uid: 'uid-1', generation: 2 },
    spec: {
      subnets: ['subnet-1', 'subnet-2'],
      listeners: [
        { port: 80, protocol: 'HTTP', defaultAction: { forward: { service: { name: 'web', port: 80 } } } },
      ],
    },
    status: {
      arn: lbArn,
      ...(ready !== undefined
        ? {
            conditions: [
              {
                type: 'Ready',
                status: 'False',
                reason: 'ServiceNotFound',
                message: 'create Service web',
                lastTransitionTime: '2026-11-22T01:00:00Z',
                observedGeneration: 2,
                ...ready,
              },
            ],
          }
        : {}),
    },
  };
}

const ctx: ReconcileContext = {
  logger: pino({ level: 'silent' }),
  ownership: ownershipOf(ingress(), 'test-cluster'),
  clock: realClock,
};

/** What the Service and EndpointSlice caches hold, and whether they have listed. */
interface Caches {
  synced: boolean;
  services: Record<string, KubeObject>;
  slices: KubeObject[];
}

function adapter(caches: Caches): MyIngressAdapter {
  const client = new ElasticLoadBalancingV2Client({ region: 'us-east-1' });
  return new MyIngressAdapter({
    elbv2: client,
    elbv2Create: client,
    // The managed security group is read (EC2) at full looks; these tests count ELBv2's calls.
    ec2: mockManagedGroup(ctx.ownership).ec2,
    wafv2: () => Promise.reject(new Error('these looks never ask WAFv2')),
    certificates: {
      region: 'us-east-1',
      forHost: () => Promise.reject(new Error('these specs name no certificate hosts')),
    },
    describer: new LoadBalancerDescriber(client, realClock, 0),
    tagDescriber: new TagDescriber(client, realClock, 0),
    taggedResources: new TaggedResources(() =>
      Promise.resolve(new ResourceGroupsTaggingAPIClient({ region: 'us-east-1' })),
    ),
    service: (ns, name) => (ns === 'shop' ? caches.services[name] : undefined),
    endpointSlices: (ns, svc) =>
      caches.slices.filter(
        (s) => s.metadata.namespace === ns && s.metadata.labels?.['kubernetes.io/service-name'] === svc,
      ),
    backendCachesSynced: () => caches.synced,
    pollMs,
    fullCheckMs: 3_600_000,
    // No Pod waits for a target-health gate here (test/integration/readinessGate.test.ts).
    gatedPod: () => undefined,
    gatedPods: () => [],
    ingressesIn: () => [],
    targetHealth: new TargetHealthBoard(),
    gatePollMs: 2000,
  });
}

const web: KubeObject = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'shop' },
  spec: { ports: [{ port: 80, targetPort: 8080 }] },
} as KubeObject;

beforeEach(() => {
  elb.reset();
  const tags = Object.entries(ownershipTagMap(ctx.ownership)).map(([Key, Value]) => ({ Key, Value }));
  elb.on(DescribeLoadBalancersCommand).resolves({
    LoadBalancers: [
      {
        LoadBalancerArn: lbArn,
        SecurityGroups: [managedGroupId],
        AvailabilityZones: [{ SubnetId: 'subnet-1' }, { SubnetId: 'subnet-2' }],
        State: { Code: 'active' },
        DNSName: 'shop.elb',
        VpcId: 'vpc-1',
      },
    ],
  });
  elb.on(DescribeTagsCommand).resolves({ TagDescriptions: [{ ResourceArn: lbArn, Tags: tags }] });
  elb.on(DescribeListenersCommand).resolves({
    Listeners: [
      {
        ListenerArn: `${lbArn}/l80`,
        Port: 80,
        Protocol: 'HTTP',
        DefaultActions: [{ Type: 'forward', TargetGroupArn: tgArn }],
      },
    ],
  });
  elb.on(DescribeRulesCommand).resolves({ Rules: [] });
  elb.on(DescribeLoadBalancerAttributesCommand).resolves({ Attributes: [] });
  elb.on(DescribeTargetGroupAttributesCommand).resolves({ Attributes: [] });
  elb.on(DescribeTargetGroupsCommand).resolves({
    TargetGroups: [
      {
        TargetGroupArn: tgArn,
        TargetGroupName: targetGroupName('uid-1', 'web', 80),
        HealthCheckPath: '/',
        HealthCheckIntervalSeconds: 15,
        HealthCheckTimeoutSeconds: 5,
        HealthyThresholdCount: 2,
        UnhealthyThresholdCount: 2,
        Matcher: { HttpCode: '200' },
      },
    ],
  });
  // One target registered by an earlier pass.
  elb.on(DescribeTargetHealthCommand).resolves({
    TargetHealthDescriptions: [
      { Target: { Id: '10.0.0.1', Port: 8080 }, TargetHealth: { State: 'healthy' } },
    ],
  });
});

describe('MyIngress observe and its backend Services', () => {
  it('caches listed, Service missing: ServiceNotFound, a person must act, no poll of AWS', async () => {
    const obs = await adapter({ synced: true, services: {}, slices: [] }).observe(ingress(), ctx);
    expect(obs.exists).toBe(true);
    if (!obs.exists) return;
    expect(obs.ready).toEqual({
      ready: false,
      reason: 'ServiceNotFound',
      message:
        'spec.listeners[0].defaultAction.forward.service.name "web": Service web does not exist in namespace shop; create Service web in namespace shop or correct the name.',
      actionRequired: true,
    });
    // The engine looks again at the resync period; the Service's watch event enqueues it sooner.
    expect(obs.requeueAfterMs).toBeUndefined();
    // The registered target is left alone: nothing to take it from.
    expect(obs.delta).toEqual([]);
  });

  it('caches not listed yet: no ServiceNotFound, targets left alone, looked at again at the poll interval', async () => {
    const obs = await adapter({ synced: false, services: {}, slices: [] }).observe(ingress(), ctx);
    if (!obs.exists) throw new Error('expected the load balancer');
    expect(obs.ready).toEqual({ ready: true, reason: 'Available' });
    expect(obs.requeueAfterMs).toBe(pollMs);
    expect(obs.delta).toEqual([]);
  });

  it('caches not listed yet, the Service known but its EndpointSlices not: targets are not taken away', async () => {
    const obs = await adapter({ synced: false, services: { web }, slices: [] }).observe(ingress(), ctx);
    if (!obs.exists) throw new Error('expected the load balancer');
    expect(obs.delta.map((d) => d.field)).not.toContain('targets');
  });

  it('caches not listed yet: a verdict already written for this generation stands', async () => {
    const obs = await adapter({ synced: false, services: {}, slices: [] }).observe(ingress({}), ctx);
    if (!obs.exists) throw new Error('expected the load balancer');
    expect(obs.ready).toEqual({
      ready: false,
      reason: 'ServiceNotFound',
      message: 'create Service web',
      actionRequired: true,
    });
    expect(obs.requeueAfterMs).toBe(pollMs);
    const older = await adapter({ synced: false, services: {}, slices: [] }).observe(
      ingress({ observedGeneration: 1 }),
      ctx,
    );
    expect(older.exists && older.ready.reason).toBe('Available');
  });

  it('caches listed, Service there with its endpoints: Ready, targets steered to them', async () => {
    const slice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'web-1', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } },
      ports: [{ port: 8080 }],
      endpoints: [{ addresses: ['10.0.0.2'], conditions: { ready: true } }],
    } as KubeObject;
    const obs = await adapter({ synced: true, services: { web }, slices: [slice] }).observe(ingress(), ctx);
    if (!obs.exists) throw new Error('expected the load balancer');
    expect(obs.ready).toEqual({ ready: true, reason: 'Available' });
    expect(obs.requeueAfterMs).toBeUndefined();
    expect(obs.delta).toEqual([{ field: 'targets', change: 'targets of web:80: 1 → 1' }]);
  });
});

describe('isServiceEndpointSlice', () => {
  const slice = (namespace: string, labels: Record<string, string>) => ({ metadata: { namespace, labels } });
  const controller = { 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' };
  it('accepts another manager’s slice only when the TeamPolicy trusts that manager', () => {
    const mesh = slice('shop', {
      'kubernetes.io/service-name': 'web',
      'endpointslice.kubernetes.io/managed-by': 'mesh',
    });
    expect(isServiceEndpointSlice(mesh, 'shop', 'web')).toBe(false);
    expect(isServiceEndpointSlice(mesh, 'shop', 'web', ['mesh'])).toBe(true);
    expect(
      isServiceEndpointSlice(slice('shop', { 'kubernetes.io/service-name': 'web' }), 'shop', 'web', ['mesh']),
    ).toBe(false);
  });
  it('accepts any slice of the Service in its namespace, with any manager or none, when the TeamPolicy trusts *', () => {
    const handMade = slice('shop', { 'kubernetes.io/service-name': 'web' });
    expect(isServiceEndpointSlice(handMade, 'shop', 'web')).toBe(false);
    expect(isServiceEndpointSlice(handMade, 'shop', 'web', ['*'])).toBe(true);
    expect(
      isServiceEndpointSlice(
        slice('shop', { 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': 'x' }),
        'shop',
        'web',
        ['*'],
      ),
    ).toBe(true);
    // Still only the Service's own slices, in its own namespace.
    expect(
      isServiceEndpointSlice(slice('shop', { 'kubernetes.io/service-name': 'api' }), 'shop', 'web', ['*']),
    ).toBe(false);
    expect(
      isServiceEndpointSlice(slice('other', { 'kubernetes.io/service-name': 'web' }), 'shop', 'web', ['*']),
    ).toBe(false);
  });
  it("accepts the EndpointSlice controller's slice of the Service in its namespace only", () => {
    expect(
      isServiceEndpointSlice(
        slice('shop', { 'kubernetes.io/service-name': 'web', ...controller }),
        'shop',
        'web',
      ),
    ).toBe(true);
    expect(
      isServiceEndpointSlice(
        slice('other', { 'kubernetes.io/service-name': 'web', ...controller }),
        'shop',
        'web',
      ),
    ).toBe(false);
    expect(
      isServiceEndpointSlice(
        slice('shop', { 'kubernetes.io/service-name': 'api', ...controller }),
        'shop',
        'web',
      ),
    ).toBe(false);
  });
  it('refuses a hand-made slice, or one another controller manages', () => {
    expect(
      isServiceEndpointSlice(slice('shop', { 'kubernetes.io/service-name': 'web' }), 'shop', 'web'),
    ).toBe(false);
    expect(
      isServiceEndpointSlice(
        slice('shop', {
          'kubernetes.io/service-name': 'web',
          'endpointslice.kubernetes.io/managed-by': 'me',
        }),
        'shop',
        'web',
      ),
    ).toBe(false);
  });
});

describe('MyIngress release', () => {
  it("forgets a deleted (Orphan) object's remembered children, keeps them on a switch to ObserveOnly", async () => {
    const a = adapter({ synced: true, services: { web }, slices: [] });
    await a.observe(ingress(), ctx);
    expect(a.remembered).toBe(1);
    expect(await a.release(ingress(), ctx, 'observeOnly')).toEqual({});
    expect(a.remembered).toBe(1);
    expect(await a.release(ingress(), ctx, 'deleted')).toEqual({});
    expect(a.remembered).toBe(0);
  });
});
