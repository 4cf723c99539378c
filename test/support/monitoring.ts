// Reads what the monitoring assets refer to — the PromQL in
// deploy/monitoring/rules.yaml and the Grafana dashboard, the metrics table in
// docs/observability.md — and what /metrics exposes, so tests can compare them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from '../../dev/paths.ts';

/** Series Prometheus itself makes for every target; the operator never exports them. */
export const prometheusSyntheticSeries: ReadonlySet<string> = new Set(['up']);

const keywords = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'offset',
  'bool',
  'and',
  'or',
  'unless',
  'atan2',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression reads: identifiers that are not
 * functions or aggregations (followed by `(`), keywords, label names
 * (inside `{}` or `by/without/on/ignoring/group_*` lists), durations, or
 * anything inside strings. Pure.
 */
export function metricNamesInExpr(expr: string): string[] {
  const text = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const m of text.matchAll(/[A-Za-z_:][\w:]*|\d[\w.]*/g)) {
    const token = m[0];
    if (/^\d/.test(token) || keywords.has(token.toLowerCase())) continue;
    const rest = text.slice(m.index + token.length);
    if (/^\s*\(/.test(rest)) continue; // a function or an aggregation
    names.add(token);
  }
  return [...names].sort();
}

/** The alerting and recording rule expressions of a Prometheus rules file's `groups`. */
export function ruleExpressions(path = join(repoRoot, 'deploy/monitoring/rules.yaml')): string[] {
  const doc = parse(readFileSync(path, 'utf8')) as { groups: { rules: { expr: string }[] }[] };
  return doc.groups.flatMap((g) => g.rules.map((r) => r.expr));
}

interface DashboardPanel {
  readonly targets?: readonly { readonly expr?: string }[];
  readonly panels?: readonly DashboardPanel[];
}

/** Every PromQL `expr` of the Grafana dashboard's panel targets (rows included). */
export function dashboardExpressions(
  path = join(repoRoot, 'deploy/monitoring/grafana-dashboard.json'),
): string[] {
  const dash = JSON.parse(readFileSync(path, 'utf8')) as { panels: DashboardPanel[] };
  const walk = (panels: readonly DashboardPanel[]): string[] =>
    panels.flatMap((p) => [
      ...(p.targets ?? []).flatMap((t) => (t.expr !== undefined ? [t.expr] : [])),
      ...walk(p.panels ?? []),
    ]);
  return walk(dash.panels);
}

/** One row of the metrics reference table in docs/observability.md. */
export interface DocumentedMetric {
  readonly name: string;
  readonly type: string;
  readonly labels: string[];
}

/**
 * The metrics reference table of docs/observability.md: rows whose first cell
 * is a backticked metric name, then its type, then its labels (backticked,
 * comma separated, `—` for none).
 */
export function documentedMetrics(path = join(repoRoot, 'docs/observability.md')): DocumentedMetric[] {
  const out: DocumentedMetric[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const name = /^`([a-z_:][a-z0-9_:]*)`$/.exec(cells[1] ?? '')?.[1];
    if (name === undefined || cells.length < 5) continue;
    const labels = [...(cells[3] ?? '').matchAll(/`([a-z_][a-z0-9_]*)`/g)].map((m) => m[1] ?? '');
    out.push({ name, type: cells[2] ?? '', labels });
  }
  return out;
}

/** One sample line of an exposition. */
export interface Sample {
  /** The series name, with a histogram's _bucket/_sum/_count suffix. */
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A scraped Prometheus text exposition. */
export interface Exposition {
  /** Metric family name → TYPE (counter, gauge, histogram, summary, untyped). */
  readonly types: ReadonlyMap<string, string>;
  readonly samples: readonly Sample[];
}

/** Parses the Prometheus text format (what prom-client writes). Pure. */
export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type !== null) {
      types.set(type[1] ?? '', type[2] ?? '');
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (m === null) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1] ?? ''] = l[2] ?? '';
    samples.push({ name: m[1] ?? '', labels, value: Number(m[3]) });
  }
  return { types, samples };
}

/**
 * The family a series name belongs to in `exposition`: itself, or for a
 * histogram's or summary's `_bucket`/`_sum`/`_count` series its base name;
 * undefined when the operator does not export it.
 */
export function familyOf(name: string, exposition: Exposition): string | undefined {
  if (exposition.types.has(name)) return name;
  const base = /^(.*)_(?:bucket|sum|count)$/.exec(name)?.[1];
  if (base === undefined) return undefined;
  const type = exposition.types.get(base);
  return type === 'histogram' || (type === 'summary' && !name.endsWith('_bucket')) ? base : undefined;
}

/** The value of the first sample of `name` carrying all of `labels`; undefined if none does. */
export function sampleValue(
  exposition: Exposition,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number | undefined {
  return exposition.samples.find(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  )?.value;
}
