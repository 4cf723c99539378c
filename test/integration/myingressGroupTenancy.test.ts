// TeamPolicies and MyIngressGroup members, on the real apiserver and moto: the group is reconciled
// with the operator's own identity, so a member is served only when its namespace's tenancy allows
// that. A member of a namespace whose policy serves it as another role, or that no policy selects,
// is listed Forbidden with the tenancy's message, and one whose policy allows only internet-facing
// load balancers, on an internal group, is refused in the policy's words; none of them has a rule
// or target group on the shared load balancer, while a member of a namespace served with the
// operator's identity is served; a policy changed after a member attached (to another region) takes
// its rules and target groups off, and changed back puts them on again. The controllers are served
// through a TenantDirectory of this test's policies (dev/teamPolicies.ts).
import {
  DescribeListenersCommand,
  DescribeLoadBalancersCommand,
  DescribeRulesCommand,
  DescribeTagsCommand,
  DescribeTargetGroupsCommand,
  ElasticLoadBalancingV2Client,
  type Rule,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { EC2Client } from '@aws-sdk/client-ec2';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import { applyTeamPolicy, deleteTeamPolicies, startTenants } from '../../dev/teamPolicies.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { myIngressType, type MyIngress, type MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import { myIngressController } from '../../src/kinds/myingress/controller.ts';
import { myIngressGroupType, type MyIngressGroup } from '../../src/kinds/myingress/group/api.ts';
import { myIngressGroupController } from '../../src/kinds/myingress/group/controller.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import type { TenantDirectory } from '../../src/tenancy/directory.ts';
import { startController, type RunningController } from '../support/controllers.ts';
import { kubeClient, newNamespace, readObject } from '../support/kube.ts';
import {
  conditionOf,
  createMyIngressGroup,
  myIngressGone,
  myIngressWhere,
  readyAtGeneration,
} from '../support/myingressGroupObjects.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { vpcWithTwoSubnets } from '../support/vpc.ts';

const policies = 'integration-group-tenancy';
const suffix = randomBytes(3).toString('hex');
let admin: KubeClient;
let proxy: AwsFaultProxy;
let elb: ElasticLoadBalancingV2Client;
let ec2: EC2Client;
let subnets: string[];
let tenants: TenantDirectory;
const running: RunningController[] = [];

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  proxy = await startFaultProxy();
  const direct = awsClientConfig(stackInfo().awsEndpoint);
  ec2 = new EC2Client(direct);
  elb = new ElasticLoadBalancingV2Client(direct);
  ({ subnets } = await vpcWithTwoSubnets(ec2, 36));
  tenants = await startTenants(admin, policies);
});
afterAll(async () => {
  await deleteTeamPolicies(admin, policies);
  await tenants.stop();
  await proxy.stop();
  elb.destroy();
  ec2.destroy();
});
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

async function createMember(ns: string, name: string, spec: MyIngressSpec): Promise<void> {
  await admin.create(resourcePath(myIngressType, { namespace: ns }), {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'MyIngress',
    metadata: { name },
    spec,
  });
}

/** A member forwarding `host` to Service web:80 of its namespace. */
const member = (group: string, host: string): MyIngressSpec => ({
  group: { name: group },
  rules: [{ priority: 1, hosts: [host], action: { forward: { service: { name: 'web', port: 80 } } } }],
});

const synced = (m: MyIngress) => conditionOf(m, 'Synced');
const forbidden = (m: MyIngress): boolean =>
  synced(m)?.status === 'False' &&
  synced(m)?.reason === 'Forbidden' &&
  synced(m)?.observedGeneration === m.metadata.generation;

/** The load balancer tagged as group `name`'s. */
async function groupLoadBalancer(name: string): Promise<string | undefined> {
  const g = await readObject<MyIngressGroup>(admin, myIngressGroupType, '', name);
  const arn = g?.status?.arn;
  if (arn === undefined) return undefined;
  const lbs = (await elb.send(new DescribeLoadBalancersCommand({ LoadBalancerArns: [arn] }))).LoadBalancers;
  return lbs?.[0]?.LoadBalancerArn;
}

/** The hosts of the non-default rules of the load balancer's listener on port 80, sorted. */
async function ruleHosts(lbArn: string): Promise<string[]> {
  const listeners =
    (await elb.send(new DescribeListenersCommand({ LoadBalancerArn: lbArn }))).Listeners ?? [];
  const l = listeners.find((x) => x.Port === 80);
  const rules = (await elb.send(new DescribeRulesCommand({ ListenerArn: l?.ListenerArn ?? '' }))).Rules ?? [];
  return rules
    .filter((r: Rule) => r.IsDefault !== true)
    .flatMap((r) => (r.Conditions ?? []).flatMap((c) => c.HostHeaderConfig?.Values ?? c.Values ?? []))
    .sort();
}

/** The `skylift.dev/member` tags (member uids) of the target groups tagged as group `name`'s. */
async function targetGroupMembers(name: string): Promise<string[]> {
  const tgs = (await elb.send(new DescribeTargetGroupsCommand({}))).TargetGroups ?? [];
  const arns = tgs.flatMap((t) => (t.TargetGroupArn !== undefined ? [t.TargetGroupArn] : []));
  const out: string[] = [];
  for (let i = 0; i < arns.length; i += 20) {
    const tags = await elb.send(new DescribeTagsCommand({ ResourceArns: arns.slice(i, i + 20) }));
    for (const d of tags.TagDescriptions ?? []) {
      const map = Object.fromEntries((d.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));
      if (map['skylift.dev/group'] === `MyIngressGroup/${name}`) out.push(map['skylift.dev/member'] ?? '');
    }
  }
  return out.sort();
}

describe('MyIngressGroup members under TeamPolicies', () => {
  it('serves a member of a namespace served with the operator’s identity, refuses one its policy maps to another role, one no policy selects and one whose guardrails the group does not meet, and takes a member off when its policy changes after it attached', async () => {
    const a = await newNamespace(admin, 'gten-a');
    const b = await newNamespace(admin, 'gten-b');
    const c = await newNamespace(admin, 'gten-c');
    const d = await newNamespace(admin, 'gten-d');
    const policyA = `gten-a-${suffix}`;
    const policyB = `gten-b-${suffix}`;
    const role = 'arn:aws:iam::222233334444:role/skylift-team-b';
    await applyTeamPolicy(admin, policies, policyA, { namespaces: { names: [a] } });
    await applyTeamPolicy(admin, policies, policyB, { namespaces: { names: [b] }, aws: { roleArn: role } });
    // Namespace d may only have internet-facing load balancers; the group's is internal.
    const policyD = `gten-d-${suffix}`;
    await applyTeamPolicy(admin, policies, policyD, {
      namespaces: { names: [d] },
      guardrails: { loadBalancers: { schemes: ['internet-facing'] } },
    });
    const opts = { namespace: `${a},${b},${c},${d}`, endpoint: proxy.endpoint, tenants };
    running.push(await startController((s) => myIngressController(s, { pollMs: 300 }), opts));
    running.push(await startController((s) => myIngressGroupController(s, { pollMs: 300 }), opts));
    for (const ns of [a, b, c, d])
      await admin.create(`/api/v1/namespaces/${ns}/services`, {
        metadata: { name: 'web' },
        spec: { ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
      });
    const g = await createMyIngressGroup(admin, {
      subnets,
      scheme: 'internal',
      listeners: [{ port: 80, protocol: 'HTTP' }],
      allowedNamespaces: { from: 'All' },
    });
    const hostA = `a-${suffix}.example.com`;
    await createMember(a, 'one', member(g, hostA));
    await createMember(b, 'two', member(g, `b-${suffix}.example.com`));
    await createMember(c, 'three', member(g, `c-${suffix}.example.com`));
    await createMember(d, 'four', member(g, `d-${suffix}.example.com`));

    const one = await myIngressWhere(admin, a, 'one', readyAtGeneration, 'Ready');
    const two = await myIngressWhere(admin, b, 'two', forbidden, 'Forbidden');
    expect(synced(two)?.message).toMatch(
      new RegExp(
        `^TeamPolicy ${policyB} serves namespace ${b} as role ${role}, but MyIngressGroup ${g}'s load balancer is the operator's own.*the platform team serves namespace ${b} with the operator's identity.*or the team uses a load balancer in its own account`,
      ),
    );
    // (A namespace the directory has not listed yet is refused as not known; then as not selected.)
    const three = await myIngressWhere(
      admin,
      c,
      'three',
      (m) => forbidden(m) && synced(m)?.message.includes('is not selected by any TeamPolicy') === true,
      'Forbidden, not selected',
    );
    expect(synced(three)?.message).toContain(`namespace ${c} is not selected by any TeamPolicy`);

    const four = await myIngressWhere(admin, d, 'four', forbidden, 'Forbidden');
    expect(synced(four)?.message).toMatch(
      new RegExp(
        `^MyIngressGroup ${g}'s load balancer does not meet namespace ${d}'s TeamPolicy ${policyD} .*TeamPolicy ${policyD} forbids spec.scheme: internal load balancers are not allowed`,
      ),
    );

    const grp = await readObject<MyIngressGroup>(admin, myIngressGroupType, '', g);
    expect(grp?.status?.members?.map((m) => [m.namespace, m.name, m.state, m.rules])).toEqual([
      [a, 'one', 'Attached', 1],
      [b, 'two', 'Forbidden', 0],
      [c, 'three', 'Forbidden', 0],
      [d, 'four', 'Forbidden', 0],
    ]);
    const lb = await groupLoadBalancer(g);
    expect(lb).toBeDefined();
    // Only the served member's rule and target group are on the shared load balancer.
    expect(await ruleHosts(lb ?? '')).toEqual([hostA]);
    expect(await targetGroupMembers(g)).toEqual([one.metadata.uid]);

    // After create: namespace a's policy now serves it in another region. Its member is refused and
    // its rule and target group come off; the others are untouched.
    await applyTeamPolicy(admin, policies, policyA, {
      namespaces: { names: [a] },
      aws: { region: 'eu-west-1' },
    });
    const moved = await myIngressWhere(admin, a, 'one', forbidden, 'Forbidden');
    expect(synced(moved)?.message).toMatch(
      new RegExp(`^TeamPolicy ${policyA} serves namespace ${a} as region eu-west-1,`),
    );
    await waitFor(async () => ((await ruleHosts(lb ?? '')).length === 0 ? true : undefined), {
      timeoutMs: 30_000,
      description: `member ${a}/one's rule removed`,
    });
    await waitFor(async () => ((await targetGroupMembers(g)).length === 0 ? true : undefined), {
      timeoutMs: 30_000,
      description: `member ${a}/one's target group removed`,
    });
    // The load balancer stays: refused members still name the group.
    expect(await groupLoadBalancer(g)).toBe(lb);

    // Back to the operator's identity: the member is served again.
    await applyTeamPolicy(admin, policies, policyA, { namespaces: { names: [a] } });
    await myIngressWhere(admin, a, 'one', readyAtGeneration, 'Ready again');
    await waitFor(async () => ((await ruleHosts(lb ?? '')).length === 1 ? true : undefined), {
      timeoutMs: 30_000,
      description: `member ${a}/one's rule back`,
    });
    expect(await ruleHosts(lb ?? '')).toEqual([hostA]);

    // Cleanup: the members go (refused ones included), then the group and its load balancer.
    for (const [ns, name] of [
      [a, 'one'],
      [b, 'two'],
      [c, 'three'],
      [d, 'four'],
    ] as const) {
      await admin.delete(resourcePath(myIngressType, { namespace: ns, name }));
      await myIngressGone(admin, ns, name);
    }
    await admin.delete(resourcePath(myIngressGroupType, { name: g }));
    await waitFor(
      async () => ((await readObject(admin, myIngressGroupType, '', g)) === undefined ? true : undefined),
      { timeoutMs: 60_000, description: `MyIngressGroup ${g} gone` },
    );
  });
});
