// The lifecycle model's invariants of shared load balancers (bench/lifecycle/invariants.ts
// judgeGroups): MyIngressGroups and their members, Gateways' groups and their routes, on
// hand-built observations.
import { describe, expect, it } from 'vitest';
import { judge, judgeGroups, settledProblem } from '../../bench/lifecycle/invariants.ts';
import { newModel, type LifecycleModel } from '../../bench/lifecycle/model.ts';
import type { Observed, ObservedCr, ObservedGateway } from '../../bench/lifecycle/world.ts';
import { memberFromTags } from '../../bench/lib/awsInventory.ts';
import type { InventoryLoadBalancer, InventoryTargetGroup } from '../../bench/lib/invariants.ts';

const ns = 'lc-t';
const ctx = { zoneName: 'z.example', ns };
const ok = { status: 'True', reason: 'Available', message: '', observedGeneration: 1 };

function cr(kind: ObservedCr['kind'], name: string, uid: string, over: Partial<ObservedCr> = {}): ObservedCr {
  return {
    kind,
    name,
    uid,
    generation: 1,
    observedGeneration: 1,
    deleting: false,
    finalizers: [],
    ready: ok,
    synced: { ...ok, reason: 'ReconcileSuccess' },
    spec: {},
    status: {},
    ...over,
  };
}

function lb(
  name: string,
  ownerUid: string,
  members: (string | undefined)[],
  dnsName = `${name}.elb`,
): InventoryLoadBalancer {
  return {
    arn: `arn:lb/${name}`,
    name,
    dnsName,
    owner: { uid: ownerUid, owner: `/${name}`, cluster: '' },
    listeners: [
      {
        arn: `arn:listener/${name}`,
        port: 80,
        ruleArns: members.map((_, i) => `arn:listener-rule/${name}/${i}`),
        ruleMembers: new Map(members.map((m, i) => [`arn:listener-rule/${name}/${i}`, m])),
      },
    ],
  };
}

function tg(name: string, ownerUid: string, member: string): InventoryTargetGroup {
  return { arn: `arn:tg/${name}`, name, owner: { uid: ownerUid, owner: `/g`, cluster: '' }, member };
}

function observed(over: Partial<Observed> = {}): Observed {
  return {
    crs: [],
    gateways: [],
    routes: [],
    records: [],
    inventory: { loadBalancers: [], targetGroups: [], dbInstances: [], records: [], unownedRecords: [] },
    secrets: new Map(),
    dbs: new Map(),
    endpointSlices: new Map(),
    targets: new Map(),
    passwords: new Map(),
    ...over,
  };
}

/** A model with group `lc-t-g1` (uid G) and member `in2` (uid M) naming it. */
function withGroupAndMember(): LifecycleModel {
  const m = newModel();
  m.live.set('lc-t-g1', { kind: 'MyIngressGroup', name: 'lc-t-g1' });
  m.uids.set('lc-t-g1', 'G');
  m.live.set('in2', { kind: 'MyIngress', name: 'in2', port: 80, group: 'lc-t-g1', host: 'in2.example.com' });
  m.uids.set('in2', 'M');
  return m;
}

describe('lifecycle invariants of shared load balancers', () => {
  it.each([
    {
      reason: 'the group carries exactly its member’s rule and target group: holds',
      lbs: [lb('g1', 'G', ['M'])],
      tgs: [tg('t1', 'G', 'M')],
      broken: [],
      waiting: [],
    },
    {
      reason: 'a rule of a member that moved away is still there: not settled',
      lbs: [lb('g1', 'G', ['M', 'M2'])],
      tgs: [tg('t1', 'G', 'M')],
      broken: [],
      waiting: [/in9's, which is not a member of lc-t-g1/, /rules are for in2, in9, its members are in2/],
    },
    {
      reason: 'a rule tagged for a uid no object of the run had: broken',
      lbs: [lb('g1', 'G', ['M', 'X'])],
      tgs: [tg('t1', 'G', 'M')],
      broken: [/tagged for member uid X, which no MyIngress or HTTPRoute of this run had/],
      waiting: [/rules are for/],
    },
    {
      reason: 'the member’s target group is missing: not settled',
      lbs: [lb('g1', 'G', ['M'])],
      tgs: [],
      broken: [],
      waiting: [/target groups are for none, its members are in2/],
    },
  ])('$reason', ({ lbs, tgs, broken, waiting }) => {
    const m = withGroupAndMember();
    m.uids.set('in9', 'M2');
    const v = judgeGroups(
      m,
      observed({
        crs: [cr('MyIngressGroup', 'lc-t-g1', 'G'), cr('MyIngress', 'in2', 'M')],
        inventory: { ...observed().inventory, loadBalancers: lbs, targetGroups: tgs },
      }),
      ctx,
    );
    expect(v.broken).toHaveLength(broken.length);
    broken.forEach((re, i) => expect(v.broken[i]).toMatch(re));
    expect(v.waiting).toHaveLength(waiting.length);
    waiting.forEach((re, i) => expect(v.waiting[i]).toMatch(re));
  });

  it('a group without members keeps no load balancer, and says NoMembers (settled)', () => {
    const m = newModel();
    m.live.set('lc-t-g1', { kind: 'MyIngressGroup', name: 'lc-t-g1' });
    m.uids.set('lc-t-g1', 'G');
    const noMembers = {
      status: 'False',
      reason: 'NoMembers',
      message: 'no MyIngress names MyIngressGroup lc-t-g1 (spec.group)',
      observedGeneration: 1,
    };
    const group = cr('MyIngressGroup', 'lc-t-g1', 'G', { ready: noMembers });
    expect(settledProblem(group)).toBeUndefined();
    const left = judgeGroups(
      m,
      observed({ crs: [group], inventory: { ...observed().inventory, loadBalancers: [lb('g1', 'G', [])] } }),
      ctx,
    );
    expect(left.waiting).toEqual(['MyIngressGroup lc-t-g1 has no members but load balancer g1']);
    expect(judgeGroups(m, observed({ crs: [group] }), ctx)).toEqual({ broken: [], waiting: [] });
  });

  it('a Ready member needs a rule of its own on its group’s load balancer', () => {
    const m = withGroupAndMember();
    const v = judge(
      m,
      observed({
        crs: [cr('MyIngressGroup', 'lc-t-g1', 'G'), cr('MyIngress', 'in2', 'M')],
        inventory: { ...observed().inventory, loadBalancers: [lb('g1', 'G', [])] },
      }),
      ctx,
    );
    expect(v.waiting).toContain(
      "MyIngress in2 is Ready but its group lc-t-g1's load balancer has no rule of it",
    );
  });

  it('a Programmed Gateway’s address is its group’s load balancer’s DNS name; its routes are accepted', () => {
    const m = newModel();
    m.live.set('gw1', { kind: 'Gateway', name: 'gw1' });
    m.uids.set('gw1', 'GW');
    m.live.set('rt2', { kind: 'HTTPRoute', name: 'rt2', gateway: 'gw1', host: 'rt2.example.com' });
    m.uids.set('rt2', 'R');
    const group = cr('MyIngressGroup', `gateway.${ns}.gw1`, 'GG');
    m.gatewayGroupUids.set('GG', group.name);
    const gateway = (address: string): ObservedGateway => ({
      name: 'gw1',
      uid: 'GW',
      programmed: true,
      address,
    });
    const base = {
      crs: [group],
      routes: [
        { name: 'rt2', uid: 'R', parents: new Map([['gw1', { accepted: true, resolvedRefs: true }]]) },
      ],
      inventory: {
        ...observed().inventory,
        loadBalancers: [lb('gwlb', 'GG', ['R'], 'gwlb.elb')],
        targetGroups: [tg('t', 'GG', 'R')],
      },
    };
    expect(judgeGroups(m, observed({ ...base, gateways: [gateway('gwlb.elb')] }), ctx)).toEqual({
      broken: [],
      waiting: [],
    });
    expect(judgeGroups(m, observed({ ...base, gateways: [gateway('old.elb')] }), ctx).waiting).toEqual([
      "Gateway gw1 is Programmed with address old.elb, but its load balancer's DNS name is gwlb.elb",
    ]);
    const refused = judgeGroups(
      m,
      observed({
        ...base,
        gateways: [gateway('gwlb.elb')],
        routes: [{ name: 'rt2', uid: 'R', parents: new Map() }],
      }),
      ctx,
    );
    expect(refused.waiting).toEqual([
      'HTTPRoute rt2 on Gateway gw1: Accepted -, ResolvedRefs - at its generation',
    ]);
  });

  it('a deleted Gateway’s group and what it owned must go; they are the run’s, not foreign', () => {
    const m = newModel();
    m.uids.set('gw1', 'GW');
    m.deleted.push({ kind: 'Gateway', name: 'gw1', uid: 'GW', deletionPolicy: 'Delete' });
    m.gatewayGroupUids.set('GG', `gateway.${ns}.gw1`);
    const stillThere = judge(
      m,
      observed({
        crs: [cr('MyIngressGroup', `gateway.${ns}.gw1`, 'GG', { deleting: true })],
        inventory: { ...observed().inventory, loadBalancers: [lb('gwlb', 'GG', [])] },
      }),
      ctx,
    );
    expect(stillThere.broken).toEqual([]);
    expect(stillThere.waiting).toContain(
      `Gateway gw1 was deleted but its MyIngressGroup gateway.${ns}.gw1 is still there`,
    );
    const leftInAws = judge(
      m,
      observed({ inventory: { ...observed().inventory, loadBalancers: [lb('gwlb', 'GG', [])] } }),
      ctx,
    );
    expect(leftInAws.broken).toEqual([]);
    expect(leftInAws.waiting).toEqual([
      `load balancer gwlb is owned by MyIngressGroup gateway.${ns}.gw1 (uid GG) of a Gateway, which is gone`,
    ]);
  });

  it('a security group of no object of the run is broken (leaks count groups’ security groups)', () => {
    const v = judge(
      newModel(),
      observed({
        inventory: {
          ...observed().inventory,
          securityGroups: [{ id: 'sg-1 (g)', owner: { uid: 'Z', owner: `/${ns}-g1`, cluster: '' } }],
        },
      }),
      ctx,
    );
    expect(v.broken).toEqual(['security group sg-1 (g) is owned by uid Z, which no object of this run had']);
  });

  it('reads the member tag of a rule or target group', () => {
    expect(memberFromTags([{ Key: 'skylift.dev/member', Value: 'u1' }])).toBe('u1');
    expect(memberFromTags([{ Key: 'skylift.dev/member', Value: '' }])).toBeUndefined();
    expect(memberFromTags([])).toBeUndefined();
  });
});
