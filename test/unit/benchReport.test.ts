// The bench's report (cost curves, stdout table), scenario selection and
// objects, flags and file names: everything pure about `make bench`.
import { describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../../bench/args.ts';
import { metricsAddressFromLogLine } from '../../bench/lib/operatorProcess.ts';
import { conditionsOf } from '../../bench/lib/readiness.ts';
import {
  costCurves,
  renderTable,
  reportFileName,
  type BenchReport,
  type PhaseResult,
  type ScenarioResult,
} from '../../bench/report.ts';
import { scenarioGroups, scenarioObjects, selectScenarios } from '../../bench/scenarios.ts';
import { compareWithBaseline } from '../../bench/lib/baseline.ts';
import { memoryByGroup } from '../../bench/lib/costPerObject.ts';

const MiB = 1024 * 1024;

function phaseOf(durationMs: number, awsPerResource: number, p95 = durationMs): PhaseResult {
  return {
    durationMs,
    perResourceMs: { count: 1, p50: p95 / 2, p95, max: p95 },
    aws: { total: 1, perResource: awsPerResource, perResourceByOperation: {}, throttled: 0 },
    kube: { writes: 6, writesPerResource: 6, byVerb: { PATCH: 5, POST: 1 } },
    reconcilesPerResource: 1,
    cpuSeconds: 1,
    cpuMsPerResource: 12.5,
    requestsMs: 1500,
    afterLastRequestMs: durationMs - 1500,
  };
}

function result(group: string, size: number, allReadyMs: number, peakRssBytes: number): ScenarioResult {
  return {
    id: `${group}-${size}`,
    group,
    kind: 'DNSRecord',
    size,
    zones: 1,
    route53RatePerSecond: null,
    status: 'ok',
    readyCount: size,
    create: phaseOf(allReadyMs, 0.25, allReadyMs / 2),
    resync: phaseOf(30_000, 0.01),
    delete: phaseOf(2000, 0.05),
    steadyState: { awsCallsPerMinute: 2, cpuSecondsPerMinute: 0.5 },
    operator: {
      peakRssBytes,
      cpuSeconds: 12.345,
      cpuMsPerResource: 40.25,
      rssAfterCreateBytes: peakRssBytes - 20 * MiB,
      rssAfterResyncBytes: peakRssBytes - 30 * MiB,
    },
    leftovers: { route53Records: 0, loadBalancers: 0, targetGroups: 0, dbInstances: 0 },
  };
}

describe('costCurves', () => {
  it('orders each group by size and gives ratios between neighbouring sizes', () => {
    const curves = costCurves([
      result('dns', 1000, 20_000, 300 * MiB),
      result('dns', 100, 5000, 200 * MiB),
      result('dns', 5000, 100_000, 600 * MiB),
      result('myingress', 100, 9000, 250 * MiB),
    ]);
    expect(curves).toHaveLength(1); // one size only: no curve for myingress
    expect(curves[0]?.group).toBe('dns');
    expect(curves[0]?.points.map((p) => p.size)).toEqual([100, 1000, 5000]);
    expect(curves[0]?.steps).toEqual([
      { from: 100, to: 1000, sizeRatio: 10, convergenceRatio: 4, p95Ratio: 4, memoryRatio: 1.5 },
      { from: 1000, to: 5000, sizeRatio: 5, convergenceRatio: 5, p95Ratio: 5, memoryRatio: 2 },
    ]);
  });

  it('leaves failed scenarios out of the curve', () => {
    const failed: ScenarioResult = { ...result('dns', 5000, 1, 1), status: 'failed', error: 'timed out' };
    const curves = costCurves([
      result('dns', 100, 5000, 200 * MiB),
      result('dns', 1000, 20_000, 300 * MiB),
      failed,
    ]);
    expect(curves[0]?.points.map((p) => p.size)).toEqual([100, 1000]);
  });
});

describe('renderTable', () => {
  const report = (scenarios: ScenarioResult[]): BenchReport => ({
    schemaVersion: 2,
    complete: true,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:10:00.000Z',
    machine: {
      cores: 2,
      cpuModel: 'test',
      totalMemoryBytes: 8 * 1024 * MiB,
      node: 'v24.0.0',
      platform: 'linux-x64',
      gitCommit: 'abc',
      gitDirty: false,
      loadAverageAtStart: [0, 0, 0],
      note: '',
    },
    settings: {
      only: [],
      sizes: undefined,
      namespaces: undefined,
      resyncPeriodMs: 30_000,
      idleWindowMs: 30_000,
      concurrency: 16,
      outDir: 'bench/results',
      operatorArgs: [],
      operatorFlags: [],
      baselinePath: undefined,
      saveBaseline: false,
      operatorBuild: 'dist',
      operatorNodeFlags: [],
    },
    scenarios,
    curves: costCurves(scenarios),
    memory: memoryByGroup(scenarios),
    baseline: null,
  });

  it('prints a header, one aligned row per scenario with seconds and MiB, the cost curve and memory slopes', () => {
    const text = renderTable(
      report([result('dns', 100, 5000, 200 * MiB), result('dns', 1000, 20_000, 300 * MiB)]),
    );
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^scenario\s+N\s+all Ready\s+creating\s+after last create\s+p50\s+p95\s+max\s+AWS\/res create/,
    );
    expect(lines[0]).toMatch(/CPU ms\/res create\s+total\s+RSS MiB Ready\s+idle\s+peak\s+CPU s\s/);
    // all Ready 5.0 s = creating 1.5 s + 3.5 s after the last create; CPU 12.5 ms/res in create,
    // 40.3 in all; RSS 180 MiB all Ready, 170 after the resync window, 200 peak.
    expect(lines[1]).toMatch(
      /^dns-100\s+100\s+5\.0s\s+1\.5s\s+3\.5s\s+1\.3s\s+2\.5s\s+2\.5s\s+0\.25\s+0\.01\s+0\.05\s+6\.00\s+6\.00\s+6\.00\s+12\.5\s+40\.3\s+180\s+170\s+200\s+12\.3\s+2\.0\s+0\.50\s+0$/,
    );
    expect(lines[2]).toMatch(/^dns-1000\s+1000\s+20\.0s\s+1\.5s\s+18\.5s/);
    // Columns line up: every row's "N" column ends where the header's does.
    expect(lines[1]?.indexOf(' 100 ')).toBe((lines[0]?.indexOf(' N ') ?? 0) - 2);
    expect(lines[3]).toBe('cost curve dns: 100→1000 (×10): all Ready ×4, p95 ×4, peak RSS ×1.5');
    // 100 MiB more over 900 more objects: 113.8 KiB per object, line through 188.9 MiB at 0 (peak).
    expect(lines[4]).toBe(
      'memory dns (sizes 100, 1000): RSS after create +113.8 KiB/object + 169 MiB (r² 1); idle +113.8 KiB/object + 159 MiB (r² 1); peak +113.8 KiB/object + 189 MiB (r² 1)',
    );
    expect(lines[5]).toMatch(/^no baseline to compare with/);
  });

  it('says why a group run at one size has no memory slope', () => {
    const text = renderTable(report([result('dns', 100, 5000, 200 * MiB)]));
    expect(text).toContain(
      'memory dns (sizes 100): no slope: one size only (100): a slope needs two or more sizes of the group in one run',
    );
  });

  it('prints the ratios to the baseline, - where the baseline lacks a field, and what was not compared', () => {
    const current = [result('dns', 100, 5000, 200 * MiB), result('dns', 1000, 20_000, 300 * MiB)];
    // A version-1 baseline: no create split. Same costs, half the time and memory.
    const { requestsMs: _r, afterLastRequestMs: _a, ...oldCreate } = phaseOf(2500, 0.25, 1250);
    const old = { ...result('dns', 100, 2500, 100 * MiB), create: oldCreate };
    const comparison = compareWithBaseline(
      current,
      { startedAt: '2026-01-01T00:00:00.000Z', machine: { gitCommit: 'abcdef0123' }, scenarios: [old] },
      'bench/baseline.json',
    );
    const text = renderTable({ ...report(current), baseline: comparison });
    const lines = text.trimEnd().split('\n');
    const at = lines.findIndex((l) => l.startsWith('against baseline'));
    expect(lines[at]).toBe(
      'against baseline bench/baseline.json (2026-01-01T00:00:00.000Z, commit abcdef0): current / baseline',
    );
    expect(lines[at + 1]).toMatch(
      /^scenario\s+all Ready\s+creating\s+after last create\s+CPU ms\/res create\s+total\s+peak RSS\s+kube writes\/res create\s+AWS\/res create\s+resync$/,
    );
    expect(lines[at + 2]).toMatch(
      /^dns-100\s+×2\.00\s+-\s+-\s+×1\.00\s+×1\.00\s+×2\.00\s+×1\.00\s+×1\.00\s+×1\.00$/,
    );
    expect(lines[at + 3]).toBe('not compared: dns-1000 (not in the baseline)');
  });

  it('marks failed scenarios and prints their error', () => {
    const failed: ScenarioResult = {
      id: 'dns-5000',
      group: 'dns',
      kind: 'DNSRecord',
      size: 5000,
      zones: 1,
      route53RatePerSecond: null,
      status: 'failed',
      error: 'timed out after 930000 ms waiting for 5000 objects to become Ready',
      readyCount: 4200,
    };
    const text = renderTable(report([failed]));
    expect(text).toMatch(/^dns-5000\s+5000\s+FAILED$/m);
    expect(text).toContain('dns-5000 failed: timed out after 930000 ms');
  });

  const rolloutBase = {
    id: 'myingress-rollout',
    group: 'myingress-rollout',
    kind: 'MyIngress',
    size: 10,
    zones: 0,
    route53RatePerSecond: null,
  };

  it('marks a skipped scenario and prints why; the baseline says it was skipped, not failed', () => {
    const skipped: ScenarioResult = {
      ...rolloutBase,
      status: 'skipped',
      skipReason: 'a node cluster needs root',
      readyCount: 0,
    };
    const text = renderTable(report([skipped]));
    expect(text).toMatch(/^myingress-rollout\s+10\s+SKIPPED$/m);
    expect(text).toContain('myingress-rollout skipped: a node cluster needs root');
    expect(compareWithBaseline([skipped], { scenarios: [] }, 'b.json').notCompared).toEqual([
      { id: 'myingress-rollout', reason: 'skipped in this run' },
    ]);
  });

  it('prints the rollout matrix: one row per change and gate with failures, kinds and Pod timings', () => {
    const ok: ScenarioResult = {
      ...rolloutBase,
      status: 'ok',
      readyCount: 2,
      rollout: {
        settings: {
          preStopSeconds: 8,
          propagationDelayMs: 5000,
          healthCheckTimeScale: 0.1,
          healthCheckIntervalSeconds: 5,
          gatePollPeriod: '500ms',
          requestsPerSecond: 50,
          requestTimeoutMs: 15_000,
          maxRequestsPerCase: 12_000,
          maxLoadMsPerCase: 240_000,
          replicas: 3,
        },
        nodeClusterStartMs: 13_000,
        cases: [
          {
            case: 'scale 3→1',
            gate: 'on',
            status: 'ok',
            sentRequests: 439,
            failedRequests: 0,
            failureKinds: {},
            podStartToFirstRequestMs: { values: [], median: null },
            podDeletionToLastRequestMs: { values: [5860, 5819], median: 5819 },
            durationMs: 9000,
          },
          {
            case: 'scale 3→1',
            gate: 'off',
            status: 'ok',
            sentRequests: 500,
            failedRequests: 12,
            failureKinds: { '0 timed out': 12 },
            podStartToFirstRequestMs: { values: [], median: null },
            podDeletionToLastRequestMs: { values: [300], median: 300 },
            durationMs: 20_000,
          },
        ],
      },
    };
    const text = renderTable(report([ok]));
    expect(text).toMatch(/^myingress-rollout\s+10\s+below$/m);
    expect(text).toContain(
      'gate on = target-health readiness gate + preStop 8 s; data plane propagation delay 5.0s',
    );
    expect(text).toMatch(/^scale 3→1\s+on\s+439\s+0\s+-\s+-\s+5.8s \[5.9 5.8\]\s+9.0s$/m);
    expect(text).toMatch(/^scale 3→1\s+off\s+500\s+12\s+12× 0 timed out\s+-\s+0.3s \[0.3\]\s+20.0s$/m);
  });
});

describe('scenarios', () => {
  it('runs every group at its default sizes by default, in catalogue order, smallest first', () => {
    const ids = selectScenarios([], undefined).map((s) => s.id);
    expect(ids).toEqual([
      'dns-100',
      'dns-1000',
      'dns-5000',
      'dns-10zones-100',
      'dns-10zones-1000',
      'dns-10zones-5000',
      'myingress-100',
      'manageddb-100',
      'dns-propagating-1000',
      'dns-throttled-1000',
      'dns-10zones-throttled-1000',
      'dns-teams-1000',
      'dns-teams-flood-5000',
      'dns-teams-bigtxt-150',
      'myingress-group-100',
      'gateway-200',
      'myingress-rollout',
    ]);
  });

  it('runs myingress-rollout as one scenario of 10 runs, whatever --sizes says', () => {
    const [rollout, dns] = selectScenarios(['myingress-rollout', 'dns'], [7]);
    expect(rollout?.id).toBe('myingress-rollout');
    expect(rollout?.size).toBe(10);
    expect(rollout?.group.nodeRollout).toBe(true);
    expect(dns?.id).toBe('dns-7');
  });

  it('runs --only entries in the order given: groups at --sizes (or their defaults), or single scenarios by id', () => {
    expect(selectScenarios(['manageddb', 'dns'], [1000, 20]).map((s) => s.id)).toEqual([
      'manageddb-20',
      'manageddb-1000',
      'dns-20',
      'dns-1000',
    ]);
    expect(
      selectScenarios(['dns-10zones-1000', 'myingress'], undefined).map((s) => [s.id, s.group.name, s.size]),
    ).toEqual([
      ['dns-10zones-1000', 'dns-10zones', 1000],
      ['myingress-100', 'myingress', 100],
    ]);
    expect(() => selectScenarios(['dnz'], undefined)).toThrow(/unknown scenario dnz: choose from dns, /);
    expect(() => selectScenarios(['dnz-100'], undefined)).toThrow(/unknown scenario dnz-100/);
  });

  it('spreads DNSRecords round robin over the zones with distinct names', () => {
    const [s] = selectScenarios(['dns-10zones'], [25]);
    if (s === undefined) throw new Error('no scenario');
    const zones = ['a.test', 'b.test', 'c.test'];
    const { measured, supporting } = scenarioObjects(s, 'ns1', zones);
    expect(supporting).toEqual([]);
    expect(measured).toHaveLength(25);
    expect(new Set(measured.map((o) => o.metadata.name)).size).toBe(25);
    const zoneOf = (i: number): unknown =>
      (measured[i] as unknown as { spec: { zoneName: string } }).spec.zoneName;
    expect([zoneOf(0), zoneOf(1), zoneOf(2), zoneOf(3)]).toEqual(['a.test', 'b.test', 'c.test', 'a.test']);
    expect(measured.every((o) => o.metadata.namespace === 'ns1' && o.kind === 'DNSRecord')).toBe(true);
  });

  it('gives each MyIngress its own Service and a ready EndpointSlice for it', () => {
    const [s] = selectScenarios(['myingress'], [300]);
    if (s === undefined) throw new Error('no scenario');
    const { measured, supporting } = scenarioObjects(s, 'ns1', []);
    expect(measured).toHaveLength(300);
    const services = supporting.filter((o) => o.kind === 'Service');
    const slices = supporting.filter((o) => o.kind === 'EndpointSlice') as unknown as {
      metadata: { labels: Record<string, string> };
      endpoints: { addresses: string[] }[];
    }[];
    expect(services).toHaveLength(300);
    expect(slices.map((sl) => sl.metadata.labels['kubernetes.io/service-name'])).toEqual(
      services.map((svc) => svc.metadata.name),
    );
    // Valid IPv4 addresses however many Services there are.
    for (const sl of slices)
      expect(sl.endpoints[0]?.addresses[0]).toMatch(/^10\.77\.1\.(\d|[1-9]\d|1\d\d|2[0-4]\d|25[0-5])$/);
  });

  it('has no final snapshot on ManagedDBs, so nothing is left in AWS after delete', () => {
    const [s] = selectScenarios(['manageddb'], [2]);
    if (s === undefined) throw new Error('no scenario');
    const { measured } = scenarioObjects(s, 'ns1', []);
    expect((measured[0] as unknown as { spec: { finalSnapshot: unknown } }).spec.finalSnapshot).toEqual({
      enabled: false,
    });
  });

  it('sets a Route 53 rate limit only on the throttled groups and the teams bursts (10/s, the quota since July 2026)', () => {
    expect(
      scenarioGroups
        .filter((g) => g.route53RatePerSecond !== undefined)
        .map((g) => [g.name, g.route53RatePerSecond]),
    ).toEqual([
      ['dns-throttled', 5],
      ['dns-10zones-throttled', 5],
      ['dns-teams-flood', 10],
      ['dns-teams-bigtxt', 10],
    ]);
  });

  it('delays Route 53 propagation only in dns-propagating', () => {
    expect(scenarioGroups.filter((g) => g.route53PendingMs !== undefined).map((g) => g.name)).toEqual([
      'dns-propagating',
    ]);
  });
});

describe('flags, file names, log lines and conditions', () => {
  it('parses --only, --sizes, --resync-period, --concurrency and repeated --operator-arg', () => {
    expect(
      parseBenchArgs(
        [
          '--only',
          'dns,myingress',
          '--sizes',
          '100, 1000',
          '--resync-period',
          '1m',
          '--operator-arg=--workers=8',
        ],
        '/out',
      ),
    ).toEqual({
      only: ['dns', 'myingress'],
      sizes: [100, 1000],
      namespaces: undefined,
      resyncPeriodMs: 60_000,
      idleWindowMs: 60_000,
      concurrency: 16,
      outDir: '/out',
      operatorArgs: ['--workers=8'],
      baselinePath: undefined,
      saveBaseline: false,
      operatorBuild: 'dist',
      operatorNodeFlags: ['--max-old-space-size=192'],
    });
    expect(parseBenchArgs(['--baseline', 'old.json', '--save-baseline'], '/out')).toMatchObject({
      baselinePath: 'old.json',
      saveBaseline: true,
    });
    expect(parseBenchArgs(['--operator-build', 'source'], '/out')).toMatchObject({ operatorBuild: 'source' });
    expect(parseBenchArgs(['--resync-period', '10m', '--idle-window', '20m'], '/out')).toMatchObject({
      resyncPeriodMs: 600_000,
      idleWindowMs: 1_200_000,
    });
    expect(parseBenchArgs(['--namespaces', '4'], '/out')).toMatchObject({ namespaces: 4 });
    expect(() => parseBenchArgs(['--operator-build', 'docker'], '/out')).toThrow(/--operator-build/);
    expect(parseBenchArgs(['--help'], '/out')).toBe('help');
  });

  it.each([
    { reason: 'a size that is not a whole number', argv: ['--sizes', '1.5'], error: /--sizes/ },
    { reason: 'an empty size list', argv: ['--sizes', ','], error: /at least one size/ },
    { reason: 'a bad duration', argv: ['--resync-period', 'soon'], error: /invalid duration/ },
    { reason: 'a resync period under a second', argv: ['--resync-period', '500ms'], error: /at least 1s/ },
    { reason: 'an idle window under a second', argv: ['--idle-window', '10ms'], error: /--idle-window/ },
    { reason: 'zero concurrency', argv: ['--concurrency', '0'], error: /--concurrency/ },
    { reason: 'zero namespaces', argv: ['--namespaces', '0'], error: /--namespaces/ },
    {
      reason: 'a namespace count that is not a number',
      argv: ['--namespaces', 'ten'],
      error: /--namespaces/,
    },
    { reason: 'an unknown flag', argv: ['--fast'], error: /Unknown option/ },
    { reason: 'an empty baseline path', argv: ['--baseline', ' '], error: /--baseline: give a file/ },
  ])('rejects $reason', ({ argv, error }) => {
    expect(() => parseBenchArgs(argv, '/out')).toThrow(error);
  });

  it('names reports by UTC time without characters file systems dislike', () => {
    expect(reportFileName(new Date('2026-05-01T12:34:56.789Z'))).toBe('2026-05-01T12-34-56Z.json');
  });

  it('finds the metrics address in the operator log', () => {
    expect(
      metricsAddressFromLogLine(
        '{"level":30,"address":"127.0.0.1:41234","msg":"serving /metrics, /healthz, /readyz"}',
      ),
    ).toBe('127.0.0.1:41234');
    expect(metricsAddressFromLogLine('{"level":30,"msg":"controllers started"}')).toBeUndefined();
    expect(metricsAddressFromLogLine('not json {')).toBeUndefined();
  });

  it.each([
    {
      reason: 'Ready=True',
      conditions: [{ type: 'Ready', status: 'True' }],
      want: { ready: true, terminal: undefined },
    },
    {
      reason: 'Ready=False while creating',
      conditions: [{ type: 'Ready', status: 'False', reason: 'Creating' }],
      want: { ready: false, terminal: undefined },
    },
    {
      reason: 'Synced=False Terminal',
      conditions: [{ type: 'Synced', status: 'False', reason: 'Terminal', message: 'bad zone' }],
      want: { ready: false, terminal: { reason: 'Terminal', message: 'bad zone' } },
    },
    {
      reason: 'Synced=False for a retryable reason is not terminal',
      conditions: [{ type: 'Synced', status: 'False', reason: 'Throttled' }],
      want: { ready: false, terminal: undefined },
    },
  ])('reads conditions: $reason', ({ conditions, want }) => {
    expect(conditionsOf({ metadata: { name: 'x' }, status: { conditions } } as never)).toEqual(want);
  });
});
