// `node bench/chaos.ts` flags. Pure.
import { parseArgs } from 'node:util';
import { parseDuration } from '../src/operator/options.ts';

/** What a chaos run was asked to do (the seed is chosen later when not given). */
export interface ChaosArgs {
  /** 2: two namespaces, each with a TeamPolicy role in its own account; 1: the operator's own account only. */
  readonly accounts: 1 | 2;
  readonly resources: number;
  readonly kills: number;
  readonly leaderKills: number;
  readonly apiServerRestarts: number;
  readonly etcdRestarts: number;
  readonly seed: number | undefined;
  readonly faults: boolean;
  readonly killDelayMs: readonly [number, number];
  readonly convergeTimeoutMs: number;
  readonly deleteTimeoutMs: number;
  readonly deleteStormMs: number;
  readonly faultedConvergeMs: number;
  readonly outDir: string;
  /** Lifecycle model runs after the storm (0: none). */
  readonly lifecycleRuns: number;
  /** Operations per lifecycle run. */
  readonly lifecycleSteps: number;
  /** fast-check replay path of one failed lifecycle run. */
  readonly lifecyclePath: string | undefined;
  /** How long each lifecycle step may take to settle. */
  readonly lifecycleSettleMs: number;
  /** Only the lifecycle model, no storm. */
  readonly lifecycleOnly: boolean;
  /** Which lifecycle operations are drawn: every kind, or only shared load balancers (groups, Gateways). */
  readonly lifecycleCommands: 'all' | 'shared';
}

/** Usage text for `--help`. */
export const chaosUsage = `Usage: node bench/chaos.ts [flags]   (make chaos CHAOS_FLAGS='…')

Starts its own local stack (.skylift/chaos/), runs the operator behind a fault
proxy, converges a mixed workload while killing the operator, restarting
kube-apiserver and etcd, injecting AWS faults and killing the leader of two replicas;
deletes half; checks the invariants; writes <out>/chaos-<UTC time>.json.
Exit status 1 when an invariant breaks.

  --accounts 1|2           2 (default): two namespaces, each served by its own TeamPolicy whose role
                           is in its own account (111111111111, 222222222222); invariants per account.
                           1: one namespace in the operator's own account, no TeamPolicy
  --resources N            Skylift objects, split over the namespaces (default 200: 60 % DNSRecord,
                           25 % MyIngress, 15 % ManagedDB; at least 3 per namespace)
  --kills N                SIGKILLs of the operator (default 20)
  --leader-kills N         SIGKILLs of the leader of two replicas (default 2)
  --apiserver-restarts N   kube-apiserver restarts while converging (default 1)
  --etcd-restarts N        etcd restarts (kube-apiserver stays up) while converging (default 1)
  --seed N                 replay a run's schedule (printed at the start of every run)
  --no-faults              no AWS faults (kills and restarts only)
  --kill-delay MIN..MAX    random pause before each kill (default 1s..5s)
  --faulted-converge D     faults stay on this long after the leader failover, without kills (default 30s)
  --converge-timeout D     deadline for all objects Ready after the storm (default 10m)
  --delete-timeout D       deadline for deleted objects to be gone (default 5m)
  --delete-storm D         the delete phase's fault window lasts at least this long (default 20s)
  --out DIR                report directory (default bench/results)

The lifecycle model (the one \`make test\` runs short; see docs/benchmarks.md#lifecycle-model):
  --lifecycle-runs N       lifecycle model runs after the storm, each on a fresh namespace,
                           zone and operator (default 4; 0 skips it)
  --lifecycle-steps N      operations per run (default 50)
  --lifecycle-path PATH    replay one failed run (fast-check path printed with the failure; use with --seed)
  --lifecycle-settle D     deadline for every step to settle (default 60s)
  --lifecycle-only         only the lifecycle model, no storm
  --lifecycle-commands C   all (default), or shared: only MyIngressGroups, members, Gateways
                           and HTTPRoutes, with operator restarts and deletions
`;

function whole(flag: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`--${flag}: want a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`);
  return n;
}

/** Parses the flags; throws an Error whose message says what is wrong. */
export function parseChaosArgs(argv: readonly string[], defaultOutDir: string): ChaosArgs | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      accounts: { type: 'string' },
      resources: { type: 'string' },
      kills: { type: 'string' },
      'leader-kills': { type: 'string' },
      'apiserver-restarts': { type: 'string' },
      'etcd-restarts': { type: 'string' },
      seed: { type: 'string' },
      'no-faults': { type: 'boolean' },
      'kill-delay': { type: 'string' },
      'converge-timeout': { type: 'string' },
      'delete-timeout': { type: 'string' },
      'delete-storm': { type: 'string' },
      'faulted-converge': { type: 'string' },
      out: { type: 'string' },
      'lifecycle-runs': { type: 'string' },
      'lifecycle-steps': { type: 'string' },
      'lifecycle-path': { type: 'string' },
      'lifecycle-settle': { type: 'string' },
      'lifecycle-only': { type: 'boolean' },
      'lifecycle-commands': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) return 'help';
  const delayText = values['kill-delay'] ?? '1s..5s';
  const m = /^([^.]+)\.\.([^.]+)$/.exec(delayText);
  if (m === null)
    throw new Error(`--kill-delay: want MIN..MAX, e.g. 1s..5s, got ${JSON.stringify(delayText)}`);
  const killDelayMs: [number, number] = [parseDuration(m[1] ?? ''), parseDuration(m[2] ?? '')];
  if (killDelayMs[0] > killDelayMs[1]) throw new Error('--kill-delay: MIN is above MAX');
  const accounts = whole('accounts', values.accounts, 2, 1, 2) as 1 | 2;
  const lifecycleCommands = values['lifecycle-commands'] ?? 'all';
  if (lifecycleCommands !== 'all' && lifecycleCommands !== 'shared')
    throw new Error(`--lifecycle-commands: want all or shared, got ${JSON.stringify(lifecycleCommands)}`);
  return {
    accounts,
    resources: whole('resources', values.resources, 200, 3 * accounts, 10_000),
    kills: whole('kills', values.kills, 20, 0, 1000),
    leaderKills: whole('leader-kills', values['leader-kills'], 2, 0, 100),
    apiServerRestarts: whole('apiserver-restarts', values['apiserver-restarts'], 1, 0, 100),
    etcdRestarts: whole('etcd-restarts', values['etcd-restarts'], 1, 0, 100),
    seed: values.seed === undefined ? undefined : whole('seed', values.seed, 0, 0, 4294967295),
    faults: values['no-faults'] !== true,
    killDelayMs,
    convergeTimeoutMs: parseDuration(values['converge-timeout'] ?? '10m'),
    deleteTimeoutMs: parseDuration(values['delete-timeout'] ?? '5m'),
    deleteStormMs: parseDuration(values['delete-storm'] ?? '20s'),
    faultedConvergeMs: parseDuration(values['faulted-converge'] ?? '30s'),
    outDir: values.out ?? defaultOutDir,
    lifecycleRuns: whole('lifecycle-runs', values['lifecycle-runs'], 4, 0, 1000),
    lifecycleSteps: whole('lifecycle-steps', values['lifecycle-steps'], 50, 1, 10_000),
    lifecyclePath: values['lifecycle-path'],
    lifecycleSettleMs: parseDuration(values['lifecycle-settle'] ?? '60s'),
    lifecycleOnly: values['lifecycle-only'] === true,
    lifecycleCommands,
  };
}
