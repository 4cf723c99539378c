import { describe, expect, it } from 'vitest';
import { ownershipTagMap, type OwnershipTags } from '../../src/apis/managed.ts';
import {
  AwsRetryableError,
  AwsTerminalError,
  baseErrorCode,
  classifyAwsError,
  hasErrorCode,
  retryReasonOf,
  toTypedAwsError,
} from '../../src/providers/aws/errors.ts';
import { ownedTagList, tagList, tagMap } from '../../src/providers/aws/tags.ts';
import { elbv2ErrorTable } from '../../src/providers/elbv2/errors.ts';
import { AdaptiveRateLimiter } from '../../src/providers/aws/rateLimiter.ts';
import { FakeClock } from '../support/fakeClock.ts';

function sdkError(name: string, status?: number): Error {
  return Object.assign(new Error(`${name} happened`), { name, $metadata: { httpStatusCode: status } });
}

describe('refused credentials', () => {
  it('are retried with backoff, with a reason and a message that say what to check', () => {
    const e = toTypedAwsError('create load balancer x', sdkError('InvalidClientTokenId', 403));
    expect(e).toBeInstanceOf(AwsRetryableError);
    expect(e instanceof AwsRetryableError ? e.reason : '').toBe('AWSCredentials');
    expect(e.message).toContain('create load balancer x: InvalidClientTokenId');
    expect(e.message).toContain('the AWS credentials the operator uses were refused');
  });
});

describe('retryReasonOf', () => {
  // Issue 27, item 18: the Route 53 change batcher showed refused credentials as AWSError.
  it.each([
    { cls: 'throttling', want: 'Throttled' },
    { cls: 'credentials', want: 'AWSCredentials' },
    { cls: 'unreachable', want: 'AWSUnreachable' },
    { cls: 'transient', want: 'AWSError' },
    { cls: 'unknown', want: 'AWSError' },
  ] as const)('$cls is shown as $want, as toTypedAwsError shows it', ({ cls, want }) => {
    expect(retryReasonOf(cls)).toBe(want);
  });
});

describe('an AWS endpoint that does not answer', () => {
  it('is retried with reason AWSUnreachable and a message that says so', () => {
    const e = toTypedAwsError(
      'describe instance db-1',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4566'), { code: 'ECONNREFUSED' }),
    );
    expect(e).toBeInstanceOf(AwsRetryableError);
    expect(e instanceof AwsRetryableError ? e.reason : '').toBe('AWSUnreachable');
    expect(e.message).toContain('describe instance db-1: connect ECONNREFUSED 127.0.0.1:4566');
    expect(e.message).toContain('the AWS endpoint did not answer');
  });
});

describe('classifyAwsError', () => {
  it.each([
    { reason: 'Route 53 throttling', err: sdkError('Throttling', 400), want: 'throttling' },
    { reason: 'Route 53 prior request', err: sdkError('PriorRequestNotComplete', 400), want: 'throttling' },
    { reason: 'EC2 request limit', err: sdkError('RequestLimitExceeded', 503), want: 'throttling' },
    { reason: 'HTTP 429 without a known code', err: sdkError('Whatever', 429), want: 'throttling' },
    { reason: 'service unavailable', err: sdkError('ServiceUnavailable', 503), want: 'transient' },
    { reason: 'unknown 5xx', err: sdkError('Mystery', 502), want: 'transient' },
    {
      reason: 'connection reset',
      err: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
      want: 'unreachable',
    },
    // Issue 14, item 6: an endpoint that does not answer is its own class (reason AWSUnreachable).
    {
      reason: 'connection refused',
      err: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      want: 'unreachable',
    },
    {
      reason: "the SDK's request timeout",
      err: Object.assign(new Error('Connection timed out after 500 ms'), { name: 'TimeoutError' }),
      want: 'unreachable',
    },
    { reason: 'validation', err: sdkError('ValidationError', 400), want: 'terminal' },
    { reason: 'access denied', err: sdkError('AccessDenied', 403), want: 'terminal' },
    // Issue 14, item 9: refused credentials are fixed without a spec change, so they must be retried.
    { reason: 'an unknown access key', err: sdkError('InvalidClientTokenId', 403), want: 'credentials' },
    {
      reason: 'an unrecognized client',
      err: sdkError('UnrecognizedClientException', 400),
      want: 'credentials',
    },
    { reason: 'a bad signature', err: sdkError('SignatureDoesNotMatch', 403), want: 'credentials' },
    { reason: 'an expired token', err: sdkError('ExpiredToken', 403), want: 'credentials' },
    { reason: 'an expired STS token', err: sdkError('ExpiredTokenException', 400), want: 'credentials' },
    { reason: 'unknown 4xx', err: sdkError('LoadBalancerNotFound', 400), want: 'unknown' },
    { reason: 'not an error at all', err: 'text', want: 'unknown' },
  ])('$reason → $want', ({ err, want }) => {
    expect(classifyAwsError(err)).toBe(want);
  });

  it('matches a table entry with or without the Fault/Exception suffix (RDS answers one, its SDK model names the other)', () => {
    const rds = { terminal: ['DBSnapshotNotFound', 'DBSubnetGroupNotFoundFault'] };
    expect(classifyAwsError(sdkError('DBSnapshotNotFoundFault', 404), rds)).toBe('terminal');
    expect(classifyAwsError(sdkError('DBSnapshotNotFound', 404), rds)).toBe('terminal');
    expect(classifyAwsError(sdkError('DBSubnetGroupNotFound', 400), rds)).toBe('terminal');
    expect(classifyAwsError(sdkError('DBSnapshotAlreadyExistsFault', 400), rds)).toBe('unknown');
  });

  it('lets a service table override the generic one', () => {
    expect(
      classifyAwsError(sdkError('TooManyLoadBalancers', 400), { terminal: ['TooManyLoadBalancers'] }),
    ).toBe('terminal');
  });

  it.each(['SubnetNotFound', 'InvalidSubnetID.NotFound', 'InvalidSecurityGroupID.NotFound'])(
    'ELBv2: %s (a subnet or security group that does not exist) is terminal, not retried',
    (code) => {
      expect(classifyAwsError(sdkError(code, 400), elbv2ErrorTable)).toBe('terminal');
      expect(classifyAwsError(sdkError(code, 400))).toBe('unknown');
    },
  );

  it('turns errors into typed errors naming the step and keeping the code', () => {
    const t = toTypedAwsError('create load balancer', sdkError('ValidationError', 400));
    expect(t).toBeInstanceOf(AwsTerminalError);
    expect(t.message).toBe('create load balancer: ValidationError happened');
    expect(toTypedAwsError('x', sdkError('AccessDenied')).message).toContain('AccessDenied');
    expect(toTypedAwsError('x', Object.assign(new Error('denied'), { name: 'AccessDenied' })).message).toBe(
      'x: AccessDenied: denied',
    );
    expect(t.code).toBe('ValidationError');
    const r = toTypedAwsError('list records', sdkError('Throttling', 400));
    expect(r).toBeInstanceOf(AwsRetryableError);
    expect((r as AwsRetryableError).reason).toBe('Throttled');
  });
});

describe('AdaptiveRateLimiter', () => {
  it.each([
    { reason: 'one throttle', throttles: [0], rate: 5.6 },
    { reason: 'a burst of throttles in one window counts once', throttles: [0, 10, 200, 999], rate: 5.6 },
    { reason: 'throttles in separate windows each count', throttles: [0, 1000, 2000], rate: 8 * 0.7 ** 3 },
    { reason: 'never below the floor', throttles: [0, 1000, 2000, 3000, 4000, 5000, 6000, 7000], rate: 1 },
  ])('decreases once per congestion window: $reason', ({ throttles, rate }) => {
    const clock = new FakeClock();
    const l = new AdaptiveRateLimiter(clock, { maxPerSecond: 8, minPerSecond: 1, burst: 1 });
    let at = 0;
    for (const t of throttles) {
      clock.advance(t - at);
      at = t;
      l.onThrottle();
    }
    expect(l.ratePerSecond).toBeCloseTo(rate, 6);
  });

  it('recovers on success (maxPerSecond / 20 each) up to the ceiling, not beyond', () => {
    const clock = new FakeClock();
    const l = new AdaptiveRateLimiter(clock, { maxPerSecond: 8, minPerSecond: 1, burst: 1, decrease: 0.5 });
    l.onThrottle();
    expect(l.ratePerSecond).toBe(4);
    for (let i = 0; i < 10; i++) l.onSuccess();
    expect(l.ratePerSecond).toBeCloseTo(8, 6);
    for (let i = 0; i < 10; i++) l.onSuccess();
    expect(l.ratePerSecond).toBe(8);
  });

  it('makes callers wait (on the injected clock) once the burst is spent', async () => {
    const clock = new FakeClock();
    const l = new AdaptiveRateLimiter(clock, { maxPerSecond: 2, minPerSecond: 1, burst: 1 });
    await l.acquire();
    let done = false;
    const second = l.acquire().then(() => (done = true));
    await Promise.resolve();
    expect(done).toBe(false);
    clock.advance(499);
    await Promise.resolve();
    expect(done).toBe(false);
    clock.advance(1);
    await second;
    expect(done).toBe(true);
  });
});

describe('baseErrorCode and hasErrorCode', () => {
  it.each([
    { reason: 'a Fault suffix', err: sdkError('DBInstanceNotFoundFault', 404), want: 'DBInstanceNotFound' },
    {
      reason: 'an Exception suffix',
      err: sdkError('LoadBalancerNotFoundException', 400),
      want: 'LoadBalancerNotFound',
    },
    { reason: 'no suffix', err: sdkError('DBInstanceNotFound', 404), want: 'DBInstanceNotFound' },
    {
      reason: 'only a trailing suffix',
      err: sdkError('FaultExceptionFault', 400),
      want: 'FaultException',
    },
    {
      reason: 'a network code',
      err: Object.assign(new Error('reset'), { code: 'ECONNRESET' }),
      want: 'ECONNRESET',
    },
    { reason: 'a plain Error', err: new Error('boom'), want: undefined },
    { reason: 'not an error', err: 'DBInstanceNotFoundFault', want: undefined },
  ])('$reason → $want', ({ err, want }) => {
    expect(baseErrorCode(err)).toBe(want);
  });

  it.each([
    {
      reason: 'the code with its Fault suffix',
      err: sdkError('DBInstanceNotFoundFault', 404),
      codes: ['DBInstanceNotFound'],
      want: true,
    },
    {
      reason: 'the code with its Exception suffix',
      err: sdkError('TargetGroupNotFoundException', 400),
      codes: ['LoadBalancerNotFound', 'TargetGroupNotFound'],
      want: true,
    },
    {
      reason: 'the bare code',
      err: sdkError('DBSnapshotNotFound', 404),
      codes: ['DBSnapshotNotFound'],
      want: true,
    },
    {
      reason: 'another code',
      err: sdkError('DBSubnetGroupNotFoundFault', 404),
      codes: ['DBInstanceNotFound'],
      want: false,
    },
    {
      reason: 'a prefix of the code is not the code',
      err: sdkError('DBInstanceNotFoundFault', 404),
      codes: ['DBInstance'],
      want: false,
    },
    { reason: 'no codes asked for', err: sdkError('DBInstanceNotFoundFault', 404), codes: [], want: false },
    { reason: 'an error without a code', err: new Error('boom'), codes: ['Error'], want: false },
  ])('$reason → $want', ({ err, codes, want }) => {
    expect(hasErrorCode(err, ...codes)).toBe(want);
  });
});

describe('AWS tags', () => {
  const ownership: OwnershipTags = { cluster: 'prod', owner: 'shop/web', uid: 'uid-1' };

  it('reads a tag list as a map, missing keys and values as empty', () => {
    expect(tagMap([{ Key: 'team', Value: 'web' }, { Key: 'empty' }, { Value: 'orphan' }])).toEqual({
      team: 'web',
      empty: '',
      '': 'orphan',
    });
    expect(tagMap(undefined)).toEqual({});
  });

  it('writes a map as a tag list that reads back to the same map', () => {
    const tags = { team: 'web', env: 'prod' };
    expect(tagList(tags)).toEqual([
      { Key: 'team', Value: 'web' },
      { Key: 'env', Value: 'prod' },
    ]);
    expect(tagMap(tagList(tags))).toEqual(tags);
  });

  it.each([
    { reason: 'no user tags', user: undefined, extra: {} },
    {
      reason: 'user tags beside them, with the record of their keys',
      user: { team: 'web' },
      extra: { team: 'web', 'skylift.dev/user-tags': 'team' },
    },
    {
      reason: 'user tags with the same keys lose',
      user: { 'skylift.dev/uid': 'forged', 'skylift.dev/owner': 'me/mine', team: 'web' },
      extra: { team: 'web', 'skylift.dev/user-tags': 'team' },
    },
  ])('puts the ownership tags on the list, and they win: $reason', ({ user, extra }) => {
    const list = ownedTagList(user, ownership);
    expect(tagMap(list)).toEqual({ ...extra, ...ownershipTagMap(ownership) });
    expect(new Set(list.map((t) => t.Key)).size).toBe(list.length);
  });
});
