// `skylift trace myingressgroup/NAME` (group/trace.ts): the shared load balancer, its listeners and
// rules each naming its member, target groups with targets, and the members with their states —
// from the group's status and a stubbed ELBv2.
import {
  DescribeListenersCommand,
  DescribeLoadBalancersCommand,
  DescribeRulesCommand,
  DescribeTagsCommand,
  DescribeTargetGroupsCommand,
  DescribeTargetHealthCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import type { MyIngressGroup } from '../../src/kinds/myingress/group/api.ts';
import { myIngressGroupKind } from '../../src/kinds/myingress/group/index.ts';
import { traceMyIngressGroup } from '../../src/kinds/myingress/group/trace.ts';
import type { AwsClients } from '../../src/providers/aws/clients.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import type { TraceContext } from '../../src/trace/context.ts';
import { renderTree } from '../../src/trace/render.ts';
import { resourceNode } from '../../src/trace/resource.ts';
import { allReady } from '../../src/trace/tree.ts';

const elb = mockClient(ElasticLoadBalancingV2Client);
beforeEach(() => elb.reset());

const now = Date.parse('2026-01-10T12:00:00Z');
const ctx: TraceContext = {
  kube: {} as KubeClient,
  aws: {
    elbv2: () => Promise.resolve(new ElasticLoadBalancingV2Client({ region: 'us-east-1' })),
  } as unknown as AwsClients,
  now,
};

const arn = {
  lb: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/sky-g-shared/1',
  listener: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/sky-g-shared/1/l80',
  shopRule: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/sky-g-shared/1/l80/r1',
  apiRule: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/sky-g-shared/1/l80/r2',
  oldRule: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/sky-g-shared/1/l80/r3',
  shopTg: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/sky-shop-web-80/t1',
  apiTg: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/sky-api-api-80/t2',
};

const group = (status: NonNullable<MyIngressGroup['status']>): MyIngressGroup => ({
  metadata: { name: 'shared', uid: 'g-1', creationTimestamp: '2026-01-10T11:00:00Z', generation: 1 },
  spec: { listeners: [{ port: 80, protocol: 'HTTP' }], allowedNamespaces: { from: 'All' } },
  status,
});

const live = group({
  arn: arn.lb,
  listeners: [{ port: 80, arn: arn.listener }],
  targetGroups: [
    { service: 'storefront/shop/web', port: 80, arn: arn.shopTg, registeredTargets: 1 },
    { service: 'payments/api/api', port: 80, arn: arn.apiTg, registeredTargets: 0 },
  ],
  members: [
    { namespace: 'payments', name: 'api', uid: 'u-api', observedGeneration: 2, state: 'Attached', rules: 1 },
    {
      namespace: 'sandbox',
      name: 'toy',
      uid: 'u-toy',
      state: 'NotAdmitted',
      message: 'not admitted',
      rules: 0,
    },
    {
      namespace: 'storefront',
      name: 'shop',
      uid: 'u-shop',
      observedGeneration: 5,
      state: 'Attached',
      rules: 2,
    },
  ],
  conditions: [
    {
      type: 'Ready',
      status: 'True',
      reason: 'Available',
      message: '',
      lastTransitionTime: '2026-01-10T11:00:00Z',
    },
    {
      type: 'Synced',
      status: 'True',
      reason: 'ReconcileSuccess',
      message: '',
      lastTransitionTime: '2026-01-10T11:00:00Z',
    },
  ],
  observedGeneration: 1,
});

function stubAws(tags: 'answered' | 'refused'): void {
  elb.on(DescribeLoadBalancersCommand).resolves({
    LoadBalancers: [
      {
        LoadBalancerArn: arn.lb,
        LoadBalancerName: 'sky-g-shared',
        DNSName: 'sky-g-shared-1.us-east-1.elb.amazonaws.com',
        Scheme: 'internet-facing',
        State: { Code: 'active' },
      },
    ],
  });
  elb.on(DescribeListenersCommand).resolves({
    Listeners: [
      {
        ListenerArn: arn.listener,
        Port: 80,
        Protocol: 'HTTP',
        DefaultActions: [{ Type: 'fixed-response', FixedResponseConfig: { StatusCode: '404' } }],
      },
    ],
  });
  elb.on(DescribeRulesCommand).resolves({
    Rules: [
      {
        RuleArn: arn.shopRule,
        Priority: '1',
        Conditions: [{ Field: 'host-header', HostHeaderConfig: { Values: ['shop.example.com'] } }],
        Actions: [{ Type: 'forward', TargetGroupArn: arn.shopTg }],
      },
      {
        RuleArn: arn.oldRule,
        Priority: '2',
        Conditions: [{ Field: 'path-pattern', PathPatternConfig: { Values: ['/old/*'] } }],
        Actions: [{ Type: 'fixed-response', FixedResponseConfig: { StatusCode: '410' } }],
      },
      {
        RuleArn: arn.apiRule,
        Priority: '3',
        Conditions: [{ Field: 'host-header', HostHeaderConfig: { Values: ['api.example.com'] } }],
        Actions: [{ Type: 'forward', TargetGroupArn: arn.apiTg }],
      },
      { RuleArn: 'default', IsDefault: true, Priority: 'default', Actions: [] },
    ],
  });
  if (tags === 'answered')
    elb.on(DescribeTagsCommand).resolves({
      TagDescriptions: [
        { ResourceArn: arn.shopRule, Tags: [{ Key: 'skylift.dev/member', Value: 'u-shop' }] },
        { ResourceArn: arn.oldRule, Tags: [{ Key: 'skylift.dev/member', Value: 'u-shop' }] },
        // The api rule's tag is lost: its target group says whom it is for.
        { ResourceArn: arn.apiRule, Tags: [] },
      ],
    });
  else
    elb
      .on(DescribeTagsCommand)
      .rejects(Object.assign(new Error('not allowed'), { name: 'AccessDenied', $metadata: {} }));
  elb.on(DescribeTargetGroupsCommand, { TargetGroupArns: [arn.shopTg] }).resolves({
    TargetGroups: [
      { TargetGroupArn: arn.shopTg, TargetGroupName: 'sky-shop-web-80', Protocol: 'HTTP', Port: 80 },
    ],
  });
  elb.on(DescribeTargetGroupsCommand, { TargetGroupArns: [arn.apiTg] }).resolves({
    TargetGroups: [
      { TargetGroupArn: arn.apiTg, TargetGroupName: 'sky-api-api-80', Protocol: 'HTTP', Port: 80 },
    ],
  });
  elb.on(DescribeTargetHealthCommand, { TargetGroupArn: arn.shopTg }).resolves({
    TargetHealthDescriptions: [
      { Target: { Id: '10.0.0.5', Port: 8080 }, TargetHealth: { State: 'healthy' } },
    ],
  });
  elb
    .on(DescribeTargetHealthCommand, { TargetGroupArn: arn.apiTg })
    .resolves({ TargetHealthDescriptions: [] });
}

describe('MyIngressGroup trace', () => {
  it('shows the load balancer, listeners, rules with their members, target groups, targets and members', async () => {
    stubAws('answered');
    const out = renderTree(resourceNode('MyIngressGroup', live, now, await traceMyIngressGroup(live, ctx)));
    // Cluster-scoped: no namespace.
    expect(out).toMatch(/^MyIngressGroup\/shared +Ready +age=60m\n/m);
    expect(out).toMatch(
      /├─ LoadBalancer\/sky-g-shared +active +dns=sky-g-shared-1\.us-east-1\.elb\.amazonaws\.com/,
    );
    expect(out).toMatch(/│ +├─ Listener\/HTTP:80 +exists +default: fixed-response 404\n/);
    expect(out).toMatch(
      /Rule\/priority 1 +exists +host-header=shop\.example\.com {2}→ forward to sky-shop-web-80 {2}member=storefront\/shop\n/,
    );
    expect(out).toMatch(
      /Rule\/priority 2 +exists +path-pattern=\/old\/\* {2}→ fixed-response 410 {2}member=storefront\/shop\n/,
    );
    expect(out).toMatch(
      /Rule\/priority 3 +exists +host-header=api\.example\.com {2}→ forward to sky-api-api-80 {2}member=payments\/api\n/,
    );
    expect(out).toMatch(
      /TargetGroup\/sky-shop-web-80 +exists +HTTP:80 .*targets=1 {2}member=storefront\/shop\n/,
    );
    expect(out).toMatch(/Target\/10\.0\.0\.5:8080 +healthy/);
    expect(out).toMatch(/TargetGroup\/sky-api-api-80 +exists +HTTP:80 .*targets=0 {2}member=payments\/api\n/);
    expect(out).toMatch(/├─ Member\/payments\/api +Attached +rules=1 {2}generation=2\n/);
    expect(out).toMatch(/├─ Member\/sandbox\/toy +NotAdmitted +rules=0 {2}not admitted\n/);
    expect(out).toMatch(/└─ Member\/storefront\/shop +Attached +rules=2 {2}generation=5\n$/);
    // Only the rules' tags are read, in one call.
    expect(elb.commandCalls(DescribeTagsCommand)).toHaveLength(1);
    expect(elb.commandCalls(DescribeTagsCommand)[0]?.args[0].input.ResourceArns).toEqual([
      arn.shopRule,
      arn.oldRule,
      arn.apiRule,
    ]);
  });

  it('counts a refused member as informational: the group’s own trace stays ready', async () => {
    stubAws('answered');
    const tree = resourceNode('MyIngressGroup', live, now, await traceMyIngressGroup(live, ctx));
    const toy = tree.children.find((c) => c.kind === 'Member' && c.name === 'sandbox/toy');
    expect(toy?.ready).toBeUndefined();
    expect(allReady(tree)).toBe(true);
  });

  it('still names the forwarding rules’ members from their target groups when the tags cannot be read', async () => {
    stubAws('refused');
    const out = renderTree(resourceNode('MyIngressGroup', live, now, await traceMyIngressGroup(live, ctx)));
    expect(out).toMatch(/Rule\/priority 1 .*member=storefront\/shop\n/);
    expect(out).toMatch(/Rule\/priority 2 .*member=\? \(tags unreadable: AccessDenied\)\n/);
    expect(out).toMatch(/Rule\/priority 3 .*member=payments\/api\n/);
  });

  it('shows a group without a load balancer (no members) as NotCreated, calling no AWS', async () => {
    const empty = group({ members: [] });
    const nodes = await traceMyIngressGroup(empty, ctx);
    expect(nodes.map((n) => [n.kind, n.status])).toEqual([['LoadBalancer', 'NotCreated']]);
    expect(elb.calls()).toHaveLength(0);
  });

  it('is what the kind module’s trace runs', async () => {
    stubAws('answered');
    const nodes = await myIngressGroupKind.configure(new Map()).trace(live, ctx);
    expect(nodes.map((n) => `${n.kind}/${n.name}`)).toEqual([
      'LoadBalancer/sky-g-shared',
      'Member/payments/api',
      'Member/sandbox/toy',
      'Member/storefront/shop',
    ]);
  });
});
