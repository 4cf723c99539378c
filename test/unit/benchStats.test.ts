// The bench's pure measurement helpers: percentiles, counter arithmetic,
// /proc parsing and Prometheus text parsing.
import { describe, expect, it } from 'vitest';
import { cpuTicks, statusField } from '../../bench/lib/procStats.ts';
import { kubeRequestsByVerb, reconcileCount, samplesOf } from '../../bench/lib/promText.ts';
import { counterDelta, distribution, percentile, perUnit, ratio, total } from '../../bench/lib/stats.ts';
import { forEachLimit } from '../../bench/lib/concurrency.ts';

describe('percentile (nearest rank)', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => 100 - i); // 100..1, unsorted
  it.each([
    { reason: 'median of 1..100 is the 50th value', values: hundred, p: 50, want: 50 },
    { reason: 'p95 of 1..100 is the 95th value', values: hundred, p: 95, want: 95 },
    { reason: 'p100 is the maximum', values: hundred, p: 100, want: 100 },
    { reason: 'one value is every percentile', values: [7], p: 95, want: 7 },
    { reason: 'rounds the rank up: p50 of four values is the second', values: [4, 1, 3, 2], p: 50, want: 2 },
    { reason: 'p95 of ten values is the tenth', values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], p: 95, want: 10 },
    { reason: 'a tiny p is the minimum', values: [5, 3, 9], p: 0.1, want: 3 },
  ])('$reason', ({ values, p, want }) => {
    expect(percentile(values, p)).toBe(want);
  });

  it('does not reorder its input', () => {
    const values = [3, 1, 2];
    percentile(values, 50);
    expect(values).toEqual([3, 1, 2]);
  });

  it.each([
    { reason: 'no values', values: [], p: 50, error: /no values/ },
    { reason: 'p = 0', values: [1], p: 0, error: /p must be in/ },
    { reason: 'p > 100', values: [1], p: 101, error: /p must be in/ },
  ])('throws for $reason', ({ values, p, error }) => {
    expect(() => percentile(values, p)).toThrow(error);
  });
});

describe('distribution and counters', () => {
  it('summarises p50, p95 and max; an empty list is all zero', () => {
    expect(distribution([10, 30, 20, 40])).toEqual({ count: 4, p50: 20, p95: 40, max: 40 });
    expect(distribution([])).toEqual({ count: 0, p50: 0, p95: 0, max: 0 });
  });

  it('diffs counters per key, counting new keys from zero and dropping unchanged ones', () => {
    expect(
      counterDelta(
        { 'route53:GetChange': 2, 'rds:X': 5 },
        { 'route53:GetChange': 5, 'rds:X': 5, 'ec2:Y': 1 },
      ),
    ).toEqual({ 'route53:GetChange': 3, 'ec2:Y': 1 });
    expect(total({ a: 2, b: 3 })).toBe(5);
  });

  it.each([
    { reason: 'rounds to three decimals', count: 1, per: 3, want: 0.333 },
    { reason: 'nothing to divide among is 0, not Infinity', count: 4, per: 0, want: 0 },
  ])('perUnit $reason', ({ count, per, want }) => {
    expect(perUnit(count, per)).toBe(want);
  });

  it.each([
    { reason: 'growth', a: 100, b: 1000, want: 10 },
    { reason: 'rounds to two decimals', a: 3, b: 10, want: 3.33 },
    { reason: 'a zero base has no ratio', a: 0, b: 5, want: null },
    { reason: 'a missing side has no ratio', a: undefined, b: 5, want: null },
  ])('ratio: $reason', ({ a, b, want }) => {
    expect(ratio(a, b)).toBe(want);
  });
});

describe('/proc parsing', () => {
  const status =
    'Name:\tnode\nVmPeak:\t 1200000 kB\nVmHWM:\t  262144 kB\nVmRSS:\t  131072 kB\nThreads:\t11\n';
  it('reads kB fields of /proc/<pid>/status as bytes', () => {
    expect(statusField(status, 'VmHWM')).toBe(262144 * 1024);
    expect(statusField(status, 'VmRSS')).toBe(131072 * 1024);
    expect(() => statusField(status, 'VmSwap')).toThrow(/no VmSwap/);
  });

  it('sums utime and stime from /proc/<pid>/stat, even when the command name has spaces and parentheses', () => {
    const fields = (comm: string): string =>
      `4242 (${comm}) S 1 4242 4242 0 -1 4194560 5000 0 0 0 250 75 0 0 20 0 11 0 123456 1000000 30000`;
    expect(cpuTicks(fields('node'))).toBe(325);
    expect(cpuTicks(fields('my (odd) name'))).toBe(325);
    expect(() => cpuTicks('garbage')).toThrow(/malformed/);
  });
});

describe('Prometheus text', () => {
  const text = [
    '# HELP skylift_kube_api_requests_total Kubernetes API requests by verb and status code',
    '# TYPE skylift_kube_api_requests_total counter',
    'skylift_kube_api_requests_total{verb="PATCH",code="200"} 40',
    'skylift_kube_api_requests_total{verb="PATCH",code="409"} 2',
    'skylift_kube_api_requests_total{verb="POST",code="201"} 20',
    'skylift_kube_api_requests_total{verb="GET",code="200"} 7',
    'skylift_kube_api_requests_total_other{verb="PATCH"} 1000',
    'controller_runtime_reconcile_total{controller="dnsrecord",result="success"} 60',
    'controller_runtime_reconcile_total{controller="dnsrecord",result="requeue_after"} 15',
    'controller_runtime_reconcile_time_seconds_count{controller="dnsrecord"} 99',
    'workqueue_depth 3',
  ].join('\n');

  it('sums requests per verb over status codes, ignoring metrics that only share the prefix', () => {
    expect(kubeRequestsByVerb(text)).toEqual({ PATCH: 42, POST: 20, GET: 7 });
  });

  it('counts reconciles over controllers and results', () => {
    expect(reconcileCount(text)).toBe(75);
  });

  it('reads unlabelled samples and unescapes label values', () => {
    expect(samplesOf(text, 'workqueue_depth')).toEqual([{ labels: {}, value: 3 }]);
    expect(samplesOf('m{a="x\\"y\\\\z"} 1', 'm')).toEqual([{ labels: { a: 'x"y\\z' }, value: 1 }]);
  });
});

describe('forEachLimit', () => {
  it('visits every item once and never runs more than the limit at once', async () => {
    let inFlight = 0;
    let peak = 0;
    const seen: number[] = [];
    await forEachLimit([1, 2, 3, 4, 5, 6, 7], 3, async (item) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await Promise.resolve();
      seen.push(item);
      inFlight--;
    });
    expect(seen.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(peak).toBe(3);
  });

  it('rejects with the first error and starts nothing after it', async () => {
    const started: number[] = [];
    await expect(
      forEachLimit([1, 2, 3, 4], 1, async (item) => {
        started.push(item);
        await Promise.resolve();
        if (item === 2) throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(started).toEqual([1, 2]);
  });
});
