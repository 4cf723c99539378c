// Comparing a run with a saved baseline report (bench/baseline.json): the
// ratio current / baseline of a few costs per scenario. The baseline may be
// any earlier report, so it is read as untyped JSON and a field it lacks
// gives no ratio (null), never NaN. Pure.
import type { ScenarioResult } from '../report.ts';
import { ratio } from './stats.ts';

/** What sits at `path` (object keys) in `value`, or undefined where the path breaks off. */
function valueAt(value: unknown, path: readonly string[]): unknown {
  let at: unknown = value;
  for (const key of path) {
    if (typeof at !== 'object' || at === null || !(key in at)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/** The finite number at `path` in `value`, or undefined (missing, not a number, NaN, ±Infinity). */
export function numberAt(value: unknown, path: readonly string[]): number | undefined {
  const at = valueAt(value, path);
  return typeof at === 'number' && Number.isFinite(at) ? at : undefined;
}

/** The string at `path` in `value`, or null. */
function stringAt(value: unknown, path: readonly string[]): string | null {
  const at = valueAt(value, path);
  return typeof at === 'string' ? at : null;
}

/** `numberAt(value, path)` per object of the scenario's size, or undefined when either is missing or the size is 0. */
function perObject(scenario: unknown, path: readonly string[], scale = 1): number | undefined {
  const v = numberAt(scenario, path);
  const size = numberAt(scenario, ['size']);
  return v === undefined || size === undefined || size === 0 ? undefined : (v * scale) / size;
}

/** What the comparison looks at, in table order. */
export const comparedMetricNames = [
  'allReadyMs',
  'createRequestsMs',
  'afterLastCreateMs',
  'createCpuMsPerObject',
  'cpuMsPerObject',
  'peakRssBytes',
  'createKubeWritesPerObject',
  'createAwsCallsPerObject',
  'resyncAwsCallsPerObject',
] as const;

/** A name from `comparedMetricNames`. */
export type ComparedMetricName = (typeof comparedMetricNames)[number];

/**
 * How each compared metric is read from a scenario of any report version.
 * Per-object costs are computed from totals every version has (so they are
 * unrounded and comparable with reports from before schemaVersion 2); the
 * create split exists only from schemaVersion 2.
 */
const readers: Readonly<Record<ComparedMetricName, (scenario: unknown) => number | undefined>> = {
  /** First create request to last object Ready. */
  allReadyMs: (s) => numberAt(s, ['create', 'durationMs']),
  /** The bench's own creating. */
  createRequestsMs: (s) => numberAt(s, ['create', 'requestsMs']),
  /** Last create answered to last object Ready. */
  afterLastCreateMs: (s) => numberAt(s, ['create', 'afterLastRequestMs']),
  createCpuMsPerObject: (s) => perObject(s, ['create', 'cpuSeconds'], 1000),
  cpuMsPerObject: (s) => perObject(s, ['operator', 'cpuSeconds'], 1000),
  peakRssBytes: (s) => numberAt(s, ['operator', 'peakRssBytes']),
  createKubeWritesPerObject: (s) => perObject(s, ['create', 'kube', 'writes']),
  createAwsCallsPerObject: (s) => perObject(s, ['create', 'aws', 'total']),
  resyncAwsCallsPerObject: (s) => perObject(s, ['resync', 'aws', 'total']),
};

/** One metric of one scenario in both runs. */
export interface MetricComparison {
  /** This run's value (per-object values to 3 decimals); null if not measured. */
  readonly current: number | null;
  /** The baseline's value; null if it lacks the field (an older report) or did not measure it. */
  readonly baseline: number | null;
  /** current / baseline to 2 decimals; null when either is null or the baseline is 0. */
  readonly ratio: number | null;
}

/** A scenario id present, and successful, in both runs. */
export interface ScenarioComparison {
  readonly id: string;
  readonly metrics: Readonly<Record<ComparedMetricName, MetricComparison>>;
}

/**
 * The report's `baseline` section: which baseline, the scenarios compared
 * (in this run's order) and those that were not, with why.
 */
export interface BaselineComparison {
  /** The baseline file as given (relative to the repository when inside it). */
  readonly file: string;
  /** The baseline report's own `startedAt`, `machine.gitCommit` and `schemaVersion`, when it has them. */
  readonly startedAt: string | null;
  readonly gitCommit: string | null;
  readonly schemaVersion: number | null;
  readonly scenarios: readonly ScenarioComparison[];
  readonly notCompared: readonly { readonly id: string; readonly reason: string }[];
}

/** Parses a baseline file's text; throws, naming the file, unless it is JSON with a `scenarios` array. */
export function parseBaseline(text: string, file: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`baseline ${file}: not JSON: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
  if (!Array.isArray(valueAt(parsed, ['scenarios'])))
    throw new Error(`baseline ${file}: not a bench report (no "scenarios" list)`);
  return parsed;
}

const round3 = (n: number | undefined): number | null =>
  n === undefined ? null : Math.round(n * 1000) / 1000;

/**
 * Compares this run's scenarios with those of `baseline` (a parsed report of
 * any version) by id: for each id successful in both, every compared metric
 * with its ratio current / baseline. Scenarios failed in either run or absent
 * from the baseline are listed in `notCompared`.
 */
export function compareWithBaseline(
  current: readonly ScenarioResult[],
  baseline: unknown,
  file: string,
): BaselineComparison {
  const raw = valueAt(baseline, ['scenarios']);
  const baselineScenarios: unknown[] = Array.isArray(raw) ? (raw as unknown[]) : [];
  const byId = new Map<string, unknown>();
  for (const s of baselineScenarios) {
    const id = stringAt(s, ['id']);
    if (id !== null) byId.set(id, s);
  }
  const scenarios: ScenarioComparison[] = [];
  const notCompared: { id: string; reason: string }[] = [];
  for (const r of current) {
    const before = byId.get(r.id);
    if (r.status === 'skipped') notCompared.push({ id: r.id, reason: 'skipped in this run' });
    else if (r.status !== 'ok') notCompared.push({ id: r.id, reason: 'failed in this run' });
    else if (before === undefined) notCompared.push({ id: r.id, reason: 'not in the baseline' });
    else if (stringAt(before, ['status']) !== 'ok')
      notCompared.push({ id: r.id, reason: 'failed in the baseline' });
    else {
      const metrics = Object.fromEntries(
        comparedMetricNames.map((name) => {
          const now = readers[name](r);
          const then = readers[name](before);
          return [name, { current: round3(now), baseline: round3(then), ratio: ratio(then, now) }];
        }),
      ) as Record<ComparedMetricName, MetricComparison>;
      scenarios.push({ id: r.id, metrics });
    }
  }
  return {
    file,
    startedAt: stringAt(baseline, ['startedAt']),
    gitCommit: stringAt(baseline, ['machine', 'gitCommit']),
    schemaVersion: numberAt(baseline, ['schemaVersion']) ?? null,
    scenarios,
    notCompared,
  };
}
