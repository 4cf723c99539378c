import {
  DescribeLoadBalancersCommand,
  DescribeTagsCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import type { MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import {
  actionsKey,
  conditionsKey,
  desiredTargetGroups,
  resolveTargets,
  ruleMatches,
  sdkActions,
  sdkConditions,
} from '../../src/kinds/myingress/desired.ts';
import { loadBalancerName, targetGroupName } from '../../src/kinds/myingress/names.ts';
import { LoadBalancerDescriber, TagDescriber } from '../../src/providers/elbv2/describeBatcher.ts';
import { RetryableError } from '../../src/runtime/errors.ts';
import { FakeClock } from '../support/fakeClock.ts';

const elb = mockClient(ElasticLoadBalancingV2Client);
beforeEach(() => elb.reset());

/** An SDK-shaped AWS error answered with HTTP 400. */
function awsError(name: string, message: string): Error {
  return Object.assign(new Error(message), { name, $metadata: { httpStatusCode: 400 } });
}

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
}

describe('names', () => {
  it('are deterministic, unique per object and within ELBv2 limits', () => {
    const a = loadBalancerName('a-very-long-namespace-name', 'an-even-longer-ingress-name', 'uid-1');
    expect(a).toBe(loadBalancerName('a-very-long-namespace-name', 'an-even-longer-ingress-name', 'uid-1'));
    expect(a).not.toBe(
      loadBalancerName('a-very-long-namespace-name', 'an-even-longer-ingress-name', 'uid-2'),
    );
    for (const n of [a, targetGroupName('uid-1', 'a-service-with-a-long-name', 65535)]) {
      expect(n.length).toBeLessThanOrEqual(32);
      expect(n).toMatch(/^[a-z0-9][a-z0-9-]*[a-z0-9]$/);
    }
  });
});

describe('desired state', () => {
  const spec: MyIngressSpec = {
    subnets: ['subnet-1', 'subnet-2'],
    listeners: [
      { port: 80, protocol: 'HTTP', defaultAction: { forward: { service: { name: 'web', port: 80 } } } },
    ],
    rules: [
      { priority: 1, paths: ['/a'], action: { forward: { service: { name: 'web', port: 80 } } } },
      {
        priority: 2,
        hosts: ['API.example.com'],
        action: { forward: { service: { name: 'api', port: 8080, healthCheck: { path: '/ready' } } } },
      },
    ],
  };

  it('needs one target group per distinct backend, with health-check defaults', () => {
    const tgs = desiredTargetGroups(spec, 'uid');
    expect(tgs.map((t) => t.key)).toEqual(['web:80', 'api:8080']);
    expect(tgs[1]?.healthCheck).toEqual({
      path: '/ready',
      intervalSeconds: 15,
      timeoutSeconds: 5,
      healthyThresholdCount: 2,
      unhealthyThresholdCount: 2,
      matcher: '200',
    });
  });

  it('a GRPC backend (a GRPCRoute’s) needs a GRPC target group, health checked with AWS’s gRPC defaults', () => {
    const tg = desiredTargetGroups(
      {
        ...spec,
        rules: [
          {
            priority: 1,
            action: { forward: { service: { name: 'echo', port: 50051, protocolVersion: 'GRPC' } } },
          },
        ],
      },
      'uid',
    ).find((t) => t.service === 'echo');
    expect(tg).toMatchObject({
      key: 'echo:50051',
      protocolVersion: 'GRPC',
      healthCheck: { path: '/AWS.ALB/healthcheck', matcher: '12' },
    });
    expect(desiredTargetGroups(spec, 'uid')[0]?.protocolVersion).toBe('HTTP1');
  });

  it('compares rules regardless of condition order and host case', () => {
    const arns = new Map([['api:8080', 'arn:tg/api']]);
    const want = {
      conditions: sdkConditions(['api.example.com'], ['/x', '/y']),
      actions: sdkActions({ forward: { service: { name: 'api', port: 8080 } } }, arns),
    };
    const have = {
      Conditions: [
        { Field: 'path-pattern', PathPatternConfig: { Values: ['/y', '/x'] } },
        { Field: 'host-header', HostHeaderConfig: { Values: ['API.example.com'] } },
      ],
      Actions: [{ Type: 'forward' as const, TargetGroupArn: 'arn:tg/api' }],
    };
    expect(ruleMatches(have, want)).toBe(true);
    expect(
      ruleMatches({ ...have, Actions: [{ Type: 'forward', TargetGroupArn: 'arn:tg/other' }] }, want),
    ).toBe(false);
    expect(conditionsKey(have.Conditions)).toBe(conditionsKey(want.conditions));
  });

  it('fills redirect defaults so AWS’s answer compares equal', () => {
    const a = sdkActions({ redirect: { protocol: 'HTTPS' } }, new Map());
    expect(actionsKey(a)).toBe(
      actionsKey([
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
      ]),
    );
  });

  it('resolves ready endpoints on the slice port matching the Service port name', () => {
    const svc = {
      spec: {
        ports: [
          { name: 'http', port: 80, targetPort: 'http' },
          { name: 'metrics', port: 9090, targetPort: 9090 },
        ],
      },
    };
    const slices = [
      {
        ports: [
          { name: 'http', port: 8080 },
          { name: 'metrics', port: 9090 },
        ],
        endpoints: [
          { addresses: ['10.0.0.2'], conditions: { ready: true } },
          { addresses: ['10.0.0.1'], conditions: { ready: null } },
          { addresses: ['10.0.0.3'], conditions: { ready: false } },
        ],
      },
    ];
    expect(resolveTargets(svc, slices, 80)).toEqual({ port: 8080, ips: ['10.0.0.1', '10.0.0.2'] });
    expect(resolveTargets(svc, slices, 9090)).toEqual({ port: 9090, ips: ['10.0.0.1', '10.0.0.2'] });
    expect(resolveTargets(svc, slices, 443)).toBeUndefined();
    expect(resolveTargets(svc, [], 80)).toEqual({ port: 80, ips: [] });
  });
});

describe('LoadBalancerDescriber', () => {
  it('describes many load balancers with one call per 20 ARNs', async () => {
    elb.on(DescribeLoadBalancersCommand).callsFake((input: { LoadBalancerArns?: string[] }) => ({
      LoadBalancers: (input.LoadBalancerArns ?? []).map((arn) => ({
        LoadBalancerArn: arn,
        DNSName: `${arn}.elb`,
      })),
    }));
    const clock = new FakeClock();
    const d = new LoadBalancerDescriber(new ElasticLoadBalancingV2Client({ region: 'us-east-1' }), clock, 20);
    const results = Promise.all(Array.from({ length: 25 }, (_, i) => d.describe(`arn-${i}`)));
    clock.advance(20);
    await settle();
    const lbs = await results;
    expect(lbs.map((l) => l?.DNSName)).toEqual(Array.from({ length: 25 }, (_, i) => `arn-${i}.elb`));
    expect(
      elb.commandCalls(DescribeLoadBalancersCommand).map((c) => c.args[0].input.LoadBalancerArns?.length),
    ).toEqual([20, 5]);
  });

  it('answers undefined for a load balancer that no longer exists without failing the others', async () => {
    elb.on(DescribeLoadBalancersCommand).callsFake((input: { LoadBalancerArns?: string[] }) => {
      if ((input.LoadBalancerArns ?? []).includes('gone')) {
        throw awsError('LoadBalancerNotFoundException', 'One or more load balancers not found');
      }
      return { LoadBalancers: (input.LoadBalancerArns ?? []).map((arn) => ({ LoadBalancerArn: arn })) };
    });
    const clock = new FakeClock();
    const d = new LoadBalancerDescriber(new ElasticLoadBalancingV2Client({ region: 'us-east-1' }), clock, 20);
    const results = Promise.all([d.describe('a'), d.describe('gone'), d.describe('b')]);
    clock.advance(20);
    await settle();
    expect((await results).map((l) => l?.LoadBalancerArn)).toEqual(['a', undefined, 'b']);
  });
});

describe('TagDescriber', () => {
  it('asks for the tags of many resources in one call per 20 ARNs, and answers undefined for one that is gone', async () => {
    elb.on(DescribeTagsCommand).callsFake((input: { ResourceArns?: string[] }) => {
      if ((input.ResourceArns ?? []).includes('gone')) {
        throw awsError('TargetGroupNotFoundException', 'One or more target groups not found');
      }
      return {
        TagDescriptions: (input.ResourceArns ?? []).map((arn) => ({
          ResourceArn: arn,
          Tags: [{ Key: 'skylift.dev/uid', Value: `uid-of-${arn}` }],
        })),
      };
    });
    const clock = new FakeClock();
    const d = new TagDescriber(new ElasticLoadBalancingV2Client({ region: 'us-east-1' }), clock, 20);
    const arns = Array.from({ length: 22 }, (_, i) => `arn-${i}`);
    const results = Promise.all([...arns, 'gone'].map((a) => d.tags(a)));
    clock.advance(20);
    await settle();
    const tags = await results;
    expect(tags.slice(0, 22).map((t) => t?.['skylift.dev/uid'])).toEqual(arns.map((a) => `uid-of-${a}`));
    expect(tags[22]).toBeUndefined();
    // 20 + 3 (refused because of "gone"), then the 3 one by one.
    expect(elb.commandCalls(DescribeTagsCommand).map((c) => c.args[0].input.ResourceArns?.length)).toEqual([
      20, 3, 1, 1, 1,
    ]);
  });

  it('gathers the lookups that arrive while a call is under way into the next call', async () => {
    const released: (() => void)[] = [];
    elb.on(DescribeTagsCommand).callsFake(async (input: { ResourceArns?: string[] }) => {
      // The first call waits (for the rate limiter, say) until the test lets it go.
      if (released.length === 0) await new Promise<void>((r) => released.push(r));
      return { TagDescriptions: (input.ResourceArns ?? []).map((arn) => ({ ResourceArn: arn, Tags: [] })) };
    });
    const clock = new FakeClock();
    const d = new TagDescriber(new ElasticLoadBalancingV2Client({ region: 'us-east-1' }), clock, 20);
    const first = d.tags('a');
    clock.advance(20);
    await settle();
    expect(elb.commandCalls(DescribeTagsCommand)).toHaveLength(1);
    const later = Promise.all(['b', 'c', 'd'].map((a) => d.tags(a)));
    clock.advance(20);
    await settle();
    // Nothing new goes out while the first call is under way …
    expect(elb.commandCalls(DescribeTagsCommand)).toHaveLength(1);
    released[0]?.();
    await settle();
    expect(await first).toEqual({});
    clock.advance(20);
    await settle();
    // … then the three that waited go together.
    expect(await later).toEqual([{}, {}, {}]);
    expect(elb.commandCalls(DescribeTagsCommand).map((c) => c.args[0].input.ResourceArns)).toEqual([
      ['a'],
      ['b', 'c', 'd'],
    ]);
  });

  it('rejects every waiter of a call that fails for another reason with a typed error', async () => {
    elb.on(DescribeTagsCommand).rejects(awsError('Throttling', 'Rate exceeded'));
    const clock = new FakeClock();
    const d = new TagDescriber(new ElasticLoadBalancingV2Client({ region: 'us-east-1' }), clock, 20);
    const results = Promise.allSettled([d.tags('a'), d.tags('b')]);
    clock.advance(20);
    await settle();
    const settled = await results;
    expect(settled.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(elb.commandCalls(DescribeTagsCommand)).toHaveLength(1);
    const reason: unknown = (settled[0] as PromiseRejectedResult).reason;
    expect(reason).toBeInstanceOf(RetryableError);
    expect((reason as RetryableError).reason).toBe('Throttled');
    expect((reason as RetryableError).message).toContain('describe tags');
  });
});
