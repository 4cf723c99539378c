import { describe, expect, it } from 'vitest';
import {
  AwsRetryableError,
  AwsTerminalError,
  classifyAwsError,
  toTypedAwsError,
} from '../../src/providers/aws/errors.ts';
import { elbv2ErrorTable } from '../../src/providers/elbv2/errors.ts';
import { AdaptiveRateLimiter } from '../../src/providers/aws/rateLimiter.ts';
import { FakeClock } from '../support/fakeClock.ts';

function sdkError(name: string, status?: number): Error {
  return Object.assign(new Error(`${name} happened`), { name, $metadata: { httpStatusCode: status } });
}

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
      want: 'transient',
    },
    { reason: 'validation', err: sdkError('ValidationError', 400), want: 'terminal' },
    { reason: 'access denied', err: sdkError('AccessDenied', 403), want: 'terminal' },
    { reason: 'unknown 4xx', err: sdkError('LoadBalancerNotFound', 400), want: 'unknown' },
    { reason: 'not an error at all', err: 'text', want: 'unknown' },
  ])('$reason → $want', ({ err, want }) => {
    expect(classifyAwsError(err)).toBe(want);
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
