import { describe, expect, it } from 'vitest';
import { ThrottleWindow } from '../../src/providers/aws/throttleWindow.ts';
import { throttlingMessage } from '../../src/tenancy/directory.ts';

const minute = 60_000;

describe('ThrottleWindow', () => {
  it('calls a burst within one minute not sustained, however many throttles', () => {
    const w = new ThrottleWindow();
    for (let i = 0; i < 500; i++) w.note('route53', i % 2 === 0, 10 * minute + i);
    expect(w.sustained(10 * minute + 1000)).toEqual([]);
  });

  it('calls throttles in 3 of the last 5 minutes sustained, with the counts of the window', () => {
    const w = new ThrottleWindow();
    for (const m of [10, 12, 14]) {
      w.note('route53', true, m * minute);
      w.note('route53', false, m * minute + 1);
    }
    w.note('rds', true, 14 * minute);
    expect(w.sustained(14 * minute + 5)).toEqual([
      { service: 'route53', minutes: 3, calls: 6, throttles: 3 },
    ]);
    // A minute later the first of the three has left the window.
    expect(w.sustained(15 * minute)).toEqual([]);
  });

  it('forgets minutes older than the window as it notes', () => {
    const w = new ThrottleWindow();
    for (let m = 0; m < 100; m++) w.note('ec2', true, m * minute);
    expect(w.sustained(99 * minute)).toEqual([{ service: 'ec2', minutes: 5, calls: 5, throttles: 5 }]);
  });
});

describe('throttlingMessage', () => {
  it('is undefined within budget', () => {
    expect(throttlingMessage({ account: '111122223333', sustained: [], ratePerSecond: {} })).toBeUndefined();
  });
  it('names the account, the service, the counts, the rate now and what to do', () => {
    const m = throttlingMessage({
      account: '111122223333',
      sustained: [{ service: 'route53', minutes: 4, calls: 900, throttles: 40 }],
      ratePerSecond: { route53: 3.43 },
    });
    expect(m).toBe(
      'account 111122223333: route53 throttled 40 of 900 calls in 4 of the last 5 minutes (Skylift now sends at most 3.4/s): something else in the account uses the same quota, or the quota is lower than spec.aws.requestsPerSecond (or the default) assumes; lower spec.aws.requestsPerSecond to share it, or ask AWS to raise the quota',
    );
    expect(
      throttlingMessage({
        account: 'own',
        sustained: [{ service: 'rds', minutes: 3, calls: 3, throttles: 3 }],
        ratePerSecond: {},
      }),
    ).toMatch(/^the operator's own account: rds throttled 3 of 3 calls/);
  });
});
