// A MyIngressGroup's plan (src/kinds/myingress/group/plan.ts): claim keys, who is admitted, who
// holds a claim, and the merged spec's rules in member order with ALB priorities per listener.
import { describe, expect, it } from 'vitest';
import type { MyIngress, RuleSpec } from '../../src/kinds/myingress/api.ts';
import type { MyIngressGroup } from '../../src/kinds/myingress/group/api.ts';
import {
  claimKeys,
  groupBackendName,
  parseGroupBackendName,
  planGroup,
} from '../../src/kinds/myingress/group/plan.ts';

const group = (extra: Partial<MyIngressGroup['spec']> = {}): MyIngressGroup => ({
  metadata: { name: 'shared', uid: 'g-uid' },
  spec: {
    subnets: ['s-1', 's-2'],
    listeners: [
      { port: 80, protocol: 'HTTP' },
      { port: 8080, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 503 } } },
    ],
    allowedNamespaces: { from: 'All' },
    ...extra,
  },
});

let n = 0;
function member(
  ns: string,
  name: string,
  rules: RuleSpec[],
  o: { order?: number; createdAt?: string; group?: string; deleting?: boolean } = {},
): MyIngress {
  n++;
  return {
    metadata: {
      namespace: ns,
      name,
      uid: `${ns}-${name}`,
      generation: 1,
      creationTimestamp: o.createdAt ?? `2026-01-01T00:00:${String(n).padStart(2, '0')}Z`,
      ...(o.deleting === true ? { deletionTimestamp: '2026-01-02T00:00:00Z' } : {}),
    },
    spec: {
      group: { name: o.group ?? 'shared', ...(o.order !== undefined ? { order: o.order } : {}) },
      rules,
    },
  };
}

const fixed = (host: string, priority = 1, extra: Partial<RuleSpec> = {}): RuleSpec => ({
  priority,
  hosts: [host],
  action: { fixedResponse: { statusCode: 200 } },
  ...extra,
});

describe('claimKeys', () => {
  it.each<{ reason: string; rules: RuleSpec[]; want: string[] }>([
    {
      reason: 'each host × path of a rule, on its listener (default: the first)',
      rules: [
        fixed('a.example.com', 1, { paths: ['/x', '/y'] }),
        fixed('b.example.com', 2, { listenerPort: 8080 }),
      ],
      want: ['80 a.example.com /x', '80 a.example.com /y', '8080 b.example.com *'],
    },
    {
      reason: 'a rule without hosts claims every host of its paths; hosts in lower case',
      rules: [
        { priority: 1, paths: ['/api/*'], action: { fixedResponse: { statusCode: 200 } } },
        fixed('A.Example.COM'),
      ],
      want: ['80 * /api/*', '80 a.example.com *'],
    },
  ])('$reason', ({ rules, want }) => {
    expect(claimKeys(rules, 80)).toEqual(want);
  });
});

describe('groupBackendName', () => {
  it('round-trips and refuses any other name', () => {
    expect(parseGroupBackendName(groupBackendName('team-a', 'shop', 'web'))).toEqual({
      namespace: 'team-a',
      member: 'shop',
      memberNamespace: 'team-a',
      service: 'web',
    });
    // A route's Service of another namespace (allowed by a ReferenceGrant): that namespace's.
    expect(parseGroupBackendName(groupBackendName('team-a', 'shop', 'shared/web'))).toEqual({
      namespace: 'shared',
      member: 'shop',
      memberNamespace: 'team-a',
      service: 'web',
    });
    expect(parseGroupBackendName('web')).toBeUndefined();
    expect(parseGroupBackendName('a//web')).toBeUndefined();
  });
});

describe('planGroup', () => {
  const labels = (ns: string): Record<string, string> | undefined =>
    ({ 'team-a': { team: 'a' }, 'team-b': { team: 'b' } })[ns];

  it('merges the granted members’ rules by order, then namespace/name, then their priorities, numbering each listener from 1', () => {
    const plan = planGroup(
      group(),
      [
        member('team-b', 'z', [fixed('z2.example.com', 20), fixed('z1.example.com', 10)]),
        member('team-a', 'y', [
          fixed('y.example.com', 1),
          fixed('y8080.example.com', 1, { listenerPort: 8080 }),
        ]),
        member('team-b', 'first', [fixed('first.example.com', 99)], { order: -5 }),
      ],
      labels,
    );
    expect(plan.spec.rules?.map((r) => [r.listenerPort, r.priority, r.hosts?.[0]])).toEqual([
      [80, 1, 'first.example.com'],
      [80, 2, 'y.example.com'],
      [8080, 1, 'y8080.example.com'],
      [80, 3, 'z1.example.com'],
      [80, 4, 'z2.example.com'],
    ]);
    // A listener's default action defaults to a fixed 404; one given is kept.
    expect(plan.spec.listeners?.map((l) => l.defaultAction)).toEqual([
      { fixedResponse: { statusCode: 404 } },
      { fixedResponse: { statusCode: 503 } },
    ]);
    expect(plan.attribution.get('80/2')).toBe('team-a-y');
    expect(plan.attribution.get('8080/1')).toBe('team-a-y');
    expect(plan.members.map((m) => [m.name, m.state, m.rules])).toEqual([
      ['y', 'Attached', 2],
      ['first', 'Attached', 1],
      ['z', 'Attached', 2],
    ]);
  });

  it('names each member’s backends after it, so two members of a namespace never share a target group', () => {
    const fwd = (host: string): RuleSpec => ({
      priority: 1,
      hosts: [host],
      action: { forward: { service: { name: 'web', port: 80 } } },
    });
    const plan = planGroup(
      group(),
      [member('team-a', 'one', [fwd('one.example.com')]), member('team-a', 'two', [fwd('two.example.com')])],
      labels,
    );
    expect(plan.spec.rules?.map((r) => r.action.forward?.service?.name)).toEqual([
      'team-a/one/web',
      'team-a/two/web',
    ]);
    expect(plan.attribution.get('team-a/one/web:80')).toBe('team-a-one');
    expect(plan.attribution.get('team-a/two/web:80')).toBe('team-a-two');
  });

  it('refuses the later claimant of a host and path whole, naming the claim and no other member', () => {
    const older = member('team-a', 'older', [fixed('shop.example.com')], {
      createdAt: '2026-01-01T00:00:00Z',
    });
    const later = member('team-b', 'later', [fixed('other.example.com', 1), fixed('SHOP.example.com', 2)], {
      createdAt: '2026-01-01T00:01:00Z',
      order: -10,
    });
    const plan = planGroup(group(), [later, older], labels);
    expect(plan.spec.rules?.map((r) => r.hosts?.[0])).toEqual(['shop.example.com']);
    const refused = plan.members.find((m) => m.name === 'later');
    expect(refused?.state).toBe('Conflict');
    expect(refused?.message).toContain(
      'listener port 80, host shop.example.com, path * is claimed by another member of MyIngressGroup shared',
    );
    expect(refused?.message).not.toContain('team-a');
    expect(plan.wanted).toBe(true);
  });

  it('refuses a namespace the group does not admit, saying who can change that', () => {
    const plan = planGroup(
      group({ allowedNamespaces: { from: 'Selector', selector: { matchLabels: { team: 'a' } } } }),
      [
        member('team-a', 'in', [fixed('in.example.com')]),
        member('team-b', 'out', [fixed('out.example.com')]),
        member('unknown', 'x', [fixed('x.example.com')]),
      ],
      labels,
    );
    expect(plan.spec.rules?.map((r) => r.hosts?.[0])).toEqual(['in.example.com']);
    const out = plan.members.find((m) => m.name === 'out');
    expect(out?.state).toBe('NotAdmitted');
    expect(out?.message).toMatch(
      /a cluster administrator \(whoever may edit MyIngressGroup objects\) can change its spec.allowedNamespaces/,
    );
    expect(plan.members.find((m) => m.name === 'x')?.state).toBe('NotAdmitted');
  });

  it('refuses a member whose rule names a port the group does not listen on', () => {
    const plan = planGroup(
      group(),
      [member('team-a', 'bad', [fixed('b.example.com', 1, { listenerPort: 443 })])],
      labels,
    );
    expect(plan.members[0]?.state).toBe('Invalid');
    expect(plan.spec.rules).toBeUndefined();
  });

  it('leaves out members that left (deleted or naming another group); with none staying the load balancer is not wanted', () => {
    const plan = planGroup(
      group(),
      [
        member('team-a', 'gone', [fixed('g.example.com')], { deleting: true }),
        member('team-a', 'moved', [fixed('m.example.com')], { group: 'other' }),
      ],
      labels,
    );
    expect(plan.members).toEqual([]);
    expect(plan.spec.rules).toBeUndefined();
    expect(plan.wanted).toBe(false);
  });

  it('does not depend on the order members are listed in', () => {
    const ms = [
      member('team-a', 'a', [fixed('x.example.com')]),
      member('team-b', 'b', [fixed('x.example.com')]),
      member('team-a', 'c', [fixed('c.example.com')], { order: 3 }),
    ];
    expect(planGroup(group(), [...ms].reverse(), labels)).toEqual(planGroup(group(), ms, labels));
  });
});
