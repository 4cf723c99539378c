// The security group Skylift manages for a MyIngress's load balancer (no spec.securityGroups), on
// the real apiserver and moto through the fault proxy: created tagged and attached, its rules kept
// to the listeners and inboundCIDRs by difference, replaced by groups the spec names, deleted with
// the object (also while AWS answers DependencyViolation a few times), a group left by an
// interrupted create adopted and another owner's never touched; the data plane refuses a client
// outside inboundCIDRs. Admission refusals are at the end.
import {
  CreateSecurityGroupCommand,
  DescribeSecurityGroupsCommand,
  EC2Client,
  type SecurityGroup,
} from '@aws-sdk/client-ec2';
import {
  DescribeLoadBalancersCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AlbDataPlane } from '../../dev/albDataPlane/dataPlane.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { applyTeamPolicy, deleteTeamPolicies, startTenants } from '../../dev/teamPolicies.ts';
import type { TenantDirectory } from '../../src/tenancy/directory.ts';
import { waitFor } from '../../dev/wait.ts';
import { ownershipTagKeys, type Condition } from '../../src/apis/managed.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { myIngressType, type MyIngress, type MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import { myIngressController } from '../../src/kinds/myingress/controller.ts';
import { securityGroupName } from '../../src/kinds/myingress/names.ts';
import { KubeApiError, type KubeClient } from '../../src/runtime/kube/client.ts';
import { startAlbDataPlane } from '../support/albDataPlane.ts';
import { startController, type RunningController } from '../support/controllers.ts';
import { kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { vpcWithTwoSubnets } from '../support/vpc.ts';
import { createMyIngress, patchMyIngressSpec, serveMyIngressNamespace } from '../support/myingressObjects.ts';

const vpcCidr = '10.83.0.0/16';
let admin: KubeClient;
let proxy: AwsFaultProxy;
let elb: ElasticLoadBalancingV2Client;
let ec2: EC2Client;
let vpcId: string;
let subnets: string[];
/** A group the tests name in spec.securityGroups (not Skylift's). */
let explicit: string;
const running: RunningController[] = [];
const teamGroup = 'integration-myingress-sg';
let tenants: TenantDirectory;

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  proxy = await startFaultProxy();
  tenants = await startTenants(admin, teamGroup);
  const direct = awsClientConfig(stackInfo().awsEndpoint);
  elb = new ElasticLoadBalancingV2Client(direct);
  ec2 = new EC2Client(direct);
  ({ vpcId, subnets } = await vpcWithTwoSubnets(ec2, 83));
  explicit =
    (
      await ec2.send(
        new CreateSecurityGroupCommand({
          GroupName: 'team-owned',
          Description: 'the team’s own',
          VpcId: vpcId,
        }),
      )
    ).GroupId ?? '';
});
afterAll(async () => {
  await deleteTeamPolicies(admin, teamGroup);
  await tenants.stop();
  await proxy.stop();
});
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
  proxy.clearFaults();
});

async function setup(prefix: string, teams = false): Promise<string> {
  const { ns, controller } = await serveMyIngressNamespace(admin, prefix, {
    endpoint: proxy.endpoint,
    ...(teams ? { tenants } : {}),
  });
  running.push(controller);
  // A backend whose Pods listen on 8080: the managed group's outbound rule leads there.
  await admin.create(`/api/v1/namespaces/${ns}/services`, {
    metadata: { name: 'web' },
    spec: { ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
  });
  return ns;
}

const spec = (extra: Partial<MyIngressSpec> = {}): MyIngressSpec => ({
  subnets,
  scheme: 'internet-facing',
  listeners: [
    { port: 80, protocol: 'HTTP', defaultAction: { forward: { service: { name: 'web', port: 80 } } } },
  ],
  ...extra,
});

const create = (ns: string, name: string, s: MyIngressSpec): Promise<MyIngress> =>
  createMyIngress(admin, ns, name, s);

const patchSpec = (ns: string, name: string, patch: Record<string, unknown>): Promise<MyIngress> =>
  patchMyIngressSpec(admin, ns, name, patch);

async function groupsOf(lbArn: string): Promise<string[]> {
  const out = await elb.send(new DescribeLoadBalancersCommand({ LoadBalancerArns: [lbArn] }));
  return [...(out.LoadBalancers?.[0]?.SecurityGroups ?? [])].sort();
}

async function group(id: string): Promise<SecurityGroup | undefined> {
  const out = await ec2.send(
    new DescribeSecurityGroupsCommand({ Filters: [{ Name: 'group-id', Values: [id] }] }),
  );
  return out.SecurityGroups?.[0];
}

async function groupsNamed(name: string): Promise<SecurityGroup[]> {
  const out = await ec2.send(
    new DescribeSecurityGroupsCommand({ Filters: [{ Name: 'group-name', Values: [name] }] }),
  );
  return out.SecurityGroups ?? [];
}

/** A group's rules as `port from CIDR` (inbound) or `port to CIDR` (outbound), sorted. */
function rules(g: SecurityGroup | undefined, way: 'in' | 'out'): string[] {
  const perms = way === 'in' ? g?.IpPermissions : g?.IpPermissionsEgress;
  return (perms ?? [])
    .flatMap((p) => {
      const port =
        p.IpProtocol === '-1'
          ? 'all'
          : `${p.FromPort ?? ''}${p.ToPort !== p.FromPort ? `-${p.ToPort ?? ''}` : ''}`;
      return [
        ...(p.IpRanges ?? []).map((r) => r.CidrIp ?? ''),
        ...(p.Ipv6Ranges ?? []).map((r) => r.CidrIpv6 ?? ''),
      ].map((c) => `${port} ${way === 'in' ? 'from' : 'to'} ${c}`);
    })
    .sort();
}

/** The EC2 security group calls the controller made since the proxy's counts were reset. */
function sgCalls(): Record<string, number> {
  return Object.fromEntries(
    Object.entries(proxy.countsByOperation()).filter(([op]) => /^ec2:.*SecurityGroup/.test(op)),
  );
}

const managedOf = (m: MyIngress): string => String(m.status?.managedSecurityGroup);
const arnOf = (m: MyIngress): string => String(m.status?.arn);

async function condition(
  ns: string,
  name: string,
  type: string,
  want: (c: Condition) => boolean,
): Promise<Condition> {
  return waitFor(
    async () => {
      const m = await readObject<MyIngress>(admin, myIngressType, ns, name);
      const c = m?.status?.conditions?.find((x) => x.type === type);
      return c !== undefined && want(c) ? c : undefined;
    },
    { timeoutMs: 30_000, description: `${type} condition of ${ns}/${name}` },
  );
}

async function gone(ns: string, name: string): Promise<void> {
  await waitFor(
    async () => ((await readObject(admin, myIngressType, ns, name)) === undefined ? true : undefined),
    {
      timeoutMs: 60_000,
      description: `${ns}/${name} deleted`,
    },
  );
}

describe('MyIngress managed security group', () => {
  it('is created tagged, attached alone, open on the listener ports from anywhere and reaching only the target port in the VPC', async () => {
    const ns = await setup('ming-sg');
    proxy.resetCalls();
    const m = await create(ns, 'shop', spec());
    const id = managedOf(m);
    expect(id).toMatch(/^sg-/);
    expect(await groupsOf(arnOf(m))).toEqual([id]);
    expect(m.status?.securityGroups).toEqual([id]);
    const g = await group(id);
    expect(g?.GroupName).toBe(securityGroupName(ns, 'shop', m.metadata.uid ?? ''));
    expect(g?.VpcId).toBe(vpcId);
    const tags: Record<string, string | undefined> = Object.fromEntries(
      (g?.Tags ?? []).map((t) => [t.Key ?? '', t.Value]),
    );
    expect(tags).toMatchObject({
      [ownershipTagKeys.uid]: m.metadata.uid,
      [ownershipTagKeys.owner]: `${ns}/shop`,
      [ownershipTagKeys.cluster]: 'test-cluster',
    });
    expect(rules(g, 'in')).toEqual(['80 from 0.0.0.0/0']);
    // AWS's default allow-all outbound rule is gone: only the target port, within the VPC.
    expect(rules(g, 'out')).toEqual([`8080 to ${vpcCidr}`]);
    // Tagged in the create call itself: no separate CreateTags a crash could skip.
    expect(sgCalls()).toMatchObject({ 'ec2:CreateSecurityGroup': 1 });
    expect(proxy.countsByOperation()['ec2:CreateTags']).toBeUndefined();

    // A second object, and one in another namespace, each get their own group.
    const two = managedOf(await create(ns, 'two', spec()));
    const other = await setup('ming-sg-other');
    const three = managedOf(await create(other, 'shop', spec()));
    expect(new Set([id, two, three]).size).toBe(3);
  });

  it('follows listener and inboundCIDRs changes with only the rules that differ', async () => {
    const ns = await setup('ming-sg-follow');
    const m = await create(ns, 'shop', spec({ scheme: 'internal' }));
    const id = managedOf(m);
    // Internal: the VPC's CIDR by default.
    expect(rules(await group(id), 'in')).toEqual([`80 from ${vpcCidr}`]);

    proxy.resetCalls();
    const both = [
      spec().listeners?.[0],
      { port: 8080, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 200 } } },
    ];
    await patchSpec(ns, 'shop', { listeners: both });
    expect(rules(await group(id), 'in')).toEqual([`80 from ${vpcCidr}`, `8080 from ${vpcCidr}`]);
    expect(sgCalls()).toEqual({
      'ec2:AuthorizeSecurityGroupIngress': 1,
      'ec2:DescribeSecurityGroups': expect.any(Number) as number,
    });

    proxy.resetCalls();
    await patchSpec(ns, 'shop', { inboundCIDRs: [vpcCidr, '192.0.2.0/24'] });
    expect(rules(await group(id), 'in')).toEqual(
      [`80 from ${vpcCidr}`, `8080 from ${vpcCidr}`, '80 from 192.0.2.0/24', '8080 from 192.0.2.0/24'].sort(),
    );
    // One call carries both ports' rules (a permission per port range).
    expect(sgCalls()['ec2:AuthorizeSecurityGroupIngress']).toBe(1);
    expect(sgCalls()['ec2:RevokeSecurityGroupIngress']).toBeUndefined();

    proxy.resetCalls();
    await patchSpec(ns, 'shop', { listeners: [spec().listeners?.[0]], inboundCIDRs: ['192.0.2.0/24'] });
    expect(rules(await group(id), 'in')).toEqual(['80 from 192.0.2.0/24']);
    expect(sgCalls()['ec2:AuthorizeSecurityGroupIngress']).toBeUndefined();
    expect(sgCalls()['ec2:RevokeSecurityGroupIngress']).toBe(1);
    expect(sgCalls()['ec2:CreateSecurityGroup']).toBeUndefined();
  });

  it('puts back a rule revoked by hand and revokes one added by hand (drift)', async () => {
    const ns = await setup('ming-sg-drift');
    running.splice(0).forEach((r) => void r.stop());
    running.push(
      await startController((s) => myIngressController(s, { pollMs: 300, fullCheckMs: 1000 }), {
        namespace: ns,
        endpoint: proxy.endpoint,
        resyncPeriod: '1s',
      }),
    );
    const id = managedOf(await create(ns, 'shop', spec()));
    const { AuthorizeSecurityGroupIngressCommand, RevokeSecurityGroupIngressCommand } =
      await import('@aws-sdk/client-ec2');
    await ec2.send(
      new RevokeSecurityGroupIngressCommand({
        GroupId: id,
        IpPermissions: [{ IpProtocol: 'tcp', FromPort: 80, ToPort: 80, IpRanges: [{ CidrIp: '0.0.0.0/0' }] }],
      }),
    );
    await ec2.send(
      new AuthorizeSecurityGroupIngressCommand({
        GroupId: id,
        IpPermissions: [{ IpProtocol: 'tcp', FromPort: 22, ToPort: 22, IpRanges: [{ CidrIp: '0.0.0.0/0' }] }],
      }),
    );
    await waitFor(
      async () => (rules(await group(id), 'in').join() === '80 from 0.0.0.0/0' ? true : undefined),
      {
        timeoutMs: 30_000,
        description: 'the inbound rules as the spec says again',
      },
    );
  });

  it('is detached and deleted when spec.securityGroups is given, and made again when it is removed', async () => {
    const ns = await setup('ming-sg-switch');
    const m = await create(ns, 'shop', spec());
    const first = managedOf(m);
    await patchSpec(ns, 'shop', { securityGroups: [explicit] });
    expect(await groupsOf(arnOf(m))).toEqual([explicit]);
    expect(await group(first)).toBeUndefined();
    // The status follows at the look that confirms the update (within a second).
    await waitFor(
      async () =>
        (await readObject<MyIngress>(admin, myIngressType, ns, 'shop'))?.status?.managedSecurityGroup ===
        undefined
          ? true
          : undefined,
      { timeoutMs: 10_000, description: 'status.managedSecurityGroup dropped' },
    );
    // The team's group is never changed.
    expect(rules(await group(explicit), 'in')).toEqual([]);

    await patchSpec(ns, 'shop', { securityGroups: null });
    // Created by the update; the status names it from the look that confirms it (within a second).
    const second = await waitFor(
      async () =>
        (await readObject<MyIngress>(admin, myIngressType, ns, 'shop'))?.status?.managedSecurityGroup,
      { timeoutMs: 10_000, description: 'status.managedSecurityGroup' },
    );
    expect(second).toMatch(/^sg-/);
    expect(second).not.toBe(first);
    expect(await groupsOf(arnOf(m))).toEqual([second]);
    expect(rules(await group(explicit), 'in')).toEqual([]);
  });

  it('is deleted with the object, waiting while AWS answers DependencyViolation', async () => {
    const ns = await setup('ming-sg-delete');
    const m = await create(ns, 'shop', spec());
    const id = managedOf(m);
    const refusals = proxy.inject({
      service: 'ec2',
      operation: 'DeleteSecurityGroup',
      times: 3,
      fault: {
        kind: 'error',
        status: 400,
        code: 'DependencyViolation',
        message: `resource ${id} has a dependent object`,
      },
    });
    await admin.delete(resourcePath(myIngressType, { namespace: ns, name: 'shop' }));
    const waiting = await condition(ns, 'shop', 'Synced', (c) => c.reason === 'WaitingForNetworkInterfaces');
    expect(waiting.message).toContain(id);
    await gone(ns, 'shop');
    expect(refusals.hits).toBe(3);
    expect(await group(id)).toBeUndefined();
    expect(await groupsNamed(securityGroupName(ns, 'shop', m.metadata.uid ?? ''))).toEqual([]);
  });

  it('adopts a group an interrupted create left with its tags, and never touches another owner’s', async () => {
    const ns = await setup('ming-sg-adopt');
    // Created with the team's group, so the uid (and the managed group's name) is known first.
    const m = await create(ns, 'shop', spec({ securityGroups: [explicit] }));
    const uid = m.metadata.uid ?? '';
    const left =
      (
        await ec2.send(
          new CreateSecurityGroupCommand({
            GroupName: securityGroupName(ns, 'shop', uid),
            Description: 'left by a create killed after CreateSecurityGroup',
            VpcId: vpcId,
            TagSpecifications: [
              { ResourceType: 'security-group', Tags: [{ Key: ownershipTagKeys.uid, Value: uid }] },
            ],
          }),
        )
      ).GroupId ?? '';
    const adopted = await patchSpec(ns, 'shop', { securityGroups: null });
    expect(managedOf(adopted)).toBe(left);
    expect(await groupsNamed(securityGroupName(ns, 'shop', uid))).toHaveLength(1);
    expect(rules(await group(left), 'in')).toEqual(['80 from 0.0.0.0/0']);

    const o = await create(ns, 'other', spec({ securityGroups: [explicit] }));
    const foreign =
      (
        await ec2.send(
          new CreateSecurityGroupCommand({
            GroupName: securityGroupName(ns, 'other', o.metadata.uid ?? ''),
            Description: 'someone else’s',
            VpcId: vpcId,
            TagSpecifications: [
              {
                ResourceType: 'security-group',
                Tags: [{ Key: ownershipTagKeys.uid, Value: 'someone-else' }],
              },
            ],
          }),
        )
      ).GroupId ?? '';
    await admin.patch(
      resourcePath(myIngressType, { namespace: ns, name: 'other' }),
      { spec: { securityGroups: null } },
      'merge',
    );
    const conflict = await condition(ns, 'other', 'Synced', (c) => c.reason === 'Conflict');
    expect(conflict.message).toContain(foreign);
    expect(conflict.message).toMatch(/Skylift leaves it alone/);
    expect(rules(await group(foreign), 'in')).toEqual([]);
    expect(await groupsOf(arnOf(o))).toEqual([explicit]);
    // Deleting the object leaves the foreign group in place.
    await admin.delete(resourcePath(myIngressType, { namespace: ns, name: 'other' }));
    await gone(ns, 'other');
    expect(await group(foreign)).toBeDefined();
  });
});

describe('MyIngress managed security group under a TeamPolicy limiting inboundCIDRs', () => {
  it('is Forbidden before any AWS call when it would let in more, naming spec.inboundCIDRs, and made once within', async () => {
    const ns = await setup('ming-sg-team', true);
    await applyTeamPolicy(admin, teamGroup, `${ns}-team`, {
      namespaces: { names: [ns] },
      guardrails: { loadBalancers: { inboundCIDRs: ['10.0.0.0/8'] } },
    });
    proxy.resetCalls();
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'shop' },
      spec: spec(),
    });
    const forbidden = await condition(ns, 'shop', 'Synced', (c) => c.reason === 'Forbidden');
    expect(forbidden.message).toBe(
      `TeamPolicy ${ns}-team forbids spec.inboundCIDRs: without spec.inboundCIDRs the managed security group lets in 0.0.0.0/0 (anywhere: the default for internet-facing), which is not within the CIDRs this namespace’s load balancers may let in (10.0.0.0/8); set spec.inboundCIDRs to CIDRs within those, or ask the platform team to allow it in spec.guardrails.loadBalancers.inboundCIDRs`,
    );
    expect(sgCalls()['ec2:CreateSecurityGroup']).toBeUndefined();
    expect(proxy.countsByOperation()['elasticloadbalancing:CreateLoadBalancer']).toBeUndefined();

    const m = await patchSpec(ns, 'shop', { inboundCIDRs: ['10.83.0.0/16'] });
    expect(rules(await group(managedOf(m)), 'in')).toEqual(['80 from 10.83.0.0/16']);
  });
});

describe('MyIngress managed security group in the ALB data plane', () => {
  let dp: AlbDataPlane | undefined;
  afterEach(async () => {
    await dp?.stop();
    dp = undefined;
  });

  it('refuses a client outside inboundCIDRs at connect and serves one inside', async () => {
    const ns = await setup('ming-sg-dp');
    dp = await startAlbDataPlane({ pollMs: 200 });
    const m = await create(
      ns,
      'shop',
      spec({
        listeners: [
          { port: 80, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 200, body: 'in' } } },
        ],
        inboundCIDRs: ['127.0.0.1/32'],
      }),
    );
    const ep = await waitFor(
      async () => {
        await dp?.synced();
        return dp?.endpointOf(arnOf(m), 80);
      },
      { timeoutMs: 30_000, description: 'the listener served' },
    );
    expect(await get(ep, '127.0.0.1')).toEqual({ status: 200, body: 'in' });
    await expect(get(ep, '127.0.0.2')).rejects.toThrow(/ECONNRESET|socket hang up|EPIPE/);

    await patchSpec(ns, 'shop', { inboundCIDRs: ['127.0.0.0/8'] });
    await dp.synced();
    await dp.synced();
    expect(await get(ep, '127.0.0.2')).toEqual({ status: 200, body: 'in' });
  });
});

/** A GET through the data plane from `localAddress`. */
function get(
  ep: { host: string; port: number },
  localAddress: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: ep.host, port: ep.port, path: '/', localAddress, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('MyIngress inboundCIDRs at admission', () => {
  const refused = async (s: MyIngressSpec): Promise<string> => {
    const ns = 'default';
    try {
      await admin.create(resourcePath(myIngressType, { namespace: ns }), {
        apiVersion: 'aws.skylift.dev/v1alpha1',
        kind: 'MyIngress',
        metadata: { generateName: 'refused-' },
        spec: s,
      });
    } catch (err) {
      if (err instanceof KubeApiError && err.statusCode === 422) return err.message;
      throw err;
    }
    throw new Error('accepted');
  };

  it.each([
    {
      reason: 'not a CIDR',
      s: { inboundCIDRs: ['10.0.0.300/8'] },
      message: /must be a CIDR such as 203\.0\.113\.0\/24/,
    },
    {
      reason: 'a host address, not the network',
      s: { inboundCIDRs: ['10.1.2.3/8'] },
      message:
        /spec\.inboundCIDRs\[0\]: Invalid value: "10\.1\.2\.3\/8": must be a network address in canonical form/,
    },
    {
      reason: 'IPv6 on an ipv4 load balancer',
      s: { inboundCIDRs: ['2001:db8::/32'] },
      message: /IPv6 CIDR in inboundCIDRs needs ipAddressType dualstack/,
    },
    {
      reason: 'with securityGroups',
      s: { securityGroups: ['sg-0123'], inboundCIDRs: ['10.0.0.0/8'] },
      message: /inboundCIDRs configures the security group Skylift manages/,
    },
    {
      reason: 'more inbound rules than a group holds',
      s: {
        listeners: [80, 81, 82, 83, 84, 85, 86].map((port) => ({
          port,
          protocol: 'HTTP' as const,
          defaultAction: { fixedResponse: { statusCode: 200 } },
        })),
        inboundCIDRs: Array.from({ length: 9 }, (_, i) => `10.${i}.0.0/16`),
      },
      message:
        /listeners × inboundCIDRs is more than 60 inbound rules \(one per listener port and CIDR\), AWS’s default quota per security group/,
    },
    { reason: 'an empty list', s: { inboundCIDRs: [] }, message: /inboundCIDRs/ },
  ])('refuses $reason', async ({ s, message }) => {
    expect(await refused({ ...spec(), ...s })).toMatch(message);
  });

  it('accepts IPv6 CIDRs with dualstack', async () => {
    const ns = await newNamespace(admin, 'ming-sg-adm');
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'v6' },
      spec: { ...spec(), ipAddressType: 'dualstack', inboundCIDRs: ['2001:db8::/32', '0.0.0.0/0'] },
    });
    expect((await readObject<MyIngress>(admin, myIngressType, ns, 'v6'))?.spec.inboundCIDRs).toHaveLength(2);
  });
});
