// What ingressDelta (src/kinds/myingress/delta.ts) finds between a
// MyIngress's spec and a load balancer as ELBv2 describes it.
import type {
  Action,
  Listener,
  LoadBalancer,
  Rule,
  TargetGroup,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { describe, expect, it } from 'vitest';
import type { OwnershipTags } from '../../src/apis/managed.ts';
import type { MyIngress, MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import {
  ingressDelta,
  type MyIngressField,
  type ObservedLoadBalancer,
  type ObservedTargetGroup,
} from '../../src/kinds/myingress/delta.ts';
import {
  desiredTargetGroups,
  listenerMatches,
  sniCertificates,
  type DesiredTargetGroup,
} from '../../src/kinds/myingress/desired.ts';
import type { DeltaEntry } from '../../src/runtime/adapter.ts';

const uid = 'uid-1';
const ours: OwnershipTags = { cluster: 'prod', owner: 'shop/web', uid };

const spec: MyIngressSpec = {
  subnets: ['subnet-1', 'subnet-2'],
  securityGroups: ['sg-1', 'sg-2'],
  ipAddressType: 'dualstack',
  attributes: { idleTimeoutSeconds: 120 },
  tags: { team: 'web' },
  listeners: [
    { port: 80, protocol: 'HTTP', defaultAction: { forward: { service: { name: 'web', port: 80 } } } },
    {
      port: 443,
      protocol: 'HTTPS',
      certificateArn: 'arn:cert/1',
      sslPolicy: 'ELBSecurityPolicy-TLS13-1-2-2021-06',
      defaultAction: { fixedResponse: { statusCode: 404 } },
    },
  ],
  rules: [
    {
      priority: 1,
      paths: ['/api/*'],
      action: { forward: { service: { name: 'api', port: 8080, healthCheck: { path: '/ready' } } } },
    },
    {
      priority: 2,
      listenerPort: 443,
      hosts: ['shop.example.com'],
      action: { redirect: { protocol: 'HTTPS' } },
    },
  ],
};

function ingress(s: MyIngressSpec): MyIngress {
  return {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'MyIngress',
    metadata: { name: 'web', namespace: 'shop', uid },
    spec: s,
  };
}

const tgArn = (key: string): string => `arn:tg/${key}`;

/** A target group as ELBv2 describes the one Skylift created for `want`. */
function targetGroup(want: DesiredTargetGroup): TargetGroup {
  const h = want.healthCheck;
  return {
    TargetGroupArn: tgArn(want.key),
    TargetGroupName: want.name,
    HealthCheckPath: h.path,
    HealthCheckIntervalSeconds: h.intervalSeconds,
    HealthCheckTimeoutSeconds: h.timeoutSeconds,
    HealthyThresholdCount: h.healthyThresholdCount,
    UnhealthyThresholdCount: h.unhealthyThresholdCount,
    Matcher: { HttpCode: h.matcher },
  };
}

const forward = (key: string): Action[] => [{ Type: 'forward', TargetGroupArn: tgArn(key) }];

const listener80: Listener = {
  ListenerArn: 'arn:listener/80',
  Port: 80,
  Protocol: 'HTTP',
  DefaultActions: forward('web:80'),
};
const listener443: Listener = {
  ListenerArn: 'arn:listener/443',
  Port: 443,
  Protocol: 'HTTPS',
  Certificates: [{ CertificateArn: 'arn:cert/1' }],
  SslPolicy: 'ELBSecurityPolicy-TLS13-1-2-2021-06',
  DefaultActions: [
    { Type: 'fixed-response', FixedResponseConfig: { StatusCode: '404', ContentType: 'text/plain' } },
  ],
};
const rule1: Rule = {
  RuleArn: 'arn:rule/1',
  Priority: '1',
  Conditions: [{ Field: 'path-pattern', PathPatternConfig: { Values: ['/api/*'] } }],
  Actions: forward('api:8080'),
};
const rule2: Rule = {
  RuleArn: 'arn:rule/2',
  Priority: '2',
  Conditions: [{ Field: 'host-header', HostHeaderConfig: { Values: ['Shop.Example.com'] } }],
  Actions: [
    {
      Type: 'redirect',
      RedirectConfig: {
        Protocol: 'HTTPS',
        Port: '#{port}',
        Host: '#{host}',
        Path: '/#{path}',
        Query: '#{query}',
        StatusCode: 'HTTP_301',
      },
    },
  ],
};

/** The load balancer as ELBv2 describes it once Skylift has made it match `spec`. */
function matching(): ObservedLoadBalancer {
  const lb: LoadBalancer = {
    LoadBalancerArn: 'arn:lb/1',
    AvailabilityZones: [{ SubnetId: 'subnet-2' }, { SubnetId: 'subnet-1' }],
    SecurityGroups: ['sg-2', 'sg-1'],
    IpAddressType: 'dualstack',
    State: { Code: 'active' },
  };
  const targetGroups: ObservedTargetGroup[] = desiredTargetGroups(spec, uid).map((want) => ({
    want,
    tg: targetGroup(want),
    registered: ['10.0.0.2:8080', '10.0.0.1:8080'],
    wanted: ['10.0.0.1:8080', '10.0.0.2:8080'],
  }));
  return {
    ownership: ours,
    lb,
    listeners: [listener80, listener443],
    rules: new Map([
      ['arn:listener/80', [rule1]],
      ['arn:listener/443', [rule2]],
    ]),
    targetGroups,
    // AWS lists some attributes at their defaults, others not at all; both match.
    attributes: new Map([
      ['idle_timeout.timeout_seconds', '120'],
      ['routing.http2.enabled', 'true'],
    ]),
    tags: {
      team: 'web',
      'skylift.dev/user-tags': 'team',
      'skylift.dev/uid': uid,
      'aws:cloudformation:stack': 'x',
    },
  };
}

/** `o` with the target group for `key` changed by `f`. */
function withTargetGroup(
  o: ObservedLoadBalancer,
  key: string,
  f: (t: ObservedTargetGroup) => ObservedTargetGroup,
): ObservedLoadBalancer {
  return { ...o, targetGroups: o.targetGroups.map((t) => (t.want.key === key ? f(t) : t)) };
}

/** `o` with the rules of a listener replaced. */
function withRules(o: ObservedLoadBalancer, listenerArn: string, rules: Rule[]): ObservedLoadBalancer {
  return { ...o, rules: new Map([...o.rules, [listenerArn, rules]]) };
}

describe('ingressDelta', () => {
  it('is empty for a load balancer that matches the spec', () => {
    expect(ingressDelta(ingress(spec), ours, matching())).toEqual([]);
  });

  it.each<{
    reason: string;
    observed: (o: ObservedLoadBalancer) => ObservedLoadBalancer;
    spec?: (s: MyIngressSpec) => MyIngressSpec;
  }>([
    {
      reason: 'targets of an unknown Service are left alone',
      observed: (o) => withTargetGroup(o, 'web:80', (t) => ({ ...t, registered: [], wanted: undefined })),
    },
    {
      reason: 'a spec without security groups leaves them alone',
      observed: (o) => ({ ...o, lb: { ...o.lb, SecurityGroups: ['sg-9'] } }),
      spec: ({ securityGroups: _, ...s }) => s,
    },
    {
      reason: 'ipv4 is the default on both sides',
      observed: (o) => ({ ...o, lb: { ...o.lb, IpAddressType: undefined } }),
      spec: ({ ipAddressType: _, ...s }) => s,
    },
    {
      reason: 'tags AWS has beyond the spec’s are not a difference',
      observed: (o) => ({ ...o, tags: { ...o.tags, cost: 'center-1' } }),
    },
  ])('stays empty: $reason', ({ observed, spec: specOf }) => {
    const s = specOf?.(spec) ?? spec;
    expect(ingressDelta(ingress(s), ours, observed(matching()))).toEqual([]);
  });

  it.each<{
    reason: string;
    observed: (o: ObservedLoadBalancer) => ObservedLoadBalancer;
    known?: ReadonlyMap<string, { tg?: TargetGroup; registered: readonly string[] }>;
    want: DeltaEntry<MyIngressField>[];
  }>([
    {
      reason: 'no ownership tags (adoption)',
      observed: (o) => ({ ...o, ownership: undefined }),
      want: [{ field: 'ownership', change: 'ownership tags missing' }],
    },
    {
      reason: "another object's ownership tags",
      observed: (o) => ({ ...o, ownership: { ...ours, uid: 'uid-2' } }),
      want: [{ field: 'ownership', change: 'ownership tags missing' }],
    },
    {
      reason: 'a target group missing (listeners and rules wait for it)',
      observed: (o) => withTargetGroup(o, 'api:8080', (t) => ({ ...t, tg: undefined })),
      want: [{ field: 'targetGroups', change: 'target group for api:8080 missing' }],
    },
    {
      reason: 'a target not registered yet',
      observed: (o) => withTargetGroup(o, 'web:80', (t) => ({ ...t, registered: ['10.0.0.1:8080'] })),
      want: [{ field: 'targets', change: 'targets of web:80: 1 → 2' }],
    },
    {
      reason: 'targets AWS still holds as Skylift left them, the endpoints having moved: follows, not drift',
      observed: (o) => withTargetGroup(o, 'web:80', (t) => ({ ...t, registered: ['10.0.0.1:8080'] })),
      known: new Map([['web:80', { registered: ['10.0.0.1:8080'] }]]),
      want: [{ field: 'targets', change: 'targets of web:80: 1 → 2', follows: true }],
    },
    {
      reason: 'targets that differ from what Skylift left (removed by hand): drift',
      observed: (o) => withTargetGroup(o, 'web:80', (t) => ({ ...t, registered: ['10.0.0.1:8080'] })),
      known: new Map([['web:80', { registered: ['10.0.0.1:8080', '10.0.0.2:8080'] }]]),
      want: [{ field: 'targets', change: 'targets of web:80: 1 → 2' }],
    },
    {
      reason: 'the targets Skylift left, but in a group since replaced (another ARN): drift',
      observed: (o) => withTargetGroup(o, 'web:80', (t) => ({ ...t, registered: ['10.0.0.1:8080'] })),
      known: new Map([['web:80', { tg: { TargetGroupArn: 'arn:replaced' }, registered: ['10.0.0.1:8080'] }]]),
      want: [{ field: 'targets', change: 'targets of web:80: 1 → 2' }],
    },
    {
      reason: 'a health check path changed in AWS',
      observed: (o) =>
        withTargetGroup(o, 'api:8080', (t) => ({ ...t, tg: { ...t.tg, HealthCheckPath: '/' } })),
      want: [{ field: 'healthChecks', change: 'health check of api:8080' }],
    },
    {
      reason: 'a health check matcher changed in AWS',
      observed: (o) =>
        withTargetGroup(o, 'web:80', (t) => ({ ...t, tg: { ...t.tg, Matcher: { HttpCode: '200-399' } } })),
      want: [{ field: 'healthChecks', change: 'health check of web:80' }],
    },
    {
      reason: 'a listener missing (and so its rules)',
      observed: (o) => ({ ...o, listeners: [listener80] }),
      want: [{ field: 'listeners', change: 'listener 443 missing' }],
    },
    {
      reason: 'a listener not in the spec',
      observed: (o) => ({
        ...o,
        listeners: [...o.listeners, { ...listener80, ListenerArn: 'arn:listener/8080', Port: 8080 }],
      }),
      want: [{ field: 'listeners', change: 'listener 8080 not wanted' }],
    },
    {
      reason: 'a listener forwarding elsewhere',
      observed: (o) => ({
        ...o,
        listeners: [{ ...listener80, DefaultActions: forward('api:8080') }, listener443],
      }),
      want: [{ field: 'listeners', change: 'listener 80 changed' }],
    },
    {
      reason: 'a listener with another certificate',
      observed: (o) => ({
        ...o,
        listeners: [listener80, { ...listener443, Certificates: [{ CertificateArn: 'arn:cert/2' }] }],
      }),
      want: [{ field: 'listeners', change: 'listener 443 changed' }],
    },
    {
      reason: 'a listener with an SNI certificate the spec does not name',
      observed: (o) => ({
        ...o,
        listeners: [
          listener80,
          {
            ...listener443,
            Certificates: [
              { CertificateArn: 'arn:cert/1', IsDefault: true },
              { CertificateArn: 'arn:cert/9', IsDefault: false },
            ],
          },
        ],
      }),
      want: [{ field: 'listeners', change: 'listener 443 changed' }],
    },
    {
      reason: 'a listener with another TLS policy',
      observed: (o) => ({
        ...o,
        listeners: [listener80, { ...listener443, SslPolicy: 'ELBSecurityPolicy-2016-08' }],
      }),
      want: [{ field: 'listeners', change: 'listener 443 changed' }],
    },
    {
      reason: 'a rule missing',
      observed: (o) => withRules(o, 'arn:listener/80', []),
      want: [{ field: 'rules', change: 'rule 1 missing' }],
    },
    {
      reason: 'a rule not in the spec',
      observed: (o) =>
        withRules(o, 'arn:listener/443', [rule2, { ...rule2, RuleArn: 'arn:rule/7', Priority: '7' }]),
      want: [{ field: 'rules', change: 'rule 7 not wanted' }],
    },
    {
      reason: 'a rule on the wrong listener',
      observed: (o) => ({
        ...o,
        rules: new Map([
          ['arn:listener/80', [rule1, rule2]],
          ['arn:listener/443', []],
        ]),
      }),
      want: [
        { field: 'rules', change: 'rule 2 not wanted' },
        { field: 'rules', change: 'rule 2 missing' },
      ],
    },
    {
      reason: 'a rule with other conditions',
      observed: (o) =>
        withRules(o, 'arn:listener/80', [
          { ...rule1, Conditions: [{ Field: 'path-pattern', PathPatternConfig: { Values: ['/v2/*'] } }] },
        ]),
      want: [{ field: 'rules', change: 'rule 1 changed' }],
    },
    {
      reason: 'a rule with another action',
      observed: (o) => withRules(o, 'arn:listener/80', [{ ...rule1, Actions: forward('web:80') }]),
      want: [{ field: 'rules', change: 'rule 1 changed' }],
    },
    {
      reason: 'an attribute changed in AWS',
      observed: (o) => ({
        ...o,
        attributes: new Map([...o.attributes, ['idle_timeout.timeout_seconds', '60']]),
      }),
      want: [{ field: 'attributes', change: 'attribute idle_timeout.timeout_seconds' }],
    },
    {
      reason: 'an attribute left out by AWS but set away from its default',
      observed: (o) => ({
        ...o,
        attributes: new Map([...o.attributes, ['deletion_protection.enabled', 'true']]),
      }),
      want: [{ field: 'attributes', change: 'attribute deletion_protection.enabled' }],
    },
    {
      reason: 'other security groups',
      observed: (o) => ({ ...o, lb: { ...o.lb, SecurityGroups: ['sg-1', 'sg-3'] } }),
      want: [{ field: 'securityGroups', change: 'security groups' }],
    },
    {
      reason: 'one security group fewer',
      observed: (o) => ({ ...o, lb: { ...o.lb, SecurityGroups: ['sg-1'] } }),
      want: [{ field: 'securityGroups', change: 'security groups' }],
    },
    {
      reason: 'other subnets than the spec lists',
      observed: (o) => ({
        ...o,
        lb: { ...o.lb, AvailabilityZones: [{ SubnetId: 'subnet-1' }, { SubnetId: 'subnet-9' }] },
      }),
      want: [{ field: 'subnets', change: 'subnets' }],
    },
    {
      reason: 'another IP address type',
      observed: (o) => ({ ...o, lb: { ...o.lb, IpAddressType: 'ipv4' } }),
      want: [{ field: 'ipAddressType', change: 'ip address type' }],
    },
    {
      reason: 'a tag missing',
      observed: (o) => ({ ...o, tags: { 'skylift.dev/uid': uid } }),
      want: [{ field: 'tags', change: 'tags' }],
    },
    {
      reason: 'a tag with another value',
      observed: (o) => ({ ...o, tags: { ...o.tags, team: 'ops' } }),
      want: [{ field: 'tags', change: 'tags' }],
    },
    {
      reason: 'a tag Skylift applied that the spec dropped',
      observed: (o) => ({ ...o, tags: { ...o.tags, tier: 'gold', 'skylift.dev/user-tags': 'team,tier' } }),
      want: [{ field: 'tags', change: 'tags' }],
    },
    {
      reason: "a target group's tag Skylift applied that the spec dropped",
      observed: (o) =>
        withTargetGroup(o, 'web:80', (t) => ({
          ...t,
          tags: { ...o.tags, tier: 'gold', 'skylift.dev/user-tags': 'team,tier' },
        })),
      want: [{ field: 'tags', change: 'tags of target group web:80' }],
    },
    {
      reason: "nothing in a target group's tags as the spec has them, or in one that is not this object's",
      observed: (o) =>
        withTargetGroup(
          withTargetGroup(o, 'web:80', (t) => ({ ...t, tags: o.tags })),
          'api:8080',
          (t) => ({
            ...t,
            tags: { tier: 'gold', 'skylift.dev/user-tags': 'tier' },
          }),
        ),
      want: [],
    },
  ])('finds $reason', ({ observed, known, want }) => {
    expect(ingressDelta(ingress(spec), ours, observed(matching()), known)).toEqual(want);
  });

  it('finds a spec change as well as drift: a new attribute and a new listener', () => {
    const changed: MyIngressSpec = {
      ...spec,
      attributes: { ...spec.attributes, http2: false },
      listeners: [
        ...(spec.listeners ?? []),
        {
          port: 8443,
          protocol: 'HTTPS',
          certificateArn: 'arn:cert/1',
          defaultAction: { fixedResponse: { statusCode: 503 } },
        },
      ],
    };
    expect(ingressDelta(ingress(changed), ours, matching())).toEqual([
      { field: 'listeners', change: 'listener 8443 missing' },
      { field: 'attributes', change: 'attribute routing.http2.enabled' },
    ]);
  });

  it('lists every difference at once, in a stable order', () => {
    const o = matching();
    const drifted: ObservedLoadBalancer = {
      ...withTargetGroup(o, 'web:80', (t) => ({ ...t, registered: [] })),
      ownership: undefined,
      lb: { ...o.lb, SecurityGroups: [], IpAddressType: 'ipv4' },
      tags: {},
    };
    expect(ingressDelta(ingress(spec), ours, drifted).map((d) => d.field)).toEqual([
      'ownership',
      'targets',
      'securityGroups',
      'ipAddressType',
      'tags',
    ]);
  });
});

describe('listenerMatches: SNI certificates', () => {
  const base = { protocol: 'HTTPS', certificateArn: 'arn:cert/1', actions: [] };
  const described = (arns: string[]): Listener => ({
    Protocol: 'HTTPS',
    DefaultActions: [],
    Certificates: [
      { CertificateArn: 'arn:cert/1', IsDefault: true },
      ...arns.map((a) => ({ CertificateArn: a, IsDefault: false })),
    ],
  });
  it('compares them as a set, in whatever order AWS lists them, the default apart', () => {
    expect(
      listenerMatches(described(['arn:cert/3', 'arn:cert/2']), {
        ...base,
        additionalCertificateArns: ['arn:cert/2', 'arn:cert/3'],
      }),
    ).toBe(true);
    expect(
      listenerMatches(described(['arn:cert/2']), {
        ...base,
        additionalCertificateArns: ['arn:cert/2', 'arn:cert/3'],
      }),
    ).toBe(false);
    expect(listenerMatches(described([]), { ...base, additionalCertificateArns: [] })).toBe(true);
    // The default listed last (IsDefault says which): still the default.
    const reordered: Listener = {
      ...described([]),
      Certificates: [
        { CertificateArn: 'arn:cert/2', IsDefault: false },
        { CertificateArn: 'arn:cert/1', IsDefault: true },
      ],
    };
    expect(listenerMatches(reordered, { ...base, additionalCertificateArns: ['arn:cert/2'] })).toBe(true);
    expect(sniCertificates(reordered)).toEqual(['arn:cert/2']);
  });
});
