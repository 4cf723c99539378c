// Cost per object in `make bench`: the least-squares line, the RSS slope per
// group, the split of a phase at the bench's last request, and the ratios to
// a baseline report that may be older than the fields it is asked for.
import { describe, expect, it } from 'vitest';
import { compareWithBaseline, numberAt, parseBaseline } from '../../bench/lib/baseline.ts';
import { memoryByGroup, requestTiming, rssSlope } from '../../bench/lib/costPerObject.ts';
import { leastSquares } from '../../bench/lib/stats.ts';
import type { OperatorUse, PhaseResult, ScenarioResult } from '../../bench/report.ts';

const MiB = 1024 * 1024;

describe('leastSquares', () => {
  it('fits points on a line exactly', () => {
    expect(
      leastSquares([
        { x: 100, y: 1100 },
        { x: 1000, y: 10100 },
        { x: 5000, y: 50100 },
      ]),
    ).toEqual({ slope: 10, intercept: 100, r2: 1 }); // r² at most 1, although floating point overshoots
  });

  it('fits scattered points by least squares', () => {
    // Mean x 2, mean y 3; sxx 2, sxy 3, syy 6 → slope 1.5, intercept 3 - 1.5 · 2 = 0, r² 9 / (2 · 6) = 0.75.
    const fit = leastSquares([
      { x: 1, y: 1 },
      { x: 2, y: 4 },
      { x: 3, y: 4 },
    ]);
    if ('reason' in fit) throw new Error(fit.reason);
    expect(fit.slope).toBeCloseTo(1.5, 12);
    expect(fit.intercept).toBeCloseTo(0, 12);
    expect(fit.r2).toBeCloseTo(0.75, 12);
  });

  it.each([
    { reason: 'no points', points: [], want: /no points/ },
    { reason: 'one point', points: [{ x: 100, y: 5 }], want: /one point only \(x = 100\)/ },
    {
      reason: 'identical x',
      points: [
        { x: 100, y: 5 },
        { x: 100, y: 9 },
      ],
      want: /same x \(100\)/,
    },
  ])('has no line for $reason', ({ points, want }) => {
    const fit = leastSquares(points);
    expect('reason' in fit ? fit.reason : 'a line').toMatch(want);
  });

  it('gives a flat line with no r² when every y is the same', () => {
    expect(
      leastSquares([
        { x: 1, y: 7 },
        { x: 2, y: 7 },
      ]),
    ).toEqual({ slope: 0, intercept: 7, r2: null });
  });

  it('refuses NaN rather than returning it', () => {
    expect(() => leastSquares([{ x: 1, y: Number.NaN }])).toThrow(/non-finite/);
  });
});

describe('rssSlope', () => {
  it('gives whole bytes per object and the intercept', () => {
    // 200 MiB at 100, 290 MiB at 1000: 90 MiB / 900 objects = 104857.6 bytes each.
    expect(
      rssSlope([
        { size: 100, bytes: 200 * MiB },
        { size: 1000, bytes: 290 * MiB },
      ]),
    ).toEqual({
      bytesPerObject: 104858,
      interceptBytes: 200 * MiB - 10_485_760,
      r2: 1,
      reason: null,
    });
  });

  it.each([
    {
      reason: 'one size',
      points: [{ size: 100, bytes: 200 * MiB }],
      want: 'one size only (100): a slope needs two or more sizes of the group in one run',
    },
    {
      reason: 'the same size twice',
      points: [
        { size: 1000, bytes: 200 * MiB },
        { size: 1000, bytes: 210 * MiB },
      ],
      want: 'one size only (1000): a slope needs two or more sizes of the group in one run',
    },
    {
      reason: 'readings missing but at one size',
      points: [
        { size: 100, bytes: 200 * MiB },
        { size: 1000, bytes: null },
      ],
      want: 'one size only (100): a slope needs two or more sizes of the group in one run',
    },
    {
      reason: 'no reading at all',
      points: [{ size: 100, bytes: null }],
      want: 'no successful scenario measured it',
    },
  ])('is null with a reason for $reason', ({ points, want }) => {
    expect(rssSlope(points)).toEqual({ bytesPerObject: null, interceptBytes: null, r2: null, reason: want });
  });
});

function phase(durationMs: number, extra: Partial<PhaseResult> = {}): PhaseResult {
  return {
    durationMs,
    aws: { total: 40, perResource: 0.04, perResourceByOperation: {}, throttled: 0 },
    kube: { writes: 4000, writesPerResource: 4, byVerb: {} },
    reconcilesPerResource: 1,
    cpuSeconds: 10,
    ...extra,
  };
}

function scenario(group: string, size: number, rss: Partial<OperatorUse> = {}): ScenarioResult {
  return {
    id: `${group}-${size}`,
    group,
    kind: 'DNSRecord',
    size,
    zones: 1,
    route53RatePerSecond: null,
    status: 'ok',
    readyCount: size,
    create: phase(15_000, { requestsMs: 5000, afterLastRequestMs: 10_000 }),
    resync: phase(30_000),
    operator: {
      peakRssBytes: 300 * MiB,
      cpuSeconds: 20,
      rssAfterCreateBytes: 250 * MiB,
      rssAfterResyncBytes: 240 * MiB,
      ...rss,
    },
  };
}

describe('memoryByGroup', () => {
  it('fits each group over its successful sizes, smallest first, and says why a one-size group has none', () => {
    const failed: ScenarioResult = { ...scenario('dns', 5000), status: 'failed', error: 'timed out' };
    const groups = memoryByGroup([
      scenario('dns', 1000, {
        rssAfterCreateBytes: 300 * MiB,
        rssAfterResyncBytes: 280 * MiB,
        peakRssBytes: 350 * MiB,
      }),
      scenario('dns', 100, {
        rssAfterCreateBytes: 210 * MiB,
        rssAfterResyncBytes: 199 * MiB,
        peakRssBytes: 260 * MiB,
      }),
      failed,
      scenario('myingress', 100),
    ]);
    expect(groups.map((g) => g.group)).toEqual(['dns', 'myingress']);
    const [dns, myingress] = groups;
    expect(dns?.points.map((p) => p.size)).toEqual([100, 1000]);
    // 90 MiB over 900 objects after create and at peak, 81 MiB after the resync window.
    expect(dns?.afterCreate.bytesPerObject).toBe(104858);
    expect(dns?.peak.bytesPerObject).toBe(104858);
    expect(dns?.afterResync.bytesPerObject).toBe(Math.round((81 * MiB) / 900));
    expect(myingress?.afterCreate).toMatchObject({
      bytesPerObject: null,
      reason: expect.stringMatching(/one size only/) as unknown,
    });
  });

  it('uses a report without RSS after create (older code) for the peak slope only', () => {
    const [dns] = memoryByGroup([
      { ...scenario('dns', 100), operator: { peakRssBytes: 200 * MiB, cpuSeconds: 9 } },
      { ...scenario('dns', 1000), operator: { peakRssBytes: 290 * MiB, cpuSeconds: 30 } },
    ]);
    expect(dns?.points[0]).toEqual({
      size: 100,
      rssAfterCreateBytes: null,
      rssAfterResyncBytes: null,
      peakRssBytes: 200 * MiB,
    });
    expect(dns?.afterCreate.reason).toBe('no successful scenario measured it');
    expect(dns?.peak.bytesPerObject).toBe(104858);
  });
});

describe('requestTiming', () => {
  it.each([
    {
      reason: 'splits at the last answered create',
      t: { firstRequestAt: 1000, lastAnsweredAt: 6000.4, lastDoneAt: 16_000.6 },
      want: { requestsMs: 5000, afterLastRequestMs: 10_000 },
    },
    {
      reason: 'all Ready the moment the last create is answered',
      t: { firstRequestAt: 0, lastAnsweredAt: 300, lastDoneAt: 300 },
      want: { requestsMs: 300, afterLastRequestMs: 0 },
    },
    {
      reason: 'the watch saw the last Ready before the bench got its answer: 0, never negative',
      t: { firstRequestAt: 0, lastAnsweredAt: 300, lastDoneAt: 250 },
      want: { requestsMs: 300, afterLastRequestMs: 0 },
    },
  ])('$reason', ({ t, want }) => {
    expect(requestTiming(t)).toEqual(want);
  });

  it('refuses an answer before the request', () => {
    expect(() => requestTiming({ firstRequestAt: 500, lastAnsweredAt: 400, lastDoneAt: 900 })).toThrow(
      /before the first request/,
    );
  });
});

describe('baseline', () => {
  it.each([
    { reason: 'a nested number', path: ['create', 'durationMs'], want: 7 },
    { reason: 'a missing key', path: ['create', 'requestsMs'], want: undefined },
    { reason: 'a path through a number', path: ['create', 'durationMs', 'x'], want: undefined },
    { reason: 'a string', path: ['id'], want: undefined },
    { reason: 'null', path: ['operator'], want: undefined },
    { reason: 'NaN', path: ['nan'], want: undefined },
  ])('numberAt: $reason', ({ path, want }) => {
    expect(numberAt({ id: 'x', create: { durationMs: 7 }, operator: null, nan: Number.NaN }, path)).toBe(
      want,
    );
  });

  it('rejects a file that is not JSON or not a report, naming it', () => {
    expect(() => parseBaseline('{', 'b.json')).toThrow(/baseline b\.json: not JSON/);
    expect(() => parseBaseline('{"scenarios": {}}', 'b.json')).toThrow(/b\.json: not a bench report/);
    expect(parseBaseline('{"scenarios": []}', 'b.json')).toEqual({ scenarios: [] });
  });

  it('gives current / baseline per metric, from totals every report version has', () => {
    const current = scenario('dns', 1000);
    // A version-1 scenario: no create split, no CPU per resource, no RSS after create; half the CPU.
    const old = {
      id: 'dns-1000',
      status: 'ok',
      size: 1000,
      create: { durationMs: 30_000, cpuSeconds: 5, aws: { total: 40 }, kube: { writes: 4000 } },
      resync: { aws: { total: 20 } },
      operator: { peakRssBytes: 600 * MiB, cpuSeconds: 40 },
    };
    const c = compareWithBaseline(
      [current],
      { schemaVersion: 1, startedAt: 'then', machine: { gitCommit: 'abc' }, scenarios: [old] },
      'bench/baseline.json',
    );
    expect(c).toMatchObject({
      file: 'bench/baseline.json',
      startedAt: 'then',
      gitCommit: 'abc',
      schemaVersion: 1,
    });
    expect(c.notCompared).toEqual([]);
    expect(c.scenarios.map((s) => s.id)).toEqual(['dns-1000']);
    expect(c.scenarios[0]?.metrics).toEqual({
      allReadyMs: { current: 15_000, baseline: 30_000, ratio: 0.5 },
      createRequestsMs: { current: 5000, baseline: null, ratio: null },
      afterLastCreateMs: { current: 10_000, baseline: null, ratio: null },
      createCpuMsPerObject: { current: 10, baseline: 5, ratio: 2 },
      cpuMsPerObject: { current: 20, baseline: 40, ratio: 0.5 },
      peakRssBytes: { current: 300 * MiB, baseline: 600 * MiB, ratio: 0.5 },
      createKubeWritesPerObject: { current: 4, baseline: 4, ratio: 1 },
      createAwsCallsPerObject: { current: 0.04, baseline: 0.04, ratio: 1 },
      resyncAwsCallsPerObject: { current: 0.04, baseline: 0.02, ratio: 2 },
    });
  });

  it('has no ratio where the baseline is 0 or garbage, and never NaN', () => {
    const old = {
      id: 'dns-1000',
      status: 'ok',
      size: 0,
      create: { durationMs: 0, requestsMs: 'soon', afterLastRequestMs: null },
      operator: { peakRssBytes: Number.POSITIVE_INFINITY },
    };
    const [s] = compareWithBaseline([scenario('dns', 1000)], { scenarios: [old] }, 'b.json').scenarios;
    for (const m of Object.values(s?.metrics ?? {})) {
      expect(m.ratio).toBeNull();
      expect(Number.isNaN(m.current) || Number.isNaN(m.baseline)).toBe(false);
    }
    expect(s?.metrics.allReadyMs).toEqual({ current: 15_000, baseline: 0, ratio: null });
  });

  it('lists scenarios it could not compare, with why, in this run’s order', () => {
    const failedNow: ScenarioResult = { ...scenario('dns', 5000), status: 'failed' };
    const c = compareWithBaseline(
      [scenario('dns', 100), scenario('dns', 1000), failedNow],
      {
        scenarios: [
          { id: 'dns-1000', status: 'failed' },
          { id: 'dns-5000', status: 'ok' },
          'junk',
          { status: 'ok' },
        ],
      },
      'b.json',
    );
    expect(c.scenarios).toEqual([]);
    expect(c.notCompared).toEqual([
      { id: 'dns-100', reason: 'not in the baseline' },
      { id: 'dns-1000', reason: 'failed in the baseline' },
      { id: 'dns-5000', reason: 'failed in this run' },
    ]);
    expect(c).toMatchObject({ startedAt: null, gitCommit: null, schemaVersion: null });
  });
});
