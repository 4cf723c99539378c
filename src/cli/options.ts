import { parseArgs } from 'node:util';
import type { LogFormat } from '../runtime/logger.ts';

/** Everything `skylift run` can be told, from flags or environment. */
export interface RunOptions {
  /** Path to a kubeconfig; undefined: $KUBECONFIG, ~/.kube/config, or in-cluster. */
  readonly kubeconfig: string | undefined;
  readonly region: string;
  /** Namespaces to watch; empty: all. */
  readonly namespaces: readonly string[];
  readonly labelSelector: string | undefined;
  readonly workers: number;
  readonly resyncPeriodMs: number;
  /** `host:port` for /metrics, /healthz, /readyz. */
  readonly probeAddress: string;
  readonly leaderElection: boolean;
  readonly leaderElectionNamespace: string;
  readonly leaderElectionId: string;
  readonly logLevel: string;
  readonly logFormat: LogFormat;
  /** Written into the `skylift.dev/cluster` ownership tag. */
  readonly clusterId: string;
  readonly shutdownDeadlineMs: number;
  /** DNSRecord: prefix of ownership TXT record names. */
  readonly txtOwnerPrefix: string;
  /** DNSRecord: how long a zone collects changes before one Route 53 call. */
  readonly route53BatchWindowMs: number;
  /** DNSRecord: maximum age of a zone's record snapshot. */
  readonly route53ZoneCacheTtlMs: number;
  /** ManagedDB: how often a DB instance in a transitional state is described. */
  readonly rdsPollIntervalMs: number;
}

/** Thrown for bad flags or environment; the message says what to fix. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const runUsage = `Usage: skylift run [flags]

Runs the operator against the cluster in the kubeconfig (or in-cluster).
Every flag can also be set by the environment variable in brackets.

  --kubeconfig PATH              kubeconfig file [KUBECONFIG]; default ~/.kube/config or in-cluster
  --region REGION                AWS region [AWS_REGION, AWS_DEFAULT_REGION] (required)
  --namespaces NS1,NS2           only watch these namespaces [SKYLIFT_NAMESPACES]; default all
  --label-selector SEL           only manage CRs matching SEL [SKYLIFT_LABEL_SELECTOR] (to shard)
  --workers N                    concurrent reconciles per kind [SKYLIFT_WORKERS] (default 16)
  --resync-period DURATION       drift check period, e.g. 10m, 30s [SKYLIFT_RESYNC_PERIOD] (default 10m)
  --probe-address HOST:PORT      /metrics, /healthz, /readyz [SKYLIFT_PROBE_ADDRESS] (default :8080)
  --leader-elect BOOL            hold a Lease before reconciling [SKYLIFT_LEADER_ELECT] (default true)
  --leader-election-namespace NS [SKYLIFT_LEADER_ELECTION_NAMESPACE, POD_NAMESPACE] (default skylift-system)
  --leader-election-id NAME      Lease name [SKYLIFT_LEADER_ELECTION_ID] (default skylift-leader)
  --cluster-id ID                value of the skylift.dev/cluster tag [SKYLIFT_CLUSTER_ID] (default default)
  --log-level LEVEL              trace|debug|info|warn|error [SKYLIFT_LOG_LEVEL] (default info)
  --log-format FORMAT            json|text [SKYLIFT_LOG_FORMAT] (default json)
  --shutdown-deadline DURATION   time for in-flight reconciles on SIGTERM [SKYLIFT_SHUTDOWN_DEADLINE] (default 20s)
  --txt-owner-prefix PREFIX      name prefix of DNSRecord ownership TXT records [SKYLIFT_TXT_OWNER_PREFIX] (default _skylift-owner)
  --route53-batch-window DURATION  time a zone collects changes before one Route 53 call [SKYLIFT_ROUTE53_BATCH_WINDOW] (default 1s)
  --route53-zone-cache-ttl DURATION  maximum age of a zone's record listing used to detect drift [SKYLIFT_ROUTE53_ZONE_CACHE_TTL] (default 30s)
  --rds-poll-interval DURATION   how often a creating/modifying DB instance is checked [SKYLIFT_RDS_POLL_INTERVAL] (default 15s)
`;

/** Parses `10m`, `30s`, `1500ms`, `1h` into milliseconds. Pure. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim());
  if (m === null)
    throw new UsageError(`invalid duration ${JSON.stringify(text)}: use e.g. 500ms, 30s, 10m, 1h`);
  const n = Number(m[1]);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
  return Math.round(n * unit);
}

function parseBool(name: string, text: string): boolean {
  if (/^(true|1|yes)$/i.test(text)) return true;
  if (/^(false|0|no)$/i.test(text)) return false;
  throw new UsageError(`--${name}: want true or false, got ${JSON.stringify(text)}`);
}

/** Flags win over environment, environment over defaults. Pure given `env`. */
export function parseRunOptions(argv: readonly string[], env: NodeJS.ProcessEnv): RunOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        kubeconfig: { type: 'string' },
        region: { type: 'string' },
        namespaces: { type: 'string' },
        'label-selector': { type: 'string' },
        workers: { type: 'string' },
        'resync-period': { type: 'string' },
        'probe-address': { type: 'string' },
        'leader-elect': { type: 'string' },
        'leader-election-namespace': { type: 'string' },
        'leader-election-id': { type: 'string' },
        'cluster-id': { type: 'string' },
        'log-level': { type: 'string' },
        'log-format': { type: 'string' },
        'shutdown-deadline': { type: 'string' },
        'txt-owner-prefix': { type: 'string' },
        'route53-batch-window': { type: 'string' },
        'route53-zone-cache-ttl': { type: 'string' },
        'rds-poll-interval': { type: 'string' },
      },
    }));
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const get = (flag: string, ...envs: string[]): string | undefined => {
    const v = values[flag];
    if (typeof v === 'string') return v;
    for (const e of envs) {
      const ev = env[e];
      if (ev !== undefined && ev !== '') return ev;
    }
    return undefined;
  };
  const region = get('region', 'AWS_REGION', 'AWS_DEFAULT_REGION');
  if (region === undefined) throw new UsageError('no AWS region: set --region or AWS_REGION');
  const workersText = get('workers', 'SKYLIFT_WORKERS') ?? '16';
  const workers = Number(workersText);
  if (!Number.isInteger(workers) || workers < 1 || workers > 256) {
    throw new UsageError(`--workers: want an integer from 1 to 256, got ${JSON.stringify(workersText)}`);
  }
  const logFormat = get('log-format', 'SKYLIFT_LOG_FORMAT') ?? 'json';
  if (logFormat !== 'json' && logFormat !== 'text')
    throw new UsageError(`--log-format: want json or text, got ${JSON.stringify(logFormat)}`);
  const logLevel = get('log-level', 'SKYLIFT_LOG_LEVEL') ?? 'info';
  if (!['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'].includes(logLevel)) {
    throw new UsageError(`--log-level: unknown level ${JSON.stringify(logLevel)}`);
  }
  const namespaces = (get('namespaces', 'SKYLIFT_NAMESPACES') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return {
    kubeconfig: get('kubeconfig', 'KUBECONFIG'),
    region,
    namespaces,
    labelSelector: get('label-selector', 'SKYLIFT_LABEL_SELECTOR'),
    workers,
    resyncPeriodMs: parseDuration(get('resync-period', 'SKYLIFT_RESYNC_PERIOD') ?? '10m'),
    probeAddress: get('probe-address', 'SKYLIFT_PROBE_ADDRESS') ?? ':8080',
    leaderElection: parseBool('leader-elect', get('leader-elect', 'SKYLIFT_LEADER_ELECT') ?? 'true'),
    leaderElectionNamespace:
      get('leader-election-namespace', 'SKYLIFT_LEADER_ELECTION_NAMESPACE', 'POD_NAMESPACE') ??
      'skylift-system',
    leaderElectionId: get('leader-election-id', 'SKYLIFT_LEADER_ELECTION_ID') ?? 'skylift-leader',
    clusterId: get('cluster-id', 'SKYLIFT_CLUSTER_ID') ?? 'default',
    logLevel,
    logFormat,
    shutdownDeadlineMs: parseDuration(get('shutdown-deadline', 'SKYLIFT_SHUTDOWN_DEADLINE') ?? '20s'),
    txtOwnerPrefix: parsePrefix(get('txt-owner-prefix', 'SKYLIFT_TXT_OWNER_PREFIX') ?? '_skylift-owner'),
    route53BatchWindowMs: parseDuration(get('route53-batch-window', 'SKYLIFT_ROUTE53_BATCH_WINDOW') ?? '1s'),
    route53ZoneCacheTtlMs: parseDuration(
      get('route53-zone-cache-ttl', 'SKYLIFT_ROUTE53_ZONE_CACHE_TTL') ?? '30s',
    ),
    rdsPollIntervalMs: parseDuration(get('rds-poll-interval', 'SKYLIFT_RDS_POLL_INTERVAL') ?? '15s'),
  };
}

function parsePrefix(prefix: string): string {
  if (!/^[a-z0-9_][a-z0-9_-]{0,40}$/i.test(prefix)) {
    throw new UsageError(
      `--txt-owner-prefix: want one DNS label of letters, digits, _ and - (at most 41), got ${JSON.stringify(prefix)}`,
    );
  }
  return prefix;
}
