// The benchmark report: its JSON shape, the cost curves derived from it, and
// the table printed on stdout. Pure.
import type { AwsInventory } from './lib/awsAccount.ts';
import { ratio, type Distribution } from './lib/stats.ts';
import type { BenchSettings } from './args.ts';

/** AWS calls the proxy counted in one phase. */
export interface AwsCalls {
  readonly total: number;
  readonly perResource: number;
  /** `service:Operation` → calls per resource. */
  readonly perResourceByOperation: Readonly<Record<string, number>>;
  /** Calls the proxy answered with a throttling error itself (rate-limited scenarios). */
  readonly throttled: number;
}

/** Kubernetes API requests the operator made in one phase (from skylift_kube_api_requests_total). */
export interface KubeRequests {
  /** POST, PUT, PATCH and DELETE. */
  readonly writes: number;
  readonly writesPerResource: number;
  /** Verb → requests (reads included). */
  readonly byVerb: Readonly<Record<string, number>>;
}

/** One phase of a scenario: create until all Ready, a no-op resync window, or delete until all gone. */
export interface PhaseResult {
  /** Wall time of the phase, ms: first create to last Ready, window length, or first delete to last gone. */
  readonly durationMs: number;
  /** Per resource, ms: create → Ready (create), delete request → gone (delete); absent for resync. */
  readonly perResourceMs?: Distribution;
  readonly aws: AwsCalls;
  readonly kube: KubeRequests;
  /** Reconciles the operator ran per resource (in the resync window ≈ 1: each object resynced once). */
  readonly reconcilesPerResource: number;
  /** Operator CPU (user + system) spent in the phase, seconds. */
  readonly cpuSeconds: number;
}

/** Everything measured for one scenario. */
export interface ScenarioResult {
  readonly id: string;
  readonly group: string;
  readonly kind: string;
  readonly size: number;
  readonly zones: number;
  readonly route53RatePerSecond: number | null;
  readonly status: 'ok' | 'failed';
  readonly error?: string;
  /** Objects seen Ready=True (should equal size). */
  readonly readyCount: number;
  readonly create?: PhaseResult;
  readonly resync?: PhaseResult;
  readonly delete?: PhaseResult;
  /** With everything Ready and nothing changing (the resync window), scaled to one minute. */
  readonly steadyState?: { readonly awsCallsPerMinute: number; readonly cpuSecondsPerMinute: number };
  readonly operator?: { readonly peakRssBytes: number; readonly cpuSeconds: number };
  /** AWS resources still there after every object was deleted (all should be 0). */
  readonly leftovers?: AwsInventory;
}

/** How one group's cost grows from one size to the next. */
export interface CurveStep {
  readonly from: number;
  readonly to: number;
  readonly sizeRatio: number;
  /** Ratio of time until all Ready. */
  readonly convergenceRatio: number | null;
  /** Ratio of per-resource p95. */
  readonly p95Ratio: number | null;
  /** Ratio of operator peak RSS. */
  readonly memoryRatio: number | null;
}

/** A group measured at more than one size. */
export interface CostCurve {
  readonly group: string;
  readonly points: readonly { size: number; allReadyMs: number; p95Ms: number; peakRssBytes: number }[];
  readonly steps: readonly CurveStep[];
}

/** The machine a report was measured on. */
export interface MachineInfo {
  readonly cores: number;
  readonly cpuModel: string;
  readonly totalMemoryBytes: number;
  readonly node: string;
  readonly platform: string;
  readonly gitCommit: string;
  readonly gitDirty: boolean;
  readonly loadAverageAtStart: readonly number[];
  readonly note: string;
}

/** The JSON file `bench/results/<time>.json`. */
export interface BenchReport {
  readonly schemaVersion: 1;
  /** False while a run is in progress (the file is rewritten after each scenario) or if it was cut short. */
  readonly complete: boolean;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly machine: MachineInfo;
  readonly settings: BenchSettings & { readonly operatorFlags: readonly string[] };
  readonly scenarios: readonly ScenarioResult[];
  readonly curves: readonly CostCurve[];
}

/**
 * Cost curves: for each group with successful results at two or more sizes,
 * its points by ascending size and the ratios between neighbouring sizes.
 */
export function costCurves(results: readonly ScenarioResult[]): CostCurve[] {
  const byGroup = new Map<string, ScenarioResult[]>();
  for (const r of results) {
    if (r.status !== 'ok' || r.create === undefined || r.operator === undefined) continue;
    byGroup.set(r.group, [...(byGroup.get(r.group) ?? []), r]);
  }
  const curves: CostCurve[] = [];
  for (const [group, rs] of byGroup) {
    if (rs.length < 2) continue;
    const points = [...rs]
      .sort((a, b) => a.size - b.size)
      .map((r) => ({
        size: r.size,
        allReadyMs: r.create?.durationMs ?? 0,
        p95Ms: r.create?.perResourceMs?.p95 ?? 0,
        peakRssBytes: r.operator?.peakRssBytes ?? 0,
      }));
    const steps: CurveStep[] = [];
    for (let i = 1; i < points.length; i++) {
      const a = points[i - 1];
      const b = points[i];
      if (a === undefined || b === undefined) continue;
      steps.push({
        from: a.size,
        to: b.size,
        sizeRatio: ratio(a.size, b.size) ?? 0,
        convergenceRatio: ratio(a.allReadyMs, b.allReadyMs),
        p95Ratio: ratio(a.p95Ms, b.p95Ms),
        memoryRatio: ratio(a.peakRssBytes, b.peakRssBytes),
      });
    }
    curves.push({ group, points, steps });
  }
  return curves;
}

const seconds = (ms: number | undefined): string => (ms === undefined ? '-' : `${(ms / 1000).toFixed(1)}s`);
const num = (n: number | undefined, digits = 1): string => (n === undefined ? '-' : n.toFixed(digits));
const mib = (bytes: number | undefined): string =>
  bytes === undefined ? '-' : `${Math.round(bytes / 1048576)}`;

/** Pads cells into aligned columns (first column left, others right). */
function columns(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** Sum of a resource's AWS calls that left nothing: `left` is the number of AWS resources still there. */
function leftoverTotal(l: AwsInventory | undefined): number | undefined {
  return l === undefined ? undefined : l.route53Records + l.loadBalancers + l.targetGroups + l.dbInstances;
}

/**
 * The short stdout table: one row per scenario (convergence, per-resource
 * latency, AWS calls and Kubernetes writes per resource by phase, memory,
 * CPU, steady state, leftovers), failures with their error, then the cost
 * curves. Times in seconds, memory in MiB.
 */
export function renderTable(report: BenchReport): string {
  const header = [
    'scenario',
    'N',
    'all Ready',
    'p50',
    'p95',
    'max',
    'AWS/res create',
    'resync',
    'delete',
    'kube writes/res create',
    'resync',
    'delete',
    'peak MiB',
    'CPU s',
    'AWS/min idle',
    'CPU s/min idle',
    'left',
  ];
  const rows: string[][] = [header];
  for (const r of report.scenarios) {
    if (r.status === 'failed') {
      rows.push([r.id, String(r.size), 'FAILED']);
      continue;
    }
    const d = r.create?.perResourceMs;
    rows.push([
      r.id,
      String(r.size),
      seconds(r.create?.durationMs),
      seconds(d?.p50),
      seconds(d?.p95),
      seconds(d?.max),
      num(r.create?.aws.perResource, 2),
      num(r.resync?.aws.perResource, 2),
      num(r.delete?.aws.perResource, 2),
      num(r.create?.kube.writesPerResource, 2),
      num(r.resync?.kube.writesPerResource, 2),
      num(r.delete?.kube.writesPerResource, 2),
      mib(r.operator?.peakRssBytes),
      num(r.operator?.cpuSeconds),
      num(r.steadyState?.awsCallsPerMinute),
      num(r.steadyState?.cpuSecondsPerMinute, 2),
      String(leftoverTotal(r.leftovers) ?? '-'),
    ]);
  }
  const lines = columns(rows);
  for (const r of report.scenarios)
    if (r.status === 'failed') lines.push(`${r.id} failed: ${r.error ?? 'unknown error'}`);
  for (const c of report.curves) {
    const steps = c.steps.map(
      (s) =>
        `${s.from}→${s.to} (×${s.sizeRatio}): all Ready ×${s.convergenceRatio ?? '-'}, p95 ×${s.p95Ratio ?? '-'}, peak RSS ×${s.memoryRatio ?? '-'}`,
    );
    lines.push(`cost curve ${c.group}: ${steps.join('; ')}`);
  }
  return `${lines.join('\n')}\n`;
}

/** A report's file name: its start time in UTC, e.g. `2026-05-01T12-34-56Z.json`. Pure. */
export function reportFileName(at: Date): string {
  return `${at
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/:/g, '-')}.json`;
}
