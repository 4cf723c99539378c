// The shared load balancer scenarios of make bench (myingress-group, gateway): the objects they
// make, when a member and a parent count as done, and the ELBv2 figures taken from a phase.
import { describe, expect, it } from 'vitest';
import { selectScenarios } from '../../bench/scenarios.ts';
import {
  benchGatewayName,
  memberDone,
  parentDone,
  sharedLbCounts,
  sharedLbPlan,
} from '../../bench/lib/sharedLbPlan.ts';
import { elbv2Calls, inventoryCounts } from '../../bench/lib/sharedLbScenario.ts';
import type { PhaseResult } from '../../bench/report.ts';
import type { KubeObject } from '../../src/apis/meta.ts';
import { skyliftGatewayControllerName } from '../../src/apis/gatewayApi.ts';

const scenario = (id: string) => {
  const [s] = selectScenarios([id], undefined);
  if (s === undefined) throw new Error(`no scenario ${id}`);
  return s;
};

type Spec = Record<string, unknown> & {
  group?: { name: string };
  rules?: {
    paths?: string[];
    matches?: { path: { value: string } }[];
    action?: unknown;
    backendRefs?: unknown;
  }[];
  parentRefs?: unknown;
};
const specOf = (o: KubeObject | undefined): Spec => (o as unknown as { spec: Spec }).spec;

describe('shared load balancer scenarios', () => {
  it('runs at the issue’s sizes by default and at --sizes when given', () => {
    expect(selectScenarios(['myingress-group', 'gateway'], undefined).map((s) => s.id)).toEqual([
      'myingress-group-100',
      'gateway-200',
    ]);
    expect(selectScenarios(['gateway'], [4, 20]).map((s) => s.id)).toEqual(['gateway-4', 'gateway-20']);
  });

  it.each([
    {
      reason: '100 members: 10 groups of 10 over 5 namespaces',
      id: 'myingress-group-100',
      groups: 10,
      namespaces: 5,
    },
    {
      reason: '11 members: a second group for the eleventh',
      id: 'myingress-group-11',
      groups: 2,
      namespaces: 1,
    },
    { reason: '200 routes: one Gateway, 20 namespaces of 10', id: 'gateway-200', groups: 1, namespaces: 20 },
    { reason: '4 routes: one namespace', id: 'gateway-4', groups: 1, namespaces: 1 },
  ])('counts $reason', ({ id, groups, namespaces }) => {
    const s = scenario(id);
    if (s.group.shared === undefined) throw new Error('not shared');
    expect(sharedLbCounts(s.group.shared, s.size)).toMatchObject({ groups, namespaces });
  });

  it('makes MyIngressGroups of 10 members, each member one rule to its own Service in its namespace', () => {
    const plan = sharedLbPlan(scenario('myingress-group-100'), 'p');
    expect(plan.parents.map((g) => g.metadata.name)).toEqual(Array.from({ length: 10 }, (_, k) => `p-g${k}`));
    expect(plan.namespaces).toEqual(['p-n0', 'p-n1', 'p-n2', 'p-n3', 'p-n4']);
    expect(plan.members).toHaveLength(100);
    const perGroup = new Map<string, Set<string>>();
    for (const m of plan.members) {
      const g = specOf(m).group?.name ?? '';
      perGroup.set(g, (perGroup.get(g) ?? new Set()).add(m.metadata.namespace ?? ''));
    }
    // Ten per group, each group's members from every namespace.
    expect([...perGroup.keys()]).toHaveLength(10);
    for (const nss of perGroup.values()) expect(nss.size).toBe(5);
    const m7 = plan.members[7];
    expect(m7?.metadata).toEqual({ name: 'ing-7', namespace: 'p-n2' });
    expect(specOf(m7).rules).toEqual([
      { priority: 1, paths: ['/m7'], action: { forward: { service: { name: 'svc-7', port: 80 } } } },
    ]);
    // A Service and its EndpointSlice per member, beside it.
    const services = plan.supporting.filter((o) => o.kind === 'Service');
    expect(services).toHaveLength(100);
    expect(services[7]?.metadata).toEqual({ name: 'svc-7', namespace: 'p-n2' });
    // Headless: 200 ClusterIPs and the previous scenario's would overflow the local stack's /24.
    expect(services.every((o) => specOf(o).clusterIP === 'None')).toBe(true);
    expect(plan.supporting.filter((o) => o.kind === 'EndpointSlice')).toHaveLength(100);
    expect(specOf(plan.parents[0])).toMatchObject({
      allowedNamespaces: { from: 'All' },
      scheme: 'internet-facing',
    });
    expect(plan.change).toMatchObject({ fromPath: '/m0', toPath: '/m0-changed', member: plan.members[0] });
  });

  it('makes one Gateway admitting All namespaces and routes of 10 per namespace, each to its own Service', () => {
    const plan = sharedLbPlan(scenario('gateway-200'), 'p');
    expect(plan.parents).toHaveLength(1);
    expect(plan.parents[0]?.metadata).toEqual({ name: benchGatewayName, namespace: 'p-gw' });
    expect(specOf(plan.parents[0])).toMatchObject({
      gatewayClassName: 'skylift',
      listeners: [{ port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }],
    });
    expect(plan.namespaces).toHaveLength(21);
    const perNamespace = new Map<string, number>();
    for (const r of plan.members)
      perNamespace.set(r.metadata.namespace ?? '', (perNamespace.get(r.metadata.namespace ?? '') ?? 0) + 1);
    expect([...perNamespace.values()]).toEqual(Array.from({ length: 20 }, () => 10));
    const r3 = plan.members[3];
    expect(specOf(r3)).toEqual({
      parentRefs: [{ name: benchGatewayName, namespace: 'p-gw' }],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/r3' } }],
          backendRefs: [{ name: 'svc-3', port: 80 }],
        },
      ],
    });
    expect(plan.change.patch).toEqual({
      spec: {
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/r0-changed' } }],
            backendRefs: [{ name: 'svc-0', port: 80 }],
          },
        ],
      },
    });
  });

  const cond = (type: string, status: string, observedGeneration: number) => ({
    type,
    status,
    reason: 'x',
    message: '',
    lastTransitionTime: '',
    observedGeneration,
  });
  const obj = (generation: number, status: Record<string, unknown>): KubeObject =>
    ({ metadata: { name: 'x', namespace: 'ns', generation }, status }) as unknown as KubeObject;
  const parent = (
    conditions: unknown[],
    name = benchGatewayName,
    controllerName = skyliftGatewayControllerName,
  ) => ({
    parents: [{ controllerName, parentRef: { name, namespace: 'gw' }, conditions }],
  });

  it.each([
    {
      reason: 'a member Ready at its generation',
      front: 'myingress-group',
      o: obj(2, { conditions: [cond('Ready', 'True', 2)] }),
      done: true,
    },
    {
      reason: 'a member Ready at an older generation',
      front: 'myingress-group',
      o: obj(3, { conditions: [cond('Ready', 'True', 2)] }),
      done: false,
    },
    {
      reason: 'a member not Ready',
      front: 'myingress-group',
      o: obj(1, { conditions: [cond('Ready', 'False', 1)] }),
      done: false,
    },
    {
      reason: 'a route Accepted at its generation',
      front: 'gateway',
      o: obj(2, parent([cond('Accepted', 'True', 2)])),
      done: true,
    },
    {
      reason: 'a route Accepted at an older generation',
      front: 'gateway',
      o: obj(2, parent([cond('Accepted', 'True', 1)])),
      done: false,
    },
    {
      reason: 'a route Accepted by another Gateway',
      front: 'gateway',
      o: obj(1, parent([cond('Accepted', 'True', 1)], 'other')),
      done: false,
    },
    {
      reason: 'a route Accepted by another controller',
      front: 'gateway',
      o: obj(1, parent([cond('Accepted', 'True', 1)], benchGatewayName, 'example.com/x')),
      done: false,
    },
    { reason: 'a route without status', front: 'gateway', o: obj(1, {}), done: false },
  ] as const)('member done: $reason', ({ front, o, done }) => {
    expect(memberDone(front, o, 'gw')).toBe(done);
  });

  const attached = (n: number, state = 'Attached') => Array.from({ length: n }, () => ({ state }));
  it.each([
    {
      reason: 'a group Ready with all its members Attached',
      front: 'myingress-group',
      o: obj(1, { conditions: [cond('Ready', 'True', 1)], members: attached(3) }),
      members: 3,
      done: true,
    },
    {
      reason: 'a group Ready before every member joined',
      front: 'myingress-group',
      o: obj(1, { conditions: [cond('Ready', 'True', 1)], members: attached(2) }),
      members: 3,
      done: false,
    },
    {
      reason: 'a group listing a member in Conflict',
      front: 'myingress-group',
      o: obj(1, { conditions: [cond('Ready', 'True', 1)], members: [...attached(2), { state: 'Conflict' }] }),
      members: 3,
      done: false,
    },
    {
      reason: 'a Gateway Programmed, routes not asked for',
      front: 'gateway',
      o: obj(1, { conditions: [cond('Programmed', 'True', 1)] }),
      members: undefined,
      done: true,
    },
    {
      reason: 'a Gateway Programmed with every route attached',
      front: 'gateway',
      o: obj(1, { conditions: [cond('Programmed', 'True', 1)], listeners: [{ attachedRoutes: 4 }] }),
      members: 4,
      done: true,
    },
    {
      reason: 'a Gateway Programmed with fewer routes attached',
      front: 'gateway',
      o: obj(1, { conditions: [cond('Programmed', 'True', 1)], listeners: [{ attachedRoutes: 3 }] }),
      members: 4,
      done: false,
    },
    {
      reason: 'a Gateway not Programmed',
      front: 'gateway',
      o: obj(1, { conditions: [cond('Programmed', 'False', 1)] }),
      members: undefined,
      done: false,
    },
  ] as const)('parent done: $reason', ({ front, o, members, done }) => {
    expect(parentDone(front, o, members)).toBe(done);
  });

  it('takes the ELBv2 calls of a phase, per member and by operation, leaving other services out', () => {
    const p = {
      aws: {
        byOperation: {
          'elasticloadbalancing:CreateRule': 4,
          'elasticloadbalancing:DescribeRules': 2,
          'ec2:DescribeSubnets': 7,
        },
      },
    } as unknown as PhaseResult;
    expect(elbv2Calls(p, 4)).toEqual({
      total: 6,
      perMember: 1.5,
      byOperation: { CreateRule: 4, DescribeRules: 2 },
    });
    expect(elbv2Calls(p, 0).perMember).toBe(0);
  });

  it('counts an inventory’s load balancers, listeners, rules, target groups and security groups', () => {
    const owner = { uid: 'u', owner: 'o', cluster: 'c' };
    expect(
      inventoryCounts({
        loadBalancers: [
          {
            arn: 'lb',
            name: 'lb',
            owner,
            listeners: [
              { arn: 'l1', port: 80, ruleArns: ['r1', 'r2'] },
              { arn: 'l2', port: 443, ruleArns: ['r3'] },
            ],
          },
        ],
        targetGroups: [{ arn: 't', name: 't', owner }],
        securityGroups: [{ id: 'sg', owner }],
        dbInstances: [],
        records: [],
        unownedRecords: [],
      }),
    ).toEqual({ loadBalancers: 1, listeners: 2, rules: 3, targetGroups: 1, securityGroups: 1 });
  });
});
