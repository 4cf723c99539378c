// `node bench/run.ts` flags. Pure.
import { parseArgs } from 'node:util';
import { parseDuration } from '../src/operator/options.ts';
import { chartHeapLimitMiB } from '../tools/nodeFlags.ts';

/** What a bench run was asked to do; recorded as the report's `settings`. */
export interface BenchSettings {
  /** Scenario groups to run; empty: all. */
  readonly only: readonly string[];
  /** Sizes for every selected group; undefined: each group's defaults. */
  readonly sizes: readonly number[] | undefined;
  /** `--namespaces`: namespaces of the teams groups that spread over a number of them; undefined: each group's own. */
  readonly namespaces: number | undefined;
  /** The operator's `--resync-period`. */
  readonly resyncPeriodMs: number;
  /** `--idle-window`: length of the no-op resync / steady-state window (default: the resync period). */
  readonly idleWindowMs: number;
  /** Objects the bench creates or deletes at once. */
  readonly concurrency: number;
  /** Directory for the JSON report. */
  readonly outDir: string;
  /** Extra `skylift run` flags, passed through unchanged. */
  readonly operatorArgs: readonly string[];
  /** `--baseline`: the report to compare with; undefined: bench/baseline.json if it exists. */
  readonly baselinePath: string | undefined;
  /** `--save-baseline`: copy this run's report to bench/baseline.json when every scenario succeeded. */
  readonly saveBaseline: boolean;
  /**
   * `--operator-build`: run the operator as the image does, from TypeScript compiled to JavaScript
   * (`dist`, the default), or from the sources with Node's type stripping (`source`, as `make dev`).
   */
  readonly operatorBuild: 'dist' | 'source';
  /** `--operator-node-flag`: extra Node/V8 flags of the operator process, e.g. --max-old-space-size=192. */
  readonly operatorNodeFlags: readonly string[];
}

/** Usage text for `--help`. */
export const benchUsage = `Usage: node bench/run.ts [flags]   (make bench BENCH_FLAGS='…')

Runs each scenario against a fresh local stack (.skylift/bench/) with the operator
as a separate process behind a counting AWS proxy; writes <out>/<UTC time>.json
and prints a table.

  --only GROUP[,GROUP]     scenario groups (default all of these): dns, dns-10zones,
                           myingress, manageddb, dns-propagating, dns-throttled,
                           dns-10zones-throttled, dns-teams, dns-teams-flood,
                           dns-teams-bigtxt, myingress-group (MyIngresses in
                           MyIngressGroups of 10), gateway (HTTPRoutes on one
                           Gateway), myingress-rollout (last, on a node
                           cluster of its own: needs root and make node-runtime,
                           else skipped with the reason); run only when named:
                           dns-namespaces (the spread without TeamPolicies),
                           dns-teams-2accounts,
                           myingress-teams, manageddb-teams, teams-memory; or teams for
                           every teams group
  --sizes N[,N]            sizes for every selected group (default: each group's own)
  --namespaces N           namespaces dns-namespaces, dns-teams, dns-teams-2accounts,
                           myingress-teams and manageddb-teams spread over (default 50,
                           at most the size); adds -ns<N> to their scenario ids
  --resync-period DURATION operator resync period and measuring window (default 30s)
  --idle-window DURATION   length of the no-op resync window instead (e.g. 20m with
                           --resync-period 10m: every object resynced about twice)
  --concurrency N          objects created/deleted at once by the bench (default 16)
  --out DIR                report directory (default bench/results)
  --operator-arg FLAG      extra skylift run flag, repeatable (e.g. --operator-arg=--workers=8)
  --baseline PATH          report to compare with (default bench/baseline.json if it exists):
                           prints and records current/baseline per scenario
  --save-baseline          copy this run's report to bench/baseline.json (only if every
                           scenario succeeded)
  --operator-build dist|source
                           run the operator compiled to JavaScript as the image does (dist,
                           the default; compiled into the run's directory first) or from the
                           TypeScript sources (source)
  --operator-node-flag FLAG
                           extra Node flag of the operator process, repeatable (e.g.
                           --operator-node-flag=--max-old-space-size=128); default the chart's
                           heap limit (--max-old-space-size=192)
`;

/** Parses the flags; throws an Error whose message says what is wrong. */
export function parseBenchArgs(argv: readonly string[], defaultOutDir: string): BenchSettings | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      only: { type: 'string' },
      sizes: { type: 'string' },
      namespaces: { type: 'string' },
      'resync-period': { type: 'string' },
      'idle-window': { type: 'string' },
      concurrency: { type: 'string' },
      out: { type: 'string' },
      'operator-arg': { type: 'string', multiple: true },
      baseline: { type: 'string' },
      'save-baseline': { type: 'boolean' },
      'operator-build': { type: 'string' },
      'operator-node-flag': { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) return 'help';
  const list = (text: string | undefined): string[] =>
    (text ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  const sizes =
    values.sizes === undefined
      ? undefined
      : list(values.sizes).map((s) => {
          const n = Number(s);
          if (!Number.isInteger(n) || n < 1 || n > 100_000)
            throw new Error(`--sizes: want whole numbers from 1 to 100000, got ${JSON.stringify(s)}`);
          return n;
        });
  if (sizes?.length === 0) throw new Error('--sizes: give at least one size');
  const namespaces = values.namespaces === undefined ? undefined : Number(values.namespaces);
  if (namespaces !== undefined && (!Number.isInteger(namespaces) || namespaces < 1 || namespaces > 1000))
    throw new Error(`--namespaces: want 1 to 1000, got ${JSON.stringify(values.namespaces)}`);
  const concurrency = Number(values.concurrency ?? '16');
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 256)
    throw new Error(`--concurrency: want 1 to 256, got ${JSON.stringify(values.concurrency)}`);
  const resyncPeriodMs = parseDuration(values['resync-period'] ?? '30s');
  if (resyncPeriodMs < 1000) throw new Error('--resync-period: at least 1s');
  const idleWindowMs =
    values['idle-window'] !== undefined ? parseDuration(values['idle-window']) : resyncPeriodMs;
  if (idleWindowMs < 1000) throw new Error('--idle-window: at least 1s');
  if (values.baseline?.trim() === '') throw new Error('--baseline: give a file');
  const operatorBuild = values['operator-build'] ?? 'dist';
  if (operatorBuild !== 'dist' && operatorBuild !== 'source')
    throw new Error(`--operator-build: want dist or source, got ${JSON.stringify(operatorBuild)}`);
  return {
    only: list(values.only),
    sizes,
    namespaces,
    resyncPeriodMs,
    idleWindowMs,
    concurrency,
    outDir: values.out ?? defaultOutDir,
    operatorArgs: values['operator-arg'] ?? [],
    baselinePath: values.baseline,
    saveBaseline: values['save-baseline'] === true,
    operatorBuild,
    operatorNodeFlags: values['operator-node-flag'] ?? [`--max-old-space-size=${chartHeapLimitMiB}`],
  };
}
