// The monitoring assets: promtool accepts the rules and their scenarios, the
// PrometheusRule carries the same rules, every alert is complete, the PromQL
// reads only metrics the operator defines, the metrics doc matches the code,
// and the not-Ready age the alert relies on is computed right.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { repoRoot } from '../../dev/paths.ts';
import { oldestNotReadySeconds } from '../../src/runtime/controller.ts';
import type { ConditionStatus, ManagedObject } from '../../src/apis/managed.ts';
import { Metrics } from '../../src/runtime/metrics.ts';
import {
  dashboardExpressions,
  documentedMetrics,
  metricNamesInExpr,
  prometheusSyntheticSeries,
  ruleExpressions,
} from '../support/monitoring.ts';

const run = promisify(execFile);
const monitoring = join(repoRoot, 'deploy/monitoring');
const promtool = execFileSync(join(repoRoot, 'hack/install-promtool.sh'), ['--print'], {
  encoding: 'utf8',
}).trim();

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const rulesDoc = parse(readFileSync(join(monitoring, 'rules.yaml'), 'utf8')) as {
  groups: { name: string; rules: Rule[] }[];
};
const alerts = rulesDoc.groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);

/** Runs promtool; resolves with its exit code and output instead of throwing. */
async function promtoolRun(args: string[]): Promise<{ code: number; out: string }> {
  expect(existsSync(promtool), `${promtool} missing: run make setup (or make promtool)`).toBe(true);
  try {
    const { stdout, stderr } = await run(promtool, args, { cwd: monitoring });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('promtool', () => {
  it('accepts rules.yaml and counts every rule', async () => {
    const { code, out } = await promtoolRun(['check', 'rules', 'rules.yaml']);
    expect(out).toContain(`SUCCESS: ${rulesDoc.groups.flatMap((g) => g.rules).length} rules found`);
    expect(code).toBe(0);
  });

  it('passes the alert scenarios in rules.test.yaml', async () => {
    const { code, out } = await promtoolRun(['test', 'rules', 'rules.test.yaml']);
    expect(out).toContain('SUCCESS');
    expect(code).toBe(0);
  });

  it('rejects a rule with broken PromQL (so the check above can fail)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'skylift-rules-'));
    const bad = join(dir, 'bad.yaml');
    await writeFile(
      bad,
      'groups:\n  - name: x\n    rules:\n      - alert: X\n        expr: sum(rate(up[5m])\n',
    );
    const { code, out } = await promtoolRun(['check', 'rules', bad]);
    expect(code).not.toBe(0);
    expect(out).toMatch(/FAILED|error/i);
  });
});

describe('alerting rules', () => {
  it('prometheusrule.yaml is a PrometheusRule whose spec is exactly rules.yaml', () => {
    const pr = parse(readFileSync(join(monitoring, 'prometheusrule.yaml'), 'utf8')) as {
      apiVersion: string;
      kind: string;
      metadata: { name: string };
      spec: unknown;
    };
    expect(pr.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(pr.kind).toBe('PrometheusRule');
    expect(pr.metadata.name).toBe('skylift');
    expect(pr.spec, 'regenerate prometheusrule.yaml: its spec is rules.yaml indented').toEqual(rulesDoc);
  });

  it('covers every condition the operator must alert on', () => {
    expect(alerts.map((a) => a.alert).sort()).toEqual([
      'SkyliftAWSThrottling',
      'SkyliftDown',
      'SkyliftNoLeader',
      'SkyliftReconcileErrors',
      'SkyliftResourceNotReady',
      'SkyliftWatchRestarts',
      'SkyliftWorkQueueBackingUp',
      'SkyliftWorkQueueLatencyHigh',
    ]);
  });

  it.each(alerts.map((a) => [a.alert ?? '', a] as const))(
    '%s has a severity, summary, description and a runbook section named after it',
    (name, rule) => {
      expect(['critical', 'warning']).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary?.length ?? 0).toBeGreaterThan(10);
      expect(rule.annotations?.description?.length ?? 0).toBeGreaterThan(30);
      expect(rule.annotations?.runbook_url).toBe(
        `https://github.com/skylift-dev/skylift/blob/main/docs/troubleshooting.md#${name.toLowerCase()}`,
      );
      expect(rule.for).toMatch(/^\d+m$/);
      expect(rule.expr).toContain('job="skylift"');
    },
  );
});

describe('metricNamesInExpr', () => {
  it.each([
    {
      reason: 'aggregation with by(), range, label matchers',
      expr: 'sum by (controller) (rate(controller_runtime_reconcile_total{job="skylift", result="error"}[5m]))',
      want: ['controller_runtime_reconcile_total'],
    },
    {
      reason: 'histogram_quantile keeps the _bucket series and drops le and numbers',
      expr: 'histogram_quantile(0.95, sum by (name, le) (rate(workqueue_queue_duration_seconds_bucket[$__rate_interval])))',
      want: ['workqueue_queue_duration_seconds_bucket'],
    },
    {
      reason: 'binary operators, comparison, absent and strings that look like names',
      expr: 'absent(up{job="skylift"} == 1) or a_total / on (x) group_left (y) b_total > bool 0.1 offset 5m',
      want: ['a_total', 'b_total', 'up'],
    },
    {
      reason: 'aggregation clause after the argument',
      expr: 'max(skylift_oldest_not_ready_seconds) without (instance)',
      want: ['skylift_oldest_not_ready_seconds'],
    },
  ])('$reason', ({ expr, want }) => {
    expect(metricNamesInExpr(expr)).toEqual(want);
  });
});

describe('metrics the assets use and document', () => {
  const metrics = new Metrics();
  const defined = new Map(
    metrics.registry.getMetricsAsArray().map((m) => {
      const labels = (m as unknown as { labelNames: readonly string[] }).labelNames;
      const type = /^(Counter|Gauge|Histogram|Summary)$/.exec(m.constructor.name)?.[1]?.toLowerCase();
      return [m.name, { type, labels: [...labels].sort() }] as const;
    }),
  );
  const exported = (series: string): boolean => {
    if (defined.has(series)) return true;
    const base = /^(.*)_(?:bucket|sum|count)$/.exec(series)?.[1];
    return base !== undefined && defined.get(base)?.type === 'histogram';
  };

  it.each([
    ['rules.yaml', ruleExpressions()],
    ['grafana-dashboard.json', dashboardExpressions()],
  ])('%s reads only metrics src/runtime/metrics.ts defines', (_file, exprs) => {
    expect(exprs.length).toBeGreaterThan(5);
    const used = [...new Set(exprs.flatMap(metricNamesInExpr))].filter(
      (n) => !prometheusSyntheticSeries.has(n),
    );
    expect(used.length).toBeGreaterThan(5);
    expect(used.filter((n) => !exported(n))).toEqual([]);
  });

  it('the dashboard shows every metric the operator defines', () => {
    const used = new Set(dashboardExpressions().flatMap(metricNamesInExpr));
    const shown = (name: string): boolean =>
      used.has(name) || ['_bucket', '_sum', '_count'].some((s) => used.has(name + s));
    expect([...defined.keys()].filter((n) => !shown(n))).toEqual([]);
  });

  it('docs/observability.md documents exactly the defined metrics, with their types and labels', () => {
    const doc = documentedMetrics();
    expect(doc.map((d) => d.name).sort()).toEqual([...defined.keys()].sort());
    for (const d of doc) {
      expect({ name: d.name, type: d.type, labels: [...d.labels].sort() }).toEqual({
        name: d.name,
        ...defined.get(d.name),
      });
    }
  });
});

describe('oldestNotReadySeconds', () => {
  const now = Date.parse('2026-11-22T12:00:00Z');
  const obj = (created: string, ready?: { status: ConditionStatus; since: string }): ManagedObject => ({
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'DNSRecord',
    metadata: { name: 'x', namespace: 'ns', creationTimestamp: created },
    spec: {},
    ...(ready !== undefined
      ? {
          status: {
            conditions: [
              {
                type: 'Ready',
                status: ready.status,
                reason: 'R',
                message: '',
                lastTransitionTime: ready.since,
              },
            ],
          },
        }
      : {}),
  });
  it.each([
    { reason: 'no objects', objects: [], want: 0 },
    {
      reason: 'all Ready, however old',
      objects: [obj('2026-11-01T00:00:00Z', { status: 'True', since: '2026-11-01T00:01:00Z' })],
      want: 0,
    },
    {
      reason: 'not Ready since the condition last changed, not since creation',
      objects: [obj('2026-11-01T00:00:00Z', { status: 'False', since: '2026-11-22T11:30:00Z' })],
      want: 1800,
    },
    {
      reason: 'no Ready condition yet: since creation',
      objects: [obj('2026-11-22T11:59:00Z')],
      want: 60,
    },
    {
      reason: 'the longest-waiting of several, Ready ones ignored',
      objects: [
        obj('2026-11-22T10:00:00Z', { status: 'True', since: '2026-11-22T10:00:00Z' }),
        obj('2026-11-22T11:00:00Z', { status: 'Unknown', since: '2026-11-22T11:00:00Z' }),
        obj('2026-11-22T11:50:00Z', { status: 'False', since: '2026-11-22T11:50:00Z' }),
      ],
      want: 3600,
    },
  ])('$reason', ({ objects, want }) => {
    expect(oldestNotReadySeconds(objects, now)).toBe(want);
  });

  it('is exported per kind at scrape time from the registered sources', async () => {
    const metrics = new Metrics();
    let seconds = 12;
    metrics.notReadySources.push(() => ({ kind: 'ManagedDB', seconds }));
    const first = await metrics.registry.getSingleMetricAsString('skylift_oldest_not_ready_seconds');
    expect(first).toContain('skylift_oldest_not_ready_seconds{kind="ManagedDB"} 12');
    seconds = 0;
    const second = await metrics.registry.getSingleMetricAsString('skylift_oldest_not_ready_seconds');
    expect(second).toContain('skylift_oldest_not_ready_seconds{kind="ManagedDB"} 0');
  });
});
