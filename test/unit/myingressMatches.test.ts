// MyIngress rules' header, query string and method conditions and weighted forwards: what the
// desired state asks of ELBv2 (desired.ts), how AWS's answer compares (a weight or header changed
// is a changed rule; AWS's own shape of the same is not), the rule plan (a weight change is one
// update), the delta, the backends they name and a group member's copy (group/plan.ts).
import type { Action, Rule, RuleCondition } from '@aws-sdk/client-elastic-load-balancing-v2';
import { describe, expect, it } from 'vitest';
import type { OwnershipTags } from '../../src/apis/managed.ts';
import type { ActionSpec, MyIngress, MyIngressSpec, RuleSpec } from '../../src/kinds/myingress/api.ts';
import { backendRefs } from '../../src/kinds/myingress/backends.ts';
import { ingressDelta, type ObservedLoadBalancer } from '../../src/kinds/myingress/delta.ts';
import {
  actionsKey,
  backendSettingsRefusal,
  conditionsKey,
  desiredTargetGroups,
  ruleMatches,
  sdkActions,
  sdkConditions,
} from '../../src/kinds/myingress/desired.ts';
import { claimKeys, memberAction, planGroup } from '../../src/kinds/myingress/group/plan.ts';
import { listenerRulePlan } from '../../src/kinds/myingress/listenerPlan.ts';

const split = (a: number, b: number): ActionSpec => ({
  forward: {
    services: [
      { name: 'web', port: 80, weight: a },
      { name: 'canary', port: 80, weight: b },
    ],
  },
});

const canaryRule = (over: Partial<RuleSpec> = {}): RuleSpec => ({
  priority: 1,
  paths: ['/api/*'],
  headers: [{ name: 'X-Canary', values: ['on', 'yes'] }],
  queryStrings: [{ key: 'v', value: '2' }, { value: 'beta' }],
  methods: ['GET', 'HEAD'],
  action: split(3, 1),
  ...over,
});

const tgArns = new Map([
  ['web:80', 'arn:tg/web'],
  ['canary:80', 'arn:tg/canary'],
]);

describe('desired: conditions and weighted forwards', () => {
  it('asks one http-header condition per header, one query-string per pair, one method condition', () => {
    const r = canaryRule();
    expect(sdkConditions(r.hosts, r.paths, r)).toEqual([
      { Field: 'path-pattern', PathPatternConfig: { Values: ['/api/*'] } },
      { Field: 'http-header', HttpHeaderConfig: { HttpHeaderName: 'X-Canary', Values: ['on', 'yes'] } },
      { Field: 'query-string', QueryStringConfig: { Values: [{ Key: 'v', Value: '2' }] } },
      { Field: 'query-string', QueryStringConfig: { Values: [{ Value: 'beta' }] } },
      { Field: 'http-request-method', HttpRequestMethodConfig: { Values: ['GET', 'HEAD'] } },
    ]);
  });

  it('forwards to several target groups with their weights, and to one as before', () => {
    expect(sdkActions(split(3, 0), tgArns)).toEqual([
      {
        Type: 'forward',
        ForwardConfig: {
          TargetGroups: [
            { TargetGroupArn: 'arn:tg/web', Weight: 3 },
            { TargetGroupArn: 'arn:tg/canary', Weight: 0 },
          ],
        },
      },
    ]);
    expect(sdkActions({ forward: { service: { name: 'web', port: 80 } } }, tgArns)).toEqual([
      { Type: 'forward', TargetGroupArn: 'arn:tg/web' },
    ]);
  });

  it('needs a target group for every weighted Service, one per Service port across forwards', () => {
    const spec: MyIngressSpec = {
      listeners: [
        { port: 80, protocol: 'HTTP', defaultAction: { forward: { service: { name: 'web', port: 80 } } } },
      ],
      rules: [canaryRule()],
    };
    expect(desiredTargetGroups(spec, 'uid').map((t) => t.key)).toEqual(['web:80', 'canary:80']);
  });

  it('names each weighted backend by its field', () => {
    expect(backendRefs({ rules: [canaryRule()] })).toEqual([
      { field: 'spec.rules[0].action.forward.services[0]', service: 'web', port: 80 },
      { field: 'spec.rules[0].action.forward.services[1]', service: 'canary', port: 80 },
    ]);
  });

  it.each<{ reason: string; spec: MyIngressSpec; want: string | undefined }>([
    {
      reason: 'a weighted backend and a forward.service to one Service port with the same settings',
      spec: {
        listeners: [
          {
            port: 80,
            protocol: 'HTTP',
            defaultAction: { forward: { service: { name: 'web', port: 80, healthCheck: { path: '/' } } } },
          },
        ],
        rules: [canaryRule()],
      },
      want: undefined,
    },
    {
      reason: 'a weighted backend with another health check than a forward.service to its port',
      spec: {
        listeners: [
          {
            port: 80,
            protocol: 'HTTP',
            defaultAction: {
              forward: { service: { name: 'web', port: 80, healthCheck: { path: '/ready' } } },
            },
          },
        ],
        rules: [canaryRule()],
      },
      want: 'spec.listeners[0].defaultAction.forward.service and spec.rules[0].action.forward.services[0] forward to Service web port 80 with different',
    },
  ])('backend settings: $reason', ({ spec, want }) => {
    const got = backendSettingsRefusal(spec);
    if (want === undefined) expect(got).toBeUndefined();
    else expect(got).toContain(want);
  });
});

describe('comparing with what AWS describes', () => {
  const f = (groups: [string, number][], arn?: string): Action[] => [
    {
      Type: 'forward',
      ...(arn !== undefined ? { TargetGroupArn: arn } : {}),
      ForwardConfig: {
        TargetGroups: groups.map(([TargetGroupArn, Weight]) => ({ TargetGroupArn, Weight })),
        TargetGroupStickinessConfig: { Enabled: false },
      },
    },
  ];

  it.each<{ reason: string; a: Action[]; b: Action[]; same: boolean }>([
    {
      reason: 'a one-group forward as sent and as AWS describes it (both fields, weight 1)',
      a: [{ Type: 'forward', TargetGroupArn: 'arn:tg/web' }],
      b: f([['arn:tg/web', 1]], 'arn:tg/web'),
      same: true,
    },
    {
      reason: 'weighted groups in another order',
      a: f([
        ['arn:tg/web', 3],
        ['arn:tg/canary', 1],
      ]),
      b: f([
        ['arn:tg/canary', 1],
        ['arn:tg/web', 3],
      ]),
      same: true,
    },
    {
      reason: 'a weight changed',
      a: f([
        ['arn:tg/web', 3],
        ['arn:tg/canary', 1],
      ]),
      b: f([
        ['arn:tg/web', 1],
        ['arn:tg/canary', 3],
      ]),
      same: false,
    },
    {
      reason: 'a weighted forward and a one-group forward',
      a: f([
        ['arn:tg/web', 1],
        ['arn:tg/canary', 0],
      ]),
      b: [{ Type: 'forward', TargetGroupArn: 'arn:tg/web' }],
      same: false,
    },
  ])('actions: $reason', ({ a, b, same }) => {
    expect(actionsKey(a) === actionsKey(b)).toBe(same);
  });

  const r = canaryRule();
  const wanted = sdkConditions(r.hosts, r.paths, r);
  it.each<{ reason: string; have: RuleCondition[]; same: boolean }>([
    { reason: 'the same conditions in another order', have: [...wanted].reverse(), same: true },
    {
      reason: 'the header name in another case (ALB compares names so)',
      have: wanted.map((c) =>
        c.Field === 'http-header'
          ? { ...c, HttpHeaderConfig: { HttpHeaderName: 'x-canary', Values: ['yes', 'on'] } }
          : c,
      ),
      same: true,
    },
    {
      reason: 'a header value changed',
      have: wanted.map((c) =>
        c.Field === 'http-header'
          ? { ...c, HttpHeaderConfig: { HttpHeaderName: 'X-Canary', Values: ['on'] } }
          : c,
      ),
      same: false,
    },
    {
      reason: 'a query pair missing',
      have: wanted.filter(
        (c) => !(c.Field === 'query-string' && c.QueryStringConfig?.Values?.[0]?.Key === undefined),
      ),
      same: false,
    },
    {
      reason: 'two query pairs ORed in one condition (not what the spec asks: both must be there)',
      have: [
        ...wanted.filter((c) => c.Field !== 'query-string'),
        {
          Field: 'query-string',
          QueryStringConfig: { Values: [{ Key: 'v', Value: '2' }, { Value: 'beta' }] },
        },
      ],
      same: false,
    },
    {
      reason: 'a method removed',
      have: wanted.map((c) =>
        c.Field === 'http-request-method' ? { ...c, HttpRequestMethodConfig: { Values: ['GET'] } } : c,
      ),
      same: false,
    },
  ])('conditions: $reason', ({ have, same }) => {
    expect(conditionsKey(have) === conditionsKey(wanted)).toBe(same);
  });

  it('a rule as AWS describes it matches the spec', () => {
    const seen: Rule = {
      Conditions: [...wanted].reverse(),
      Actions: f([
        ['arn:tg/canary', 1],
        ['arn:tg/web', 3],
      ]),
    };
    expect(ruleMatches(seen, { conditions: wanted, actions: sdkActions(r.action, tgArns) })).toBe(true);
  });
});

describe('rule plan and delta', () => {
  const seen = (spec: RuleSpec): Rule => ({
    RuleArn: `r-${spec.priority}`,
    Priority: String(spec.priority),
    Conditions: sdkConditions(spec.hosts, spec.paths, spec),
    Actions: sdkActions(spec.action, tgArns),
  });

  it.each<{ reason: string; want: RuleSpec; updates: number }>([
    { reason: 'nothing changed: nothing to do', want: canaryRule(), updates: 0 },
    { reason: 'a weight changed: one update', want: canaryRule({ action: split(1, 3) }), updates: 1 },
    {
      reason: 'a header changed: one update',
      want: canaryRule({ headers: [{ name: 'X-Canary', values: ['beta'] }] }),
      updates: 1,
    },
    {
      reason: 'a method added: one update',
      want: canaryRule({ methods: ['GET', 'HEAD', 'POST'] }),
      updates: 1,
    },
    {
      reason: 'the query pairs removed: one update',
      want: (({ queryStrings: _q, ...rest }) => rest)(canaryRule()),
      updates: 1,
    },
  ])('$reason', ({ want, updates }) => {
    const plan = listenerRulePlan([want], [seen(canaryRule())], tgArns);
    expect(plan.creates).toHaveLength(0);
    expect(plan.deletes).toHaveLength(0);
    expect(plan.updates).toHaveLength(updates);
    if (updates > 0) expect(plan.updates[0]?.from.RuleArn).toBe('r-1');
  });

  const ours: OwnershipTags = { cluster: 'prod', owner: 'shop/web', uid: 'uid-1' };
  const ingress = (rule: RuleSpec): MyIngress => ({
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'MyIngress',
    metadata: { name: 'web', namespace: 'shop', uid: 'uid-1' },
    spec: {
      listeners: [{ port: 80, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 404 } } }],
      rules: [rule],
    },
  });
  const observed = (rule: Rule): ObservedLoadBalancer => {
    const spec = ingress(canaryRule()).spec;
    return {
      ownership: ours,
      lb: { LoadBalancerArn: 'arn:lb/1', IpAddressType: 'ipv4' },
      listeners: [
        {
          ListenerArn: 'arn:listener/80',
          Port: 80,
          Protocol: 'HTTP',
          DefaultActions: sdkActions({ fixedResponse: { statusCode: 404 } }, tgArns),
        },
      ],
      rules: new Map([['arn:listener/80', [rule]]]),
      targetGroups: desiredTargetGroups(spec, 'uid-1').map((want) => ({
        want,
        tg: {
          TargetGroupArn: tgArns.get(want.key),
          HealthCheckPath: '/',
          HealthCheckIntervalSeconds: 15,
          HealthCheckTimeoutSeconds: 5,
          HealthyThresholdCount: 2,
          UnhealthyThresholdCount: 2,
          Matcher: { HttpCode: '200' },
        },
        registered: [],
        wanted: [],
      })),
      attributes: new Map(),
      tags: {},
    };
  };

  it('finds nothing when AWS has the rule, and a changed rule for a weight or a header', () => {
    expect(ingressDelta(ingress(canaryRule()), ours, observed(seen(canaryRule())))).toEqual([]);
    expect(
      ingressDelta(ingress(canaryRule({ action: split(1, 1) })), ours, observed(seen(canaryRule()))),
    ).toEqual([{ field: 'rules', change: 'rule 1 changed' }]);
    expect(
      ingressDelta(
        ingress(canaryRule({ headers: [{ name: 'X-Other', values: ['1'] }] })),
        ours,
        observed(seen(canaryRule())),
      ),
    ).toEqual([{ field: 'rules', change: 'rule 1 changed' }]);
  });
});

describe('a group member’s weighted forward and conditions', () => {
  it('renames every weighted Service and keeps the weights', () => {
    expect(memberAction(split(3, 1), 'team-a', 'shop')).toEqual({
      forward: {
        services: [
          { name: 'team-a/shop/web', port: 80, weight: 3 },
          { name: 'team-a/shop/canary', port: 80, weight: 1 },
        ],
      },
    });
  });

  it('carries the conditions into the merged rules, attributes both target groups, and claims a path per header set', () => {
    const member = (name: string, rule: RuleSpec): MyIngress => ({
      metadata: {
        namespace: 'team-a',
        name,
        uid: name,
        creationTimestamp: `2026-01-01T00:00:0${name.length}Z`,
      },
      spec: { group: { name: 'shared' }, rules: [rule] },
    });
    const plan = planGroup(
      {
        metadata: { name: 'shared', uid: 'g' },
        spec: {
          subnets: ['s-1', 's-2'],
          listeners: [{ port: 80, protocol: 'HTTP' }],
          allowedNamespaces: { from: 'All' },
        },
      },
      [
        member('canary', canaryRule()),
        member('stable', {
          priority: 1,
          paths: ['/api/*'],
          action: { forward: { service: { name: 'web', port: 80 } } },
        }),
      ],
      () => ({}),
    );
    // Same path, different conditions: no conflict, both attached.
    expect(plan.members.map((m) => m.state)).toEqual(['Attached', 'Attached']);
    const merged = plan.spec.rules?.find((r) => r.headers !== undefined);
    expect(merged).toMatchObject({
      headers: canaryRule().headers,
      queryStrings: canaryRule().queryStrings,
      methods: ['GET', 'HEAD'],
    });
    expect(plan.attribution.get('team-a/canary/web:80')).toBe('canary');
    expect(plan.attribution.get('team-a/canary/canary:80')).toBe('canary');
    const [withHeaders] = claimKeys([canaryRule()], 80);
    const [plain] = claimKeys(
      [(({ headers: _h, queryStrings: _q, methods: _m, ...rest }) => rest)(canaryRule())],
      80,
    );
    expect(plain).toBe('80 * /api/*');
    expect(withHeaders?.startsWith('80 * /api/* ')).toBe(true);
    // The same conditions in another order and case claim the same.
    expect(
      claimKeys(
        [canaryRule({ headers: [{ name: 'x-canary', values: ['YES', 'on'] }], methods: ['HEAD', 'GET'] })],
        80,
      )[0],
    ).toBe(withHeaders);
  });
});
