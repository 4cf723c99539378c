// How much of AWS a MyIngress observe reads (looks.ts), against a mocked ELBv2
// holding one active load balancer with its listener and target group: a full
// look first, then the load balancer alone while nothing changed; tags and one
// target group's targets when only endpoints changed; in full again after the
// full-check period, on a spec change, or when what was remembered is gone;
// and what create and update leave for the next look.
import {
  CreateListenerCommand,
  CreateLoadBalancerCommand,
  CreateTargetGroupCommand,
  DeleteTargetGroupCommand,
  DescribeListenersCommand,
  DescribeLoadBalancerAttributesCommand,
  DescribeLoadBalancersCommand,
  DescribeRulesCommand,
  DescribeTagsCommand,
  DescribeTargetGroupAttributesCommand,
  DescribeTargetGroupsCommand,
  DescribeTargetHealthCommand,
  ElasticLoadBalancingV2Client,
  ModifyTargetGroupAttributesCommand,
  RegisterTargetsCommand,
  type Listener,
  type TargetGroup,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import {
  GetResourcesCommand,
  ResourceGroupsTaggingAPIClient,
} from '@aws-sdk/client-resource-groups-tagging-api';
import { mockClient } from 'aws-sdk-client-mock';
import { pino } from 'pino';
import { beforeEach, describe, expect, it } from 'vitest';
import { ownershipOf, ownershipTagMap } from '../../src/apis/managed.ts';
import type { KubeObject } from '../../src/apis/meta.ts';
import {
  MyIngressAdapter,
  type MyIngressDetails,
  type MyIngressField,
} from '../../src/kinds/myingress/adapter.ts';
import type { MyIngress, MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import { loadBalancerName, targetGroupName } from '../../src/kinds/myingress/names.ts';
import { LoadBalancerDescriber, TagDescriber } from '../../src/providers/elbv2/describeBatcher.ts';
import { TaggedResources } from '../../src/providers/aws/taggedResources.ts';
import type { ExistingObservation, Observation, ReconcileContext } from '../../src/runtime/adapter.ts';
import { realClock } from '../../src/runtime/clock.ts';
import { FakeClock } from '../support/fakeClock.ts';
import { TargetHealthBoard } from '../../src/kinds/myingress/targetHealthBoard.ts';
import { managedGroupId, mockManagedGroup } from '../support/managedGroupMock.ts';

const elb = mockClient(ElasticLoadBalancingV2Client);
const tagging = mockClient(ResourceGroupsTaggingAPIClient);
const lbArn = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/sky-1-shop-shop/1';
const tgArn = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/sky-1-web-80/2';
const listenerArn = `${lbArn}/l80`;
const fullCheckMs = 3_600_000;

const baseSpec: MyIngressSpec = {
  subnets: ['subnet-1', 'subnet-2'],
  listeners: [
    { port: 80, protocol: 'HTTP', defaultAction: { forward: { service: { name: 'web', port: 80 } } } },
  ],
};

/** The object; its status records the load balancer unless told otherwise (before its create). */
function ingress(
  spec: MyIngressSpec = baseSpec,
  status: Record<string, unknown> = { arn: lbArn },
): MyIngress {
  return {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'MyIngress',
    metadata: { name: 'shop', namespace: 'shop', uid: 'uid-1', generation: 1 },
    spec,
    status,
  };
}

const clock = new FakeClock();
const ctx: ReconcileContext = {
  logger: pino({ level: 'silent' }),
  ownership: ownershipOf(ingress(), 'test-cluster'),
  clock,
};

const web = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'shop' },
  spec: { ports: [{ port: 80, targetPort: 8080 }] },
} as KubeObject;

/** The EndpointSlice of Service web with these ready addresses. */
function slice(...ips: string[]): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'web-1', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } },
    ports: [{ port: 8080 }],
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
  } as KubeObject;
}

/** What the mocked ELBv2 holds; tests change it to make drift. */
interface Aws {
  listeners: Listener[];
  targetGroups: TargetGroup[];
  targets: string[];
  /** The target group's attributes, as DescribeTargetGroupAttributes lists them. */
  tgAttributes: Record<string, string>;
}
let aws: Aws;
let slices: KubeObject[];

function adapter(): MyIngressAdapter {
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
    service: (ns, name) => (ns === 'shop' && name === 'web' ? web : undefined),
    endpointSlices: () => slices,
    backendCachesSynced: () => true,
    pollMs: 300,
    fullCheckMs,
    // No Pod waits for a target-health gate here (test/integration/readinessGate.test.ts).
    gatedPod: () => undefined,
    gatedPods: () => [],
    ingressesIn: () => [],
    targetHealth: new TargetHealthBoard(),
    gatePollMs: 2000,
  });
}

const healthCheck = {
  HealthCheckPath: '/',
  HealthCheckIntervalSeconds: 15,
  HealthCheckTimeoutSeconds: 5,
  HealthyThresholdCount: 2,
  UnhealthyThresholdCount: 2,
  Matcher: { HttpCode: '200' },
};

function awsError(name: string): Error {
  return Object.assign(new Error(name), { name, $metadata: { httpStatusCode: 400 } });
}

/** What the mocked Tagging API lists for target groups with the object's uid (it filters nothing itself). */
let tagged: { ResourceARN: string; Tags: { Key: string; Value: string }[] }[];

beforeEach(() => {
  elb.reset();
  tagging.reset();
  tagged = [
    {
      ResourceARN: tgArn,
      Tags: Object.entries(ownershipTagMap(ctx.ownership)).map(([Key, Value]) => ({ Key, Value })),
    },
  ];
  tagging.on(GetResourcesCommand).callsFake(() => Promise.resolve({ ResourceTagMappingList: tagged }));
  slices = [slice('10.0.0.1')];
  aws = {
    listeners: [
      {
        ListenerArn: listenerArn,
        Port: 80,
        Protocol: 'HTTP',
        DefaultActions: [{ Type: 'forward', TargetGroupArn: tgArn }],
      },
    ],
    targetGroups: [
      { TargetGroupArn: tgArn, TargetGroupName: targetGroupName('uid-1', 'web', 80), ...healthCheck },
    ],
    targets: ['10.0.0.1'],
    tgAttributes: { 'deregistration_delay.timeout_seconds': '300', 'slow_start.duration_seconds': '0' },
  };
  const tags = Object.entries(ownershipTagMap(ctx.ownership)).map(([Key, Value]) => ({ Key, Value }));
  elb.on(DescribeLoadBalancersCommand).resolves({
    LoadBalancers: [
      {
        LoadBalancerArn: lbArn,
        SecurityGroups: [managedGroupId],
        AvailabilityZones: [{ SubnetId: 'subnet-1' }, { SubnetId: 'subnet-2' }],
        LoadBalancerName: loadBalancerName('shop', 'shop', 'uid-1'),
        State: { Code: 'active' },
        DNSName: 'shop.elb',
        VpcId: 'vpc-1',
      },
    ],
  });
  elb.on(DescribeTagsCommand).resolves({ TagDescriptions: [{ ResourceArn: lbArn, Tags: tags }] });
  elb.on(DescribeListenersCommand).callsFake(() => Promise.resolve({ Listeners: aws.listeners }));
  elb.on(DescribeRulesCommand).resolves({ Rules: [] });
  elb.on(DescribeLoadBalancerAttributesCommand).resolves({ Attributes: [] });
  // AWS answers "not found" for a name, or a load balancer, with no target group.
  elb
    .on(DescribeTargetGroupsCommand)
    .callsFake(() =>
      aws.targetGroups.length === 0
        ? Promise.reject(awsError('TargetGroupNotFoundException'))
        : Promise.resolve({ TargetGroups: aws.targetGroups }),
    );
  elb.on(DescribeTargetHealthCommand).callsFake(() =>
    aws.targetGroups.length === 0
      ? Promise.reject(awsError('TargetGroupNotFoundException'))
      : Promise.resolve({
          TargetHealthDescriptions: aws.targets.map((Id) => ({
            Target: { Id, Port: 8080 },
            TargetHealth: { State: 'healthy' },
          })),
        }),
  );
  elb.on(DescribeTargetGroupAttributesCommand).callsFake(() =>
    Promise.resolve({
      Attributes: Object.entries(aws.tgAttributes).map(([Key, Value]) => ({ Key, Value })),
    }),
  );
  elb
    .on(ModifyTargetGroupAttributesCommand)
    .callsFake((input: { Attributes?: { Key?: string; Value?: string }[] }) => {
      for (const a of input.Attributes ?? []) aws.tgAttributes[a.Key ?? ''] = a.Value ?? '';
      return Promise.resolve({});
    });
});

/** The ELBv2 operations called since the last reset of the mock's history, in order. */
function calls(): string[] {
  return elb
    .calls()
    .map((c) => (c.args[0] as { constructor: { name: string } }).constructor.name.replace(/Command$/, ''));
}

// The load balancer's tags and its target groups' are read together, in one DescribeTags, last.
const full = [
  'DescribeLoadBalancers',
  'DescribeListeners',
  'DescribeRules',
  'DescribeLoadBalancerAttributes',
  'DescribeTargetGroups',
  'DescribeTargetHealth',
  'DescribeTargetGroupAttributes',
  'DescribeTags',
];

function existing(
  o: Observation<MyIngressDetails, MyIngressField>,
): ExistingObservation<MyIngressDetails, MyIngressField> {
  if (!o.exists) throw new Error('expected the load balancer');
  return o;
}

describe('MyIngress looks', () => {
  it('describes everything at first, then only the load balancer while nothing changed', async () => {
    const a = adapter();
    const first = existing(await a.observe(ingress(), ctx));
    expect(calls()).toEqual(full);
    expect(first.delta).toEqual([]);
    elb.resetHistory();
    clock.advance(fullCheckMs - 1);
    const again = existing(await a.observe(ingress(), ctx));
    expect(calls()).toEqual(['DescribeLoadBalancers']);
    expect(again.delta).toEqual([]);
    expect(again.ready).toEqual(first.ready);
    expect(again.status).toEqual(first.status);
  });

  it('re-reads the tags and the changed target group’s targets, nothing else, when only endpoints changed', async () => {
    const a = adapter();
    await a.observe(ingress(), ctx);
    elb.resetHistory();
    slices = [slice('10.0.0.1', '10.0.0.2')];
    const obs = existing(await a.observe(ingress(), ctx));
    expect(calls()).toEqual(['DescribeLoadBalancers', 'DescribeTags', 'DescribeTargetHealth']);
    // Only the endpoints moved, AWS holds what Skylift left: an update, not drift (issue 27, item 13).
    expect(obs.delta).toEqual([{ field: 'targets', change: 'targets of web:80: 1 → 2', follows: true }]);
  });

  it('takes targets registered by someone else into account before registering', async () => {
    const a = adapter();
    await a.observe(ingress(), ctx);
    aws.targets = ['10.0.0.1', '10.0.0.2'];
    slices = [slice('10.0.0.1', '10.0.0.2')];
    const obs = existing(await a.observe(ingress(), ctx));
    expect(obs.delta).toEqual([]);
    elb.resetHistory();
    // What was re-read is remembered: the next look needs the load balancer alone.
    existing(await a.observe(ingress(), ctx));
    expect(calls()).toEqual(['DescribeLoadBalancers']);
  });

  it('sees drift of a listener only at the next full look, once the full-check period is over', async () => {
    const a = adapter();
    await a.observe(ingress(), ctx);
    aws.listeners = [
      {
        ...aws.listeners[0],
        DefaultActions: [{ Type: 'fixed-response', FixedResponseConfig: { StatusCode: '404' } }],
      },
    ];
    expect(existing(await a.observe(ingress(), ctx)).delta).toEqual([]);
    elb.resetHistory();
    clock.advance(fullCheckMs);
    const obs = existing(await a.observe(ingress(), ctx));
    expect(calls()).toEqual(full);
    expect(obs.delta).toEqual([{ field: 'listeners', change: 'listener 80 changed' }]);
  });

  it('sees a target group attribute changed by hand only at the next full look', async () => {
    const a = adapter();
    await a.observe(ingress(), ctx);
    aws.tgAttributes['deregistration_delay.timeout_seconds'] = '20';
    elb.resetHistory();
    expect(existing(await a.observe(ingress(), ctx)).delta).toEqual([]);
    expect(calls()).toEqual(['DescribeLoadBalancers']);
    elb.resetHistory();
    clock.advance(fullCheckMs);
    const obs = existing(await a.observe(ingress(), ctx));
    expect(calls()).toEqual(full);
    expect(obs.delta).toEqual([
      {
        field: 'targetGroupAttributes',
        change: 'attributes of target group web:80: deregistration_delay.timeout_seconds',
      },
    ]);
  });

  it('sets changed target group attributes with one ModifyTargetGroupAttributes, then recalls them', async () => {
    const a = adapter();
    await a.observe(ingress(), ctx);
    const changed: MyIngressSpec = {
      ...baseSpec,
      listeners: [
        {
          port: 80,
          protocol: 'HTTP',
          defaultAction: { forward: { service: { name: 'web', port: 80, slowStartSeconds: 60 } } },
        },
      ],
    };
    const obs = existing(await a.observe(ingress(changed), ctx));
    expect(obs.delta).toEqual([
      {
        field: 'targetGroupAttributes',
        change: 'attributes of target group web:80: slow_start.duration_seconds',
      },
    ]);
    elb.resetHistory();
    await a.update(ingress(changed), obs, ctx);
    expect(calls()).toEqual(['ModifyTargetGroupAttributes']);
    expect(elb.commandCalls(ModifyTargetGroupAttributesCommand)[0]?.args[0].input.Attributes).toEqual([
      { Key: 'slow_start.duration_seconds', Value: '60' },
    ]);
    elb.resetHistory();
    expect(existing(await a.observe(ingress(changed), ctx)).delta).toEqual([]);
    expect(calls()).toEqual(['DescribeLoadBalancers']);
  });

  it('looks in full at a changed spec', async () => {
    const a = adapter();
    await a.observe(ingress(), ctx);
    elb.resetHistory();
    const changed: MyIngressSpec = {
      ...baseSpec,
      listeners: [
        {
          port: 80,
          protocol: 'HTTP',
          defaultAction: {
            forward: { service: { name: 'web', port: 80, healthCheck: { path: '/healthz' } } },
          },
        },
      ],
    };
    const obs = existing(await a.observe(ingress(changed), ctx));
    expect(calls()).toEqual(full);
    expect(obs.delta).toEqual([{ field: 'healthChecks', change: 'health check of web:80' }]);
  });

  it('looks in full when a target group it remembers is gone', async () => {
    const a = adapter();
    await a.observe(ingress(), ctx);
    aws.targetGroups = [];
    slices = [slice('10.0.0.2')];
    elb.resetHistory();
    const obs = existing(await a.observe(ingress(), ctx));
    expect(calls()).toContain('DescribeListeners');
    expect(obs.delta).toContainEqual({ field: 'targetGroups', change: 'target group for web:80 missing' });
  });
});

describe('MyIngress looks after create and update', () => {
  beforeEach(() => {
    elb.on(CreateLoadBalancerCommand).resolves({
      LoadBalancers: [
        {
          LoadBalancerArn: lbArn,
          AvailabilityZones: [{ SubnetId: 'subnet-1' }, { SubnetId: 'subnet-2' }],
          State: { Code: 'provisioning' },
          DNSName: 'shop.elb',
          VpcId: 'vpc-1',
        },
      ],
    });
    elb.on(CreateTargetGroupCommand).resolves({
      TargetGroups: [{ TargetGroupArn: tgArn, TargetGroupName: targetGroupName('uid-1', 'web', 80) }],
    });
    elb.on(CreateListenerCommand).resolves({ Listeners: [{ ListenerArn: listenerArn }] });
    elb.on(RegisterTargetsCommand).resolves({});
    aws.listeners = [];
    aws.targetGroups = [];
    aws.targets = [];
  });

  it('after its create, asks only for the load balancer and its tags, and finds its children missing', async () => {
    const a = adapter();
    await a.create(ingress(baseSpec, {}), ctx);
    elb.resetHistory();
    const obs = existing(await a.observe(ingress(), ctx));
    expect(calls()).toEqual(['DescribeLoadBalancers', 'DescribeTags']);
    expect(obs.ownership).toEqual(ctx.ownership);
    expect(obs.delta.map((d) => d.change)).toEqual([
      'target group for web:80 missing',
      'listener 80 missing',
    ]);
  });

  it('remembers what an update made: the next look needs the load balancer alone and reports it', async () => {
    const a = adapter();
    await a.create(ingress(baseSpec, {}), ctx);
    const obs = existing(await a.observe(ingress(), ctx));
    await a.update(ingress(), obs, ctx);
    elb.resetHistory();
    const after = existing(await a.observe(ingress(), ctx));
    expect(calls()).toEqual(['DescribeLoadBalancers']);
    expect(after.delta).toEqual([]);
    expect(after.ready).toEqual({ ready: true, reason: 'Available' });
    expect(after.status).toMatchObject({
      listeners: [{ port: 80, arn: listenerArn }],
      targetGroups: [{ service: 'web', port: 80, arn: tgArn, registeredTargets: 1 }],
    });
  });

  it('creates a target group with AWS’s default attributes without setting them', async () => {
    const a = adapter();
    await a.create(ingress(baseSpec, {}), ctx);
    const obs = existing(await a.observe(ingress(), ctx));
    await a.update(ingress(), obs, ctx);
    expect(elb.commandCalls(ModifyTargetGroupAttributesCommand)).toEqual([]);
    expect(elb.commandCalls(DescribeTargetGroupAttributesCommand)).toEqual([]);
  });

  it('sets a new target group’s attributes right after creating it when they are not AWS’s defaults', async () => {
    const spec: MyIngressSpec = {
      ...baseSpec,
      listeners: [
        {
          port: 80,
          protocol: 'HTTP',
          defaultAction: {
            forward: {
              service: { name: 'web', port: 80, deregistrationDelaySeconds: 30, slowStartSeconds: 0 },
            },
          },
        },
      ],
    };
    const a = adapter();
    await a.create(ingress(spec, {}), ctx);
    const obs = existing(await a.observe(ingress(spec), ctx));
    await a.update(ingress(spec), obs, ctx);
    const ops = calls();
    // Before its targets are registered: they drain and start as the spec says from the first.
    expect(ops.indexOf('ModifyTargetGroupAttributes')).toBe(ops.indexOf('CreateTargetGroup') + 1);
    expect(ops.indexOf('RegisterTargets')).toBeGreaterThan(ops.indexOf('ModifyTargetGroupAttributes'));
    expect(elb.commandCalls(ModifyTargetGroupAttributesCommand).map((c) => c.args[0].input)).toEqual([
      { TargetGroupArn: tgArn, Attributes: [{ Key: 'deregistration_delay.timeout_seconds', Value: '30' }] },
    ]);
    // Remembered as set: the next look needs the load balancer alone.
    elb.resetHistory();
    expect(existing(await a.observe(ingress(spec), ctx)).delta).toEqual([]);
    expect(calls()).toEqual(['DescribeLoadBalancers']);
  });

  it('forgets what it knew when an update fails: the next look is a full one', async () => {
    const a = adapter();
    await a.create(ingress(baseSpec, {}), ctx);
    const obs = existing(await a.observe(ingress(), ctx));
    elb.on(CreateListenerCommand).rejects(awsError('TooManyListenersException'));
    await expect(a.update(ingress(), obs, ctx)).rejects.toThrow();
    elb.resetHistory();
    existing(await a.observe(ingress(), ctx));
    expect(calls()).toContain('DescribeListeners');
  });
});

describe('MyIngress target groups found by ownership tag', () => {
  const strayArn = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/sky-1-api-8080/3';
  const withTags = (arn: string, tags: Record<string, string>) => ({
    ResourceARN: arn,
    Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })),
  });

  it.each([
    {
      reason: 'one with this object’s uid and cluster that the spec does not want is a stray',
      tags: ownershipTagMap(ctx.ownership),
      strays: [strayArn],
    },
    {
      reason: 'one of another cluster (the same uid) is never ours',
      tags: ownershipTagMap({ ...ctx.ownership, cluster: 'other-cluster' }),
      strays: [],
    },
    {
      reason: 'one the Tagging API answers with another uid (it filters by ours) is not ours',
      tags: ownershipTagMap({ ...ctx.ownership, uid: 'uid-2' }),
      strays: [],
    },
    { reason: 'one without ownership tags is not ours', tags: { team: 'a' }, strays: [] },
  ])('$reason', async ({ tags, strays }) => {
    tagged = [...tagged, withTags(strayArn, tags)];
    const obs = existing(await adapter().observe(ingress(), ctx));
    // The wanted target group is listed too, and is no stray.
    expect(obs.details.found === 'loadBalancer' ? obs.details.strayTargetGroups : undefined).toEqual(strays);
    expect(obs.delta).toEqual(
      strays.map(() => ({
        field: 'targetGroups',
        change: 'target group sky-1-api-8080 not wanted',
        operation: true,
      })),
    );
    expect(tagging.commandCalls(GetResourcesCommand).map((c) => c.args[0].input)).toEqual([
      {
        TagFilters: [{ Key: 'skylift.dev/uid', Values: ['uid-1'] }],
        ResourceTypeFilters: ['elasticloadbalancing:targetgroup'],
        ResourcesPerPage: 100,
      },
    ]);
  });

  it('asks the Tagging API at full looks only, never when the children are recalled', async () => {
    const a = adapter();
    await a.observe(ingress(), ctx);
    expect(tagging.commandCalls(GetResourcesCommand)).toHaveLength(1);
    tagging.resetHistory();
    clock.advance(fullCheckMs - 1);
    await a.observe(ingress(), ctx);
    expect(tagging.commandCalls(GetResourcesCommand)).toHaveLength(0);
    clock.advance(1);
    await a.observe(ingress(), ctx);
    expect(tagging.commandCalls(GetResourcesCommand)).toHaveLength(1);
  });

  it('goes on without the lookup when tag:GetResources is refused, warning once what to grant', async () => {
    tagging.on(GetResourcesCommand).rejects(awsError('AccessDeniedException'));
    const warnings: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
    const denied: ReconcileContext = { ...ctx, logger };
    const a = adapter();
    const obs = existing(await a.observe(ingress(), denied));
    expect(obs.delta).toEqual([]);
    expect(obs.details.found === 'loadBalancer' ? obs.details.strayTargetGroups : undefined).toEqual([]);
    clock.advance(fullCheckMs);
    existing(await a.observe(ingress(), denied));
    expect(tagging.commandCalls(GetResourcesCommand)).toHaveLength(2);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('grant tag:GetResources');
  });

  it('does not look for strays under ObserveOnly, which would never delete them', async () => {
    tagged = [...tagged, withTags(strayArn, ownershipTagMap(ctx.ownership))];
    const obs = existing(
      await adapter().observe(ingress({ ...baseSpec, managementPolicy: 'ObserveOnly' }), ctx),
    );
    expect(obs.delta).toEqual([]);
    expect(tagging.commandCalls(GetResourcesCommand)).toHaveLength(0);
  });

  it('deletes a stray in the update, after the listeners and rules, and recalls nothing of it', async () => {
    tagged = [...tagged, withTags(strayArn, ownershipTagMap(ctx.ownership))];
    elb.on(DeleteTargetGroupCommand).resolves({});
    const a = adapter();
    const obs = existing(await a.observe(ingress(), ctx));
    elb.resetHistory();
    const updated = await a.update(ingress(), obs, ctx);
    expect(elb.commandCalls(DeleteTargetGroupCommand).map((c) => c.args[0].input)).toEqual([
      { TargetGroupArn: strayArn },
    ]);
    expect(updated.description).toBe('unused target group deleted');
    elb.resetHistory();
    expect(existing(await a.observe(ingress(), ctx)).delta).toEqual([]);
    expect(calls()).toEqual(['DescribeLoadBalancers']);
  });
});
