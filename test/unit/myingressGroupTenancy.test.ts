// TeamPolicies and a MyIngressGroup's members (src/kinds/myingress/group/tenancy.ts and the plan's
// refusal): which namespaces' members a group serves with the operator's identity, the group's load
// balancer checked against a member's load-balancer-level guardrails, the EndpointSlice managers a
// member's backends trust, and a refused member's state, route verdict and own reason.
import { describe, expect, it } from 'vitest';
import type { TeamPolicy, TeamPolicySpec } from '../../src/apis/teampolicy.ts';
import type { MyIngress } from '../../src/kinds/myingress/api.ts';
import { MemberState, type MyIngressGroup } from '../../src/kinds/myingress/group/api.ts';
import { planGroup } from '../../src/kinds/myingress/group/plan.ts';
import {
  checkGroupGuardrails,
  groupLoadBalancerSpec,
  groupTenancyChanges,
  memberIdentity,
  trustedManagers,
  type MemberTenancy,
} from '../../src/kinds/myingress/group/tenancy.ts';
import { memberTenancyOf } from '../../src/kinds/myingress/group/controller.ts';
import { defaultMyIngressSettings } from '../../src/kinds/myingress/settings.ts';
import type { KindPlumbing } from '../../src/kinds/module.ts';
import type { AwsClients } from '../../src/providers/aws/clients.ts';
import { realClock } from '../../src/runtime/clock.ts';
import type { ExternalClient, ReconcileContext } from '../../src/runtime/adapter.ts';
import { MyIngressGroupAdapter } from '../../src/kinds/myingress/group/adapter.ts';
import type { MyIngressDetails, MyIngressField } from '../../src/kinds/myingress/adapter.ts';
import type { TenantSource, TenancyChange } from '../../src/tenancy/directory.ts';
import type { GuardLookups } from '../../src/kinds/myingress/guardrails.ts';
import { tenancyVerdict } from '../../src/kinds/myingress/gateway/routes.ts';
import type { Tenancy } from '../../src/tenancy/selection.ts';

const group = (
  extra: Partial<MyIngressGroup['spec']> = {},
  annotations?: Record<string, string>,
): MyIngressGroup => ({
  metadata: { name: 'shared', uid: 'g-uid', ...(annotations !== undefined ? { annotations } : {}) },
  spec: {
    scheme: 'internet-facing',
    subnets: ['subnet-1', 'subnet-2'],
    listeners: [{ port: 80, protocol: 'HTTP' }],
    allowedNamespaces: { from: 'All' },
    ...extra,
  },
});

const policy = (name: string, spec: Partial<TeamPolicySpec> = {}): TeamPolicy => ({
  metadata: { name },
  spec: { namespaces: { names: ['shop'] }, ...spec },
});

const under = (p: TeamPolicy): Tenancy => ({ kind: 'policy', policy: p });

describe('memberIdentity', () => {
  it.each<{ reason: string; tenancy: Tenancy | undefined; refused: RegExp | undefined }>([
    { reason: 'no TeamPolicy at all: served', tenancy: { kind: 'unrestricted' }, refused: undefined },
    {
      reason: 'a policy without an identity: the operator’s, served',
      tenancy: under(policy('shop')),
      refused: undefined,
    },
    {
      reason: 'a policy naming the operator’s own region: served',
      tenancy: under(policy('shop', { aws: { region: 'eu-west-1' } })),
      refused: undefined,
    },
    {
      reason: 'a refused tenancy: its own message',
      tenancy: { kind: 'refused', message: 'namespace shop is not selected by any TeamPolicy' },
      refused: /^namespace shop is not selected by any TeamPolicy$/,
    },
    {
      reason: 'not listed yet: refused (fails closed)',
      tenancy: undefined,
      refused: /not listed yet/,
    },
    {
      reason: 'a role: another identity, refused naming the policy, the role and both fixes',
      tenancy: under(policy('payments', { aws: { roleArn: 'arn:aws:iam::222233334444:role/pay' } })),
      refused:
        /^TeamPolicy payments serves namespace shop as role arn:aws:iam::222233334444:role\/pay, but MyIngressGroup shared's load balancer is the operator's own.*serves namespace shop with the operator's identity.*a MyIngress without spec\.group, or its own Gateway/,
    },
    {
      reason: 'another region: refused naming it and the region to use',
      tenancy: under(policy('payments', { aws: { region: 'us-east-1' } })),
      refused: /as region us-east-1, .*and with region eu-west-1/,
    },
  ])('$reason', ({ tenancy, refused }) => {
    const got = memberIdentity(tenancy, group(), 'shop', 'eu-west-1');
    if (refused === undefined) expect(got).toEqual({ kind: 'served' });
    else {
      expect(got.kind).toBe('refused');
      expect(got.kind === 'refused' ? got.message : '').toMatch(refused);
    }
  });

  it('names the Gateway of a Gateway’s group', () => {
    const got = memberIdentity(
      under(policy('payments', { aws: { roleArn: 'arn:aws:iam::2:role/x' } })),
      group({}, { 'skylift.dev/gateway': 'infra/shared' }),
      'shop',
      'eu-west-1',
    );
    expect(got.kind === 'refused' ? got.message : '').toContain(
      "Gateway infra/shared (MyIngressGroup shared)'s load balancer",
    );
  });
});

/** Lookups that fail the test when asked: the cases below need none. */
const noLookups: GuardLookups = {
  vpcCidrs: () => Promise.reject(new Error('unexpected lookup')),
  subnetTags: () => Promise.reject(new Error('unexpected lookup')),
  securityGroupTags: () => Promise.reject(new Error('unexpected lookup')),
  certificateTags: () => Promise.reject(new Error('unexpected lookup')),
  subnetsMatching: () => Promise.reject(new Error('unexpected lookup')),
  certificateForHost: () => Promise.reject(new Error('unexpected lookup')),
};

describe('checkGroupGuardrails', () => {
  it.each<{ reason: string; g: MyIngressGroup; p: TeamPolicy; refused: RegExp | undefined }>([
    { reason: 'no loadBalancers guardrails: served', g: group(), p: policy('shop'), refused: undefined },
    {
      reason: 'only member-level guardrails (endpointSliceManagers): served',
      g: group(),
      p: policy('shop', { guardrails: { loadBalancers: { endpointSliceManagers: ['mesh'] } } }),
      refused: undefined,
    },
    {
      reason: 'the group’s scheme among the allowed: served',
      g: group(),
      p: policy('shop', { guardrails: { loadBalancers: { schemes: ['internet-facing'] } } }),
      refused: undefined,
    },
    {
      reason: 'an internet-facing group for a namespace kept internal: refused, in the policy’s words',
      g: group(),
      p: policy('shop', { guardrails: { loadBalancers: { schemes: ['internal'] } } }),
      refused:
        /^MyIngressGroup shared's load balancer does not meet namespace shop's TeamPolicy shop .*TeamPolicy shop forbids spec\.scheme: internet-facing load balancers are not allowed/,
    },
    {
      reason: 'subnets by ID outside the allowed: refused',
      g: group(),
      p: policy('shop', { guardrails: { loadBalancers: { subnets: { ids: ['subnet-9'] } } } }),
      refused: /forbids spec\.subnets/,
    },
    {
      reason: 'certificates imported from Secrets under a policy limiting certificates: refused',
      g: group({
        listeners: [{ port: 443, protocol: 'HTTPS', certificateRefs: [{ namespace: 'infra', name: 'tls' }] }],
      }),
      p: policy('shop', { guardrails: { loadBalancers: { certificates: { arns: ['arn:aws:acm:x'] } } } }),
      refused: /listeners\[\]\.certificateRefs/,
    },
  ])('$reason', async ({ g, p, refused }) => {
    const got = await checkGroupGuardrails(p, g, groupLoadBalancerSpec(g), 'shop', noLookups);
    if (refused === undefined) expect(got).toEqual({ kind: 'served' });
    else expect(got.kind === 'refused' ? got.message : '').toMatch(refused);
  });
});

describe('trustedManagers', () => {
  const trusting = (...m: string[]) =>
    policy('p', { guardrails: { loadBalancers: { endpointSliceManagers: m } } });
  it.each<{
    reason: string;
    member: TeamPolicy | undefined;
    service: TeamPolicy | undefined;
    same: boolean;
    want: string[];
  }>([
    { reason: 'no policy: none', member: undefined, service: undefined, same: true, want: [] },
    {
      reason: 'the member’s policy’s',
      member: trusting('mesh'),
      service: undefined,
      same: true,
      want: ['mesh'],
    },
    {
      reason: 'another namespace’s Service: only managers both policies trust',
      member: trusting('mesh', 'lb'),
      service: trusting('mesh'),
      same: false,
      want: ['mesh'],
    },
    {
      reason: 'another namespace’s Service: * on the member’s side leaves the Service’s policy’s list',
      member: trusting('*'),
      service: trusting('mesh'),
      same: false,
      want: ['mesh'],
    },
    {
      reason: 'another namespace’s Service: * on both sides trusts any',
      member: trusting('*'),
      service: trusting('*', 'mesh'),
      same: false,
      want: ['*', 'mesh'],
    },
    {
      reason: 'another namespace’s Service: * on the Service’s side leaves the member’s policy’s list',
      member: trusting('lb'),
      service: trusting('*'),
      same: false,
      want: ['lb'],
    },
    {
      reason: 'another namespace’s Service without a policy: none',
      member: trusting('mesh'),
      service: undefined,
      same: false,
      want: [],
    },
  ])('$reason', ({ member, service, same, want }) => {
    expect(trustedManagers(member, service, same)).toEqual(want);
  });
});

describe('planGroup with a tenancy refusal', () => {
  const m = (ns: string, name: string, host: string): MyIngress => ({
    metadata: {
      namespace: ns,
      name,
      uid: `${ns}-${name}`,
      generation: 2,
      creationTimestamp: '2026-01-01T00:00:00Z',
    },
    spec: {
      group: { name: 'shared' },
      rules: [{ priority: 1, hosts: [host], action: { forward: { service: { name: 'web', port: 80 } } } }],
    },
  });

  it('lists the refused member Forbidden with the message; its rules, target groups and claims are not planned', () => {
    const plan = planGroup(
      group(),
      [m('a', 'one', 'x.example.com'), m('b', 'two', 'x.example.com')],
      () => ({}),
      {
        refusal: (ns) => (ns === 'a' ? 'refused: namespace a' : undefined),
      },
    );
    expect(plan.members).toEqual([
      {
        namespace: 'a',
        name: 'one',
        uid: 'a-one',
        observedGeneration: 2,
        state: MemberState.Forbidden,
        message: 'refused: namespace a',
        rules: 0,
      },
      {
        namespace: 'b',
        name: 'two',
        uid: 'b-two',
        observedGeneration: 2,
        state: MemberState.Attached,
        rules: 1,
      },
    ]);
    // The refused member held no claim: the other member's same host is granted.
    expect(plan.spec.rules?.map((r) => r.action.forward?.service?.name)).toEqual(['b/two/web']);
    expect([...plan.attribution.values()].every((uid) => uid === 'b-two')).toBe(true);
    // The load balancer stays wanted while a refused member names the group.
    expect(plan.wanted).toBe(true);
  });
});

describe('tenancyVerdict', () => {
  it.each([
    {
      state: MemberState.Forbidden,
      want: { status: 'False', reason: 'NotAllowedByTeamPolicy', message: 'why' },
    },
    { state: MemberState.Attached, want: undefined },
    { state: MemberState.NotAdmitted, want: undefined },
  ])('a route listed $state', ({ state, want }) => {
    expect(tenancyVerdict({ namespace: 'a', name: 'r', uid: 'u', state, message: 'why', rules: 0 })).toEqual(
      want,
    );
  });
  it('a route not listed', () => {
    expect(tenancyVerdict(undefined)).toBeUndefined();
  });
});

describe('memberTenancyOf', () => {
  /** A tenant source serving `policies` by namespace name (every other namespace refused). */
  const source = (policies: TeamPolicy[]): TenantSource => ({
    tenancyOf: (ns) => Promise.resolve(source_(policies, ns)),
    current: (ns) => source_(policies, ns),
    onChange: () => undefined,
    reportAssumeRole: () => undefined,
    reportThrottling: () => undefined,
  });
  const source_ = (policies: TeamPolicy[], ns: string): Tenancy => {
    const p = policies.find((x) => x.spec.namespaces.names?.includes(ns));
    return p !== undefined
      ? { kind: 'policy', policy: p }
      : { kind: 'refused', message: `no policy for ${ns}` };
  };

  it('judges each namespace, and checks the group against one policy once, whatever its namespaces', async () => {
    let describes = 0;
    const ec2 = {
      send: () => {
        describes++;
        return Promise.resolve({
          Subnets: [
            { SubnetId: 'subnet-1', Tags: [{ Key: 'tier', Value: 'private' }] },
            { SubnetId: 'subnet-2', Tags: [{ Key: 'tier', Value: 'public' }] },
          ],
        });
      },
    };
    const aws = { region: 'eu-west-1', ec2: () => Promise.resolve(ec2) } as unknown as AwsClients;
    const plumbing = { tenants: source([]), clock: realClock } as unknown as KindPlumbing;
    const shop = policy('shop', {
      namespaces: { names: ['a', 'b'] },
      guardrails: { loadBalancers: { subnets: { tags: { tier: 'private' } } } },
    });
    const role = policy('role', { namespaces: { names: ['c'] }, aws: { roleArn: 'arn:aws:iam::2:role/x' } });
    const judge = memberTenancyOf(
      { ...plumbing, tenants: source([shop, role]) },
      aws,
      defaultMyIngressSettings,
    );
    const got = await judge?.(group(), ['a', 'b', 'c', 'd']);
    expect(describes).toBe(1);
    expect([...(got ?? new Map<string, MemberTenancy>())].map(([ns, t]) => [ns, t.kind])).toEqual([
      ['a', 'refused'],
      ['b', 'refused'],
      ['c', 'refused'],
      ['d', 'refused'],
    ]);
    const a = got?.get('a');
    expect(a?.kind === 'refused' ? a.message : '').toMatch(
      /^MyIngressGroup shared's load balancer does not meet namespace a's TeamPolicy shop .*forbids spec\.subnets: subnet subnet-2 is not among/,
    );
    const b = got?.get('b');
    expect(b?.kind === 'refused' ? b.message : '').toContain("does not meet namespace b's TeamPolicy shop");
    expect(memberTenancyOf(plumbing, aws, defaultMyIngressSettings)).toBeDefined();
    expect(
      memberTenancyOf(
        { ...plumbing, tenants: undefined } as unknown as KindPlumbing,
        aws,
        defaultMyIngressSettings,
      ),
    ).toBeUndefined();
  });
});

describe('groupTenancyChanges', () => {
  it('turns any tenancy change into every group', () => {
    const cbs: ((c: TenancyChange) => void)[] = [];
    const tenants = { onChange: (cb: (c: TenancyChange) => void) => cbs.push(cb) } as unknown as TenantSource;
    const seen: TenancyChange[] = [];
    groupTenancyChanges(tenants)?.onChange((c) => seen.push(c));
    for (const cb of cbs) cb(new Set(['shop']));
    expect(seen).toEqual(['all']);
    expect(groupTenancyChanges(undefined)).toBeUndefined();
  });
});

describe('MyIngressGroupAdapter and the tenancy judge', () => {
  const ctx = {
    ownership: { cluster: 'c', owner: 'o', uid: 'g-uid' },
    clock: realClock,
  } as unknown as ReconcileContext;
  /** The MyIngress adapter underneath, reporting no load balancer. */
  const ingress = {
    observe: () => Promise.resolve({ exists: false as const }),
    create: () => Promise.reject(new Error('unexpected create')),
    update: () => Promise.reject(new Error('unexpected update')),
    delete: () => Promise.reject(new Error('unexpected delete')),
  } as unknown as ExternalClient<MyIngress, MyIngressDetails, MyIngressField>;
  const m = (ns: string, groupName: string): MyIngress => ({
    metadata: { namespace: ns, name: 'm', uid: `${ns}-m`, generation: 1 },
    spec: { group: { name: groupName }, rules: [] },
  });

  it.each<{ reason: string; g: MyIngressGroup; members: MyIngress[]; judged: string[][] }>([
    {
      reason: 'a staying member’s namespace is judged',
      g: group(),
      members: [m('a', 'shared'), m('b', 'other')],
      judged: [['a']],
    },
    {
      reason: 'only leaving members (moved to another group): nothing is judged, their rules go',
      g: group(),
      members: [m('b', 'other')],
      judged: [],
    },
    {
      reason: 'a group being deleted: nothing is judged (a guardrail never blocks a deletion)',
      g: { ...group(), metadata: { ...group().metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } },
      members: [m('a', 'shared')],
      judged: [],
    },
  ])('$reason', async ({ g, members, judged }) => {
    const asked: string[][] = [];
    const adapter = new MyIngressGroupAdapter(ingress, {
      members: () => members,
      namespaceLabels: () => ({}),
      synced: () => true,
      memberTenancy: (_g, namespaces) => {
        asked.push([...namespaces]);
        return Promise.reject(new Error('the tenant source is down'));
      },
    });
    const observed = adapter.observe(g, ctx);
    if (judged.length > 0) await expect(observed).rejects.toThrow('the tenant source is down');
    else await expect(observed).resolves.toBeDefined();
    expect(asked).toEqual(judged);
  });
});
