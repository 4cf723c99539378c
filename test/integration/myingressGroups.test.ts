// MyIngressGroup on the real apiserver and moto (issue 30): MyIngresses of two namespaces share one
// load balancer; a conflicting host and path is refused and nothing of the holder's is touched; a
// namespace the group does not admit is refused, saying who can change that; moving members and
// deleting them leaves nothing behind, and the last member out deletes the load balancer.
import { DescribeSecurityGroupsCommand, EC2Client } from '@aws-sdk/client-ec2';
import {
  CreateTargetGroupCommand,
  DescribeListenersCommand,
  DescribeLoadBalancersCommand,
  DescribeRulesCommand,
  DescribeTagsCommand,
  DescribeTargetGroupsCommand,
  ElasticLoadBalancingV2Client,
  type Rule,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { myIngressType, type MyIngress, type MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import { myIngressController } from '../../src/kinds/myingress/controller.ts';
import {
  myIngressGroupType,
  type MyIngressGroup,
  type MyIngressGroupSpec,
} from '../../src/kinds/myingress/group/api.ts';
import { myIngressGroupController } from '../../src/kinds/myingress/group/controller.ts';
import { myIngressGroupKind } from '../../src/kinds/myingress/group/index.ts';
import { createAwsClients } from '../../src/providers/aws/clients.ts';
import { realClock } from '../../src/runtime/clock.ts';
import { Metrics } from '../../src/runtime/metrics.ts';
import { renderTree } from '../../src/trace/render.ts';
import { resourceNode } from '../../src/trace/resource.ts';
import type { MyIngressSettings } from '../../src/kinds/myingress/settings.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { startController, type RunningController } from '../support/controllers.ts';
import { kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { vpcWithTwoSubnets } from '../support/vpc.ts';
import {
  conditionOf,
  createMyIngressGroup,
  myIngressGone,
  myIngressWhere,
  readyAtGeneration,
} from '../support/myingressGroupObjects.ts';

let admin: KubeClient;
let proxy: AwsFaultProxy;
let ec2: EC2Client;
let elb: ElasticLoadBalancingV2Client;
let subnets: string[];
const running: RunningController[] = [];

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  proxy = await startFaultProxy();
  const direct = awsClientConfig(stackInfo().awsEndpoint);
  ec2 = new EC2Client(direct);
  elb = new ElasticLoadBalancingV2Client(direct);
  ({ subnets } = await vpcWithTwoSubnets(ec2, 31));
});
afterAll(async () => {
  await proxy.stop();
});
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

/**
 * Two namespaces (the second labelled `team=b`), served by a MyIngress and a MyIngressGroup
 * controller (the group's with `group` settings and `resyncPeriod` when given).
 */
async function serve(
  group: Partial<MyIngressSettings> = {},
  resyncPeriod?: string,
): Promise<{ a: string; b: string }> {
  const a = await newNamespace(admin, 'grp-a');
  const b = await newNamespace(admin, 'grp-b');
  await admin.patch(`/api/v1/namespaces/${b}`, { metadata: { labels: { team: 'b' } } }, 'merge');
  const opts = { namespace: `${a},${b}`, endpoint: proxy.endpoint };
  running.push(await startController((s) => myIngressController(s, { pollMs: 300 }), opts));
  running.push(
    await startController((s) => myIngressGroupController(s, { pollMs: 300, ...group }), {
      ...opts,
      ...(resyncPeriod !== undefined ? { resyncPeriod } : {}),
    }),
  );
  await admin.create(`/api/v1/namespaces/${a}/services`, {
    metadata: { name: 'web' },
    spec: { ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
  });
  return { a, b };
}

function groupSpec(extra: Partial<MyIngressGroupSpec> = {}): MyIngressGroupSpec {
  return {
    subnets,
    scheme: 'internal',
    listeners: [{ port: 80, protocol: 'HTTP' }],
    allowedNamespaces: { from: 'All' },
    ...extra,
  };
}

const createGroup = (spec: MyIngressGroupSpec): Promise<string> => createMyIngressGroup(admin, spec);

function member(group: string, host: string, extra: Partial<MyIngressSpec> = {}): MyIngressSpec {
  return {
    group: { name: group },
    rules: [{ priority: 1, hosts: [host], action: { fixedResponse: { statusCode: 200, body: host } } }],
    ...extra,
  };
}

async function createMember(ns: string, name: string, spec: MyIngressSpec): Promise<void> {
  await admin.create(resourcePath(myIngressType, { namespace: ns }), {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'MyIngress',
    metadata: { name },
    spec,
  });
}

const condition = conditionOf;
const memberWhere = (ns: string, name: string, ok: (m: MyIngress) => boolean, what: string) =>
  myIngressWhere(admin, ns, name, ok, what);
const ready = readyAtGeneration;

async function group(name: string): Promise<MyIngressGroup | undefined> {
  return readObject<MyIngressGroup>(admin, myIngressGroupType, '', name);
}

/** The load balancers in the emulator tagged as the group's (skylift.dev/group). */
async function groupLoadBalancers(name: string): Promise<string[]> {
  const all = (await elb.send(new DescribeLoadBalancersCommand({}))).LoadBalancers ?? [];
  const arns = all.flatMap((l) => (l.LoadBalancerArn !== undefined ? [l.LoadBalancerArn] : []));
  if (arns.length === 0) return [];
  const out: string[] = [];
  for (let i = 0; i < arns.length; i += 20) {
    const tags = await elb.send(new DescribeTagsCommand({ ResourceArns: arns.slice(i, i + 20) }));
    for (const d of tags.TagDescriptions ?? [])
      if (d.Tags?.some((t) => t.Key === 'skylift.dev/group' && t.Value === `MyIngressGroup/${name}`))
        out.push(d.ResourceArn ?? '');
  }
  return out;
}

/** The non-default rules of the load balancer's listener on port 80. */
async function rulesOf(lbArn: string): Promise<Rule[]> {
  const listeners =
    (await elb.send(new DescribeListenersCommand({ LoadBalancerArn: lbArn }))).Listeners ?? [];
  const l = listeners.find((x) => x.Port === 80);
  const rules = (await elb.send(new DescribeRulesCommand({ ListenerArn: l?.ListenerArn ?? '' }))).Rules ?? [];
  return rules.filter((r) => r.IsDefault !== true);
}

/** The `skylift.dev/member` tag of each rule, by rule ARN. */
async function ruleMembers(rules: readonly Rule[]): Promise<Map<string, string | undefined>> {
  const arns = rules.flatMap((r) => (r.RuleArn !== undefined ? [r.RuleArn] : []));
  const out = new Map<string, string | undefined>();
  if (arns.length === 0) return out;
  const tags = await elb.send(new DescribeTagsCommand({ ResourceArns: arns }));
  for (const d of tags.TagDescriptions ?? [])
    out.set(d.ResourceArn ?? '', d.Tags?.find((t) => t.Key === 'skylift.dev/member')?.Value);
  return out;
}

const hostsOf = (r: Rule): string[] =>
  (r.Conditions ?? []).flatMap((c) => c.HostHeaderConfig?.Values ?? c.Values ?? []);

/** Target groups in the emulator tagged as the group's. */
async function groupTargetGroups(name: string): Promise<Map<string, Record<string, string>>> {
  const tgs = (await elb.send(new DescribeTargetGroupsCommand({}))).TargetGroups ?? [];
  const out = new Map<string, Record<string, string>>();
  const arns = tgs.flatMap((t) => (t.TargetGroupArn !== undefined ? [t.TargetGroupArn] : []));
  for (let i = 0; i < arns.length; i += 20) {
    const tags = await elb.send(new DescribeTagsCommand({ ResourceArns: arns.slice(i, i + 20) }));
    for (const d of tags.TagDescriptions ?? []) {
      const map = Object.fromEntries((d.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));
      if (map['skylift.dev/group'] === `MyIngressGroup/${name}`) out.set(d.ResourceArn ?? '', map);
    }
  }
  return out;
}

const gone = (ns: string, name: string): Promise<void> => myIngressGone(admin, ns, name);

/** `skylift trace myingressgroup/<name>` as it renders, against the emulator. */
async function traceGroup(name: string): Promise<string> {
  const g = await group(name);
  if (g === undefined) throw new Error(`no MyIngressGroup ${name}`);
  const aws = createAwsClients({
    region: 'us-east-1',
    clock: realClock,
    metrics: new Metrics(),
    endpoint: stackInfo().awsEndpoint,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
  try {
    const now = Date.now();
    const nodes = await myIngressGroupKind.configure(new Map()).trace(g, { kube: admin, aws, now });
    return renderTree(resourceNode('MyIngressGroup', g, now, nodes));
  } finally {
    aws.destroy();
  }
}

describe('MyIngressGroup', () => {
  it('serves three MyIngresses of two namespaces from one load balancer, refuses a conflicting claim, and the last member out deletes it', async () => {
    const { a, b } = await serve();
    const g = await createGroup(groupSpec());
    await createMember(a, 'one', member(g, 'one.example.com'));
    await createMember(
      a,
      'two',
      member(g, 'two.example.com', {
        rules: [
          {
            priority: 5,
            hosts: ['two.example.com'],
            paths: ['/api/*'],
            action: { forward: { service: { name: 'web', port: 80 } } },
          },
        ],
      }),
    );
    await createMember(b, 'three', member(g, 'three.example.com', { group: { name: g, order: -1 } }));
    const [one, two, three] = await Promise.all([
      memberWhere(a, 'one', ready, 'Ready'),
      memberWhere(a, 'two', ready, 'Ready'),
      memberWhere(b, 'three', ready, 'Ready'),
    ]);
    const lbs = await groupLoadBalancers(g);
    expect(lbs).toHaveLength(1);
    const lb = lbs[0] ?? '';
    expect(one.status?.arn).toBe(lb);
    // Every member reports the shared load balancer (a DNSRecord may alias any of them).
    expect(three.status?.dnsName).toBe(one.status?.dnsName);
    expect(three.status?.dnsName).toMatch(/elb\.amazonaws\.com$/);
    const grp = await group(g);
    expect(grp?.status?.members?.map((m) => [m.namespace, m.name, m.state, m.rules])).toEqual(
      [
        [a, 'one', 'Attached', 1],
        [a, 'two', 'Attached', 1],
        [b, 'three', 'Attached', 1],
      ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
    // Order -1 first, then namespace/name.
    const rules = await rulesOf(lb);
    expect(rules.sort((x, y) => Number(x.Priority) - Number(y.Priority)).map(hostsOf)).toEqual([
      ['three.example.com'],
      ['one.example.com'],
      ['two.example.com'],
    ]);
    // One member's rule changed: the group looks and modifies that rule only.
    proxy.resetCalls();
    await admin.patch(
      resourcePath(myIngressType, { namespace: a, name: 'one' }),
      {
        spec: {
          rules: [
            {
              priority: 1,
              hosts: ['one.example.com'],
              paths: ['/v2/*'],
              action: { fixedResponse: { statusCode: 200 } },
            },
          ],
        },
      },
      'merge',
    );
    await memberWhere(a, 'one', (m) => m.metadata.generation === 2 && ready(m), 'Ready at generation 2');
    const writes = proxy
      .calls()
      .filter((c) => c.service === 'elasticloadbalancing' && !/^Describe/.test(c.operation))
      .map((c) => c.operation);
    expect(writes).toEqual(['ModifyRule']);
    // The full look the merged spec's change causes looks for target groups by tag once, no more.
    expect(proxy.count({ service: 'tagging', operation: 'GetResources' })).toBeLessThanOrEqual(1);
    console.info(
      `AWS calls for one member's rule change: ${JSON.stringify(
        proxy
          .calls()
          .reduce<Record<string, number>>(
            (acc, c) => ({ ...acc, [c.operation]: (acc[c.operation] ?? 0) + 1 }),
            {},
          ),
      )}`,
    );
    // The target group made for two is attributed to it.
    const tgs = await groupTargetGroups(g);
    expect([...tgs.values()].map((t) => t['skylift.dev/member'])).toEqual([two.metadata.uid]);

    // A later member claiming one's host: Conflict, naming the claim and "another member" only.
    await createMember(
      b,
      'four',
      member(g, 'ONE.example.com', {
        rules: [
          {
            priority: 1,
            hosts: ['ONE.example.com'],
            paths: ['/v2/*'],
            action: { fixedResponse: { statusCode: 418 } },
          },
        ],
      }),
    );
    const four = await memberWhere(
      b,
      'four',
      (m) => condition(m, 'Synced')?.reason === 'Conflict',
      'Conflict',
    );
    expect(condition(four, 'Synced')?.message).toMatch(
      /host one\.example\.com, path \/v2\/\* is claimed by another member/,
    );
    expect(condition(four, 'Synced')?.message).not.toContain(a);
    expect((await rulesOf(lb)).map(hostsOf).sort()).toEqual([
      ['one.example.com'],
      ['three.example.com'],
      ['two.example.com'],
    ]);

    // `skylift trace`: each rule and target group names its member, and the members their states.
    await waitFor(
      async () => (await group(g))?.status?.members?.some((m) => m.name === 'four' && m.state === 'Conflict'),
      { timeoutMs: 30_000, description: 'four listed Conflict' },
    );
    const traced = await traceGroup(g);
    const esc = (x: string): string => x.replace(/[.*/]/g, '\\$&');
    for (const [priority, host, ns, name] of [
      [1, 'three.example.com', b, 'three'],
      [2, 'one.example.com', a, 'one'],
      [3, 'two.example.com', a, 'two'],
    ] as const)
      expect(traced).toMatch(
        new RegExp(
          `Rule/priority ${priority} +exists +host-header=${esc(host)}.*member=${esc(`${ns}/${name}`)}\n`,
        ),
      );
    expect(traced).toMatch(new RegExp(`TargetGroup/\\S+ +exists .*member=${esc(`${a}/two`)}\n`));
    expect(traced).toMatch(new RegExp(`Member/${esc(`${b}/four`)} +Conflict +rules=0`));
    expect(traced).toMatch(new RegExp(`Member/${esc(`${a}/one`)} +Attached +rules=1`));

    // Every member out, in turn: the last one deletes the load balancer; nothing is left.
    for (const [ns, name] of [
      [b, 'four'],
      [a, 'two'],
      [b, 'three'],
      [a, 'one'],
    ] as const) {
      await admin.delete(resourcePath(myIngressType, { namespace: ns, name }));
      await gone(ns, name);
    }
    await waitFor(async () => ((await groupLoadBalancers(g)).length === 0 ? true : undefined), {
      timeoutMs: 30_000,
      description: 'load balancer deleted',
    });
    expect(await groupTargetGroups(g)).toEqual(new Map());
    const empty = await waitFor(
      async () => {
        const x = await group(g);
        return condition(x, 'Ready')?.reason === 'NoMembers' ? x : undefined;
      },
      { timeoutMs: 30_000, description: 'group NoMembers' },
    );
    expect(condition(empty, 'Ready')?.status).toBe('False');
    const sgs = await ec2.send(
      new DescribeSecurityGroupsCommand({
        Filters: [{ Name: 'tag:skylift.dev/uid', Values: [empty.metadata.uid ?? ''] }],
      }),
    );
    expect(sgs.SecurityGroups ?? []).toEqual([]);
  });

  it('refuses a namespace the group does not admit, saying who can change that', async () => {
    const { a, b } = await serve();
    const g = await createGroup(
      groupSpec({ allowedNamespaces: { from: 'Selector', selector: { matchLabels: { team: 'b' } } } }),
    );
    await createMember(b, 'in', member(g, 'in.example.com'));
    await createMember(a, 'out', member(g, 'out.example.com'));
    await memberWhere(b, 'in', ready, 'Ready');
    const out = await memberWhere(
      a,
      'out',
      (m) => condition(m, 'Synced')?.reason === 'Forbidden',
      'Forbidden',
    );
    expect(condition(out, 'Synced')?.message).toMatch(
      new RegExp(
        `MyIngressGroup ${g} admits .* not namespace ${a}; a cluster administrator \\(whoever may edit MyIngressGroup objects\\) can change its spec.allowedNamespaces`,
      ),
    );
    const lb = (await groupLoadBalancers(g))[0] ?? '';
    expect((await rulesOf(lb)).map(hostsOf)).toEqual([['in.example.com']]);
  });

  it('moves a member to another group, leaving nothing of it on the first', async () => {
    const { a } = await serve();
    const g1 = await createGroup(groupSpec());
    const g2 = await createGroup(groupSpec());
    await createMember(a, 'stay', member(g1, 'stay.example.com'));
    await createMember(
      a,
      'mover',
      member(g1, 'mover.example.com', {
        rules: [
          {
            priority: 1,
            hosts: ['mover.example.com'],
            action: { forward: { service: { name: 'web', port: 80 } } },
          },
        ],
      }),
    );
    await memberWhere(a, 'mover', ready, 'Ready');
    await memberWhere(a, 'stay', ready, 'Ready');
    const lb1 = (await groupLoadBalancers(g1))[0] ?? '';
    expect((await rulesOf(lb1)).map(hostsOf).sort()).toEqual([['mover.example.com'], ['stay.example.com']]);
    await admin.patch(
      resourcePath(myIngressType, { namespace: a, name: 'mover' }),
      { spec: { group: { name: g2 } } },
      'merge',
    );
    await memberWhere(a, 'mover', ready, 'Ready in the second group');
    const lb2 = (await groupLoadBalancers(g2))[0] ?? '';
    expect(lb2).not.toBe(lb1);
    // The member that stays keeps its route while the mover's goes (its priority shifts: the new
    // one is written before the old one goes), at every look the test takes.
    const stayMissing: string[][][] = [];
    await waitFor(
      async () => {
        const hosts = (await rulesOf(lb1)).map(hostsOf);
        if (!hosts.some((h) => h.includes('stay.example.com'))) stayMissing.push(hosts);
        return hosts.length === 1 ? true : undefined;
      },
      { timeoutMs: 30_000, description: 'the mover’s rule gone from the first group' },
    );
    expect(stayMissing).toEqual([]);
    const left = await rulesOf(lb1);
    expect(left.map(hostsOf)).toEqual([['stay.example.com']]);
    // The rule that now routes the member that stayed is attributed to it, not to the mover whose
    // priority it took (the lifecycle model found rules keeping their first member's tag, seed 4).
    const stay = await memberWhere(a, 'stay', ready, 'Ready');
    expect([...(await ruleMembers(left)).values()]).toEqual([stay.metadata.uid]);
    expect((await rulesOf(lb2)).map(hostsOf)).toEqual([['mover.example.com']]);
    await waitFor(async () => ((await groupTargetGroups(g1)).size === 0 ? true : undefined), {
      timeoutMs: 30_000,
      description: 'the mover’s target group gone from the first group',
    });
    expect((await groupTargetGroups(g2)).size).toBe(1);
    // The first group lists the mover (Leaving) until a look finds nothing of it left, then drops it.
    const first = await waitFor(
      async () => {
        const x = await group(g1);
        return x?.status?.members?.length === 1 ? x : undefined;
      },
      { timeoutMs: 30_000, description: 'the first group no longer lists the mover' },
    );
    expect(first.status?.members?.map((m) => [m.name, m.state])).toEqual([['stay', 'Attached']]);
  });

  it('removes a target group a crash left unrecorded for a member that has left, at its next full look', async () => {
    // The crash window, for a group: CreateTargetGroup for a member succeeded, the operator was
    // killed before the group's status recorded it, and the member left before the next reconcile
    // (the merged spec no longer names its backend). Only the tags name it: the group's ownership,
    // skylift.dev/group and the member's uid.
    const { a } = await serve({ fullCheckMs: 2000 }, '1s');
    const g = await createGroup(groupSpec());
    await createMember(
      a,
      'stay',
      member(g, 'stay.example.com', {
        rules: [
          {
            priority: 1,
            hosts: ['stay.example.com'],
            action: { forward: { service: { name: 'web', port: 80 } } },
          },
        ],
      }),
    );
    await memberWhere(a, 'stay', ready, 'Ready');
    const [[own, tags] = ['', {}]] = [...(await groupTargetGroups(g)).entries()];
    const vpcId =
      (await elb.send(new DescribeTargetGroupsCommand({ TargetGroupArns: [own] }))).TargetGroups?.[0]
        ?.VpcId ?? '';
    const made = async (name: string, t: Record<string, string>): Promise<string> =>
      (
        await elb.send(
          new CreateTargetGroupCommand({
            Name: name,
            Protocol: 'HTTP',
            Port: 8080,
            VpcId: vpcId,
            TargetType: 'ip',
            Tags: Object.entries(t).map(([Key, Value]) => ({ Key, Value })),
          }),
        )
      ).TargetGroups?.[0]?.TargetGroupArn ?? '';
    const suffix = randomBytes(3).toString('hex');
    const left = await made(`sky-left-${suffix}`, { ...tags, 'skylift.dev/member': 'a-member-that-left' });
    // Another group's (another object's uid), tagged with this group's name all the same: not ours.
    const foreign = await made(`sky-foreign-${suffix}`, {
      ...tags,
      'skylift.dev/uid': 'another-group-uid',
      'skylift.dev/member': 'a-member-that-left',
    });
    const exists = async (arn: string): Promise<boolean> =>
      elb.send(new DescribeTargetGroupsCommand({ TargetGroupArns: [arn] })).then(
        (o) => (o.TargetGroups ?? []).length > 0,
        () => false,
      );
    await waitFor(async () => ((await exists(left)) ? undefined : true), {
      timeoutMs: 30_000,
      description: 'the left member’s unrecorded target group removed at a full look',
    });
    expect(await exists(own)).toBe(true);
    expect(await exists(foreign)).toBe(true);
    await memberWhere(a, 'stay', ready, 'still Ready');
  });

  it.each<{ reason: string; path: () => string; body: () => object; message: RegExp }>([
    {
      reason: 'a member setting a load balancer field',
      path: () => resourcePath(myIngressType, { namespace: 'default' }),
      body: () => ({
        apiVersion: 'aws.skylift.dev/v1alpha1',
        kind: 'MyIngress',
        metadata: { name: `m-${randomBytes(3).toString('hex')}` },
        spec: { group: { name: 'g' }, subnets, rules: [] },
      }),
      message: /a member of a MyIngressGroup \(spec.group\) brings rules only/,
    },
    {
      reason: 'a member left behind on deletion',
      path: () => resourcePath(myIngressType, { namespace: 'default' }),
      body: () => ({
        apiVersion: 'aws.skylift.dev/v1alpha1',
        kind: 'MyIngress',
        metadata: { name: `m-${randomBytes(3).toString('hex')}` },
        spec: { group: { name: 'g' }, deletionPolicy: 'Orphan' },
      }),
      message: /its rules live on a load balancer others share/,
    },
    {
      reason: 'a group listener forwarding to a Service',
      path: () => resourcePath(myIngressGroupType, {}),
      body: () => ({
        apiVersion: 'aws.skylift.dev/v1alpha1',
        kind: 'MyIngressGroup',
        metadata: { name: `g-${randomBytes(3).toString('hex')}` },
        spec: {
          ...groupSpec(),
          listeners: [
            {
              port: 80,
              protocol: 'HTTP',
              defaultAction: { forward: { service: { name: 'web', port: 80 } } },
            },
          ],
        },
      }),
      message: /a MyIngressGroup’s default action answers/,
    },
    {
      reason: 'a group selecting namespaces without a selector',
      path: () => resourcePath(myIngressGroupType, {}),
      body: () => ({
        apiVersion: 'aws.skylift.dev/v1alpha1',
        kind: 'MyIngressGroup',
        metadata: { name: `g-${randomBytes(3).toString('hex')}` },
        spec: groupSpec({ allowedNamespaces: { from: 'Selector' } }),
      }),
      message: /allowedNamespaces.selector is set with from: Selector, and only then/,
    },
  ])('refuses at admission: $reason', async ({ path, body, message }) => {
    await expect(admin.create(path(), body())).rejects.toThrow(message);
  });

  it('refuses a standalone MyIngress joining a group (its own load balancer would be left behind), and lets a member change groups', async () => {
    const ns = await newNamespace(admin, 'grp-api');
    await createMember(ns, 'member', member('g1', 'x.example.com'));
    await admin.patch(
      resourcePath(myIngressType, { namespace: ns, name: 'member' }),
      { spec: { group: { name: 'g2', order: 3 } } },
      'merge',
    );
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'own' },
      spec: {
        subnets,
        listeners: [{ port: 80, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 404 } } }],
      },
    });
    await expect(
      admin.patch(
        resourcePath(myIngressType, { namespace: ns, name: 'own' }),
        { spec: { group: { name: 'g1' } } },
        'merge',
      ),
    ).rejects.toThrow(/whether spec.group is set is immutable/);
  });
});
