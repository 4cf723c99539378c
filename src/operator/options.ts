import { parseArgs } from 'node:util';
import type { ConfiguredKind, KindFlag, KindModule } from '../kinds/module.ts';
import { kinds } from '../kinds/registry.ts';
import { budgetedServices } from '../apis/teampolicy.ts';
import { awsTimeoutDefaults } from '../providers/aws/clients.ts';
import { kubeRequestTimeoutMs } from '../runtime/kube/client.ts';
import type { LogFormat } from '../runtime/logger.ts';
import { isGatewayApiMode, type GatewayApiMode } from '../gatewayapi/frontEnd.ts';
import {
  defaultControllerSettings,
  formatDuration,
  parseDuration as parseSettingsDuration,
  SettingsError,
  type ControllerSettings,
} from '../runtime/settings.ts';

/** Everything `skylift run` can be told, from flags or environment. */
export interface RunOptions extends ControllerSettings {
  /** Path to a kubeconfig; undefined: $KUBECONFIG, ~/.kube/config, or in-cluster. */
  readonly kubeconfig: string | undefined;
  readonly region: string;
  /** Only TeamPolicies matching this label selector apply (undefined: all). */
  readonly teamPolicySelector: string | undefined;
  /** A namespace no TeamPolicy selects is refused even while no TeamPolicy exists (fails closed). */
  readonly teamPolicyRequired: boolean;
  /** `host:port` for /metrics, /healthz, /readyz. */
  readonly probeAddress: string;
  readonly leaderElection: boolean;
  readonly leaderElectionNamespace: string;
  readonly leaderElectionId: string;
  readonly logLevel: string;
  readonly logFormat: LogFormat;
  readonly shutdownDeadlineMs: number;
  /** Deadline of one AWS HTTP attempt (the SDK makes up to 3). */
  readonly awsTimeoutMs: number;
  /**
   * Every account's default request budget by service (requests/s); a TeamPolicy's
   * spec.aws.requestsPerSecond sets its account's. Empty: the built-in defaults (Route 53 10).
   */
  readonly awsRequestsPerSecond: Readonly<Record<string, number>>;
  /** Deadline of one Kubernetes API request (watch streams excepted). */
  readonly kubeTimeoutMs: number;
  /** Every kind of the registry, configured from its own flags. */
  readonly kinds: readonly ConfiguredKind[];
  /** `--gateway-api`: serve the Gateway API when the cluster has its CRDs (`auto`), or never (`off`). */
  readonly gatewayApi: GatewayApiMode;
}

/** Thrown for bad flags or environment; the message says what to fix. */
export class UsageError extends SettingsError {
  override readonly name = 'UsageError';
}

/**
 * Every flag the kinds of `registry` read, once each by name: each kind's own, then the shared
 * flags of a kind whose owner is not in the registry. Pure.
 */
export function registryFlags(registry: readonly KindModule[] = kinds): KindFlag[] {
  const byName = new Map<string, KindFlag>();
  for (const f of registry.flatMap((k) => k.flags)) byName.set(f.name, f);
  for (const f of registry.flatMap((k) => k.sharedFlags ?? []))
    if (!byName.has(f.name)) byName.set(f.name, f);
  return [...byName.values()];
}

/** Usage lines of every kind's flags, as `skylift run --help` and `skylift trace --help` print them. Pure. */
export function kindFlagUsage(registry: readonly KindModule[] = kinds): string {
  return registryFlags(registry)
    .map((f) => {
      const head = `  --${f.name} ${f.placeholder}`;
      return `${head.length < 32 ? head.padEnd(32) : `${head} `} ${f.usage.replace(/ \(default/, ` [${f.env}] (default`)}`;
    })
    .join('\n');
}

/** The parseArgs options of every kind's flags. */
export function kindFlagOptions(registry: readonly KindModule[] = kinds): Record<string, { type: 'string' }> {
  return Object.fromEntries(registryFlags(registry).map((f) => [f.name, { type: 'string' as const }]));
}

/**
 * Every kind configured from its flags and shared flags (`get` reads a flag or its environment
 * variable); a kind's SettingsError becomes a UsageError.
 */
export function configureKinds(
  get: (flag: KindFlag) => string | undefined,
  registry: readonly KindModule[] = kinds,
): readonly ConfiguredKind[] {
  return registry.map((k) => {
    const values = new Map<string, string>();
    for (const f of [...k.flags, ...(k.sharedFlags ?? [])]) {
      const v = get(f);
      if (v !== undefined) values.set(f.name, v);
    }
    try {
      return k.configure(values);
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
  });
}

export const runUsage = `Usage: skylift run [flags]

Runs the operator against the cluster in the kubeconfig (or in-cluster).
Every flag can also be set by the environment variable in brackets.

  --kubeconfig PATH              kubeconfig file; default the files KUBECONFIG lists (merged as kubectl
                                 does), ~/.kube/config, or in-cluster
  --region REGION                AWS region [AWS_REGION, AWS_DEFAULT_REGION] (required)
  --namespaces NS1,NS2           only watch these namespaces [SKYLIFT_NAMESPACES]; default all
  --label-selector SEL           only manage CRs matching SEL [SKYLIFT_LABEL_SELECTOR] (to shard)
  --team-policy-selector SEL     only TeamPolicies matching SEL apply to this operator
                                 [SKYLIFT_TEAM_POLICY_SELECTOR] (for several installs in one cluster); default all
  --team-policy-required BOOL    serve only namespaces a TeamPolicy selects, also while none exists (a
                                 policy deleted and applied again never leaves a gap)
                                 [SKYLIFT_TEAM_POLICY_REQUIRED] (default false)
  --workers N                    concurrent reconciles per kind [SKYLIFT_WORKERS] (default ${defaultControllerSettings.workers})
  --resync-period DURATION       drift check period, e.g. 10m, 30s [SKYLIFT_RESYNC_PERIOD] (default ${formatDuration(defaultControllerSettings.resyncPeriodMs)})
  --probe-address HOST:PORT      /metrics, /healthz, /readyz [SKYLIFT_PROBE_ADDRESS] (default :8080)
  --leader-elect BOOL            hold a Lease before reconciling [SKYLIFT_LEADER_ELECT] (default true)
  --leader-election-namespace NS [SKYLIFT_LEADER_ELECTION_NAMESPACE, POD_NAMESPACE] (default skylift-system)
  --leader-election-id NAME      Lease name [SKYLIFT_LEADER_ELECTION_ID] (default skylift-leader)
  --cluster-id ID                value of the skylift.dev/cluster tag [SKYLIFT_CLUSTER_ID] (default ${defaultControllerSettings.clusterId})
  --log-level LEVEL              trace|debug|info|warn|error [SKYLIFT_LOG_LEVEL] (default info)
  --log-format FORMAT            json|text [SKYLIFT_LOG_FORMAT] (default json)
  --shutdown-deadline DURATION   the process exits this long after SIGTERM at the latest, in-flight
                                 reconciles finished if they can [SKYLIFT_SHUTDOWN_DEADLINE] (default 20s)
  --aws-timeout DURATION         deadline of one AWS call attempt; a silent endpoint is Synced=False
                                 AWSUnreachable [SKYLIFT_AWS_TIMEOUT] (default ${formatDuration(awsTimeoutDefaults.requestMs)})
  --aws-requests-per-second S=N,… every account's request budget per service, e.g. route53=5 (services:
                                 ${budgetedServices.join(', ')}); a TeamPolicy's spec.aws.requestsPerSecond
                                 sets its account's [SKYLIFT_AWS_REQUESTS_PER_SECOND] (default route53=10,
                                 elasticloadbalancing=10, rds=10, ec2=20)
  --kube-timeout DURATION        deadline of one Kubernetes API request [SKYLIFT_KUBE_TIMEOUT] (default ${formatDuration(kubeRequestTimeoutMs)})
  --gateway-api auto|off         serve the Gateway API (accept GatewayClasses naming Skylift's controller) when
                                 the cluster serves its CRDs, checked at start; off: never [SKYLIFT_GATEWAY_API]
                                 (default auto)
${kindFlagUsage()}
`;

/** Parses `10m`, `30s`, `1500ms`, `1h` into milliseconds; throws UsageError otherwise. Pure. */
export function parseDuration(text: string): number {
  try {
    return parseSettingsDuration(text);
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

/**
 * Parses `route53=5,rds=8` into requests per second by service; throws UsageError naming what is
 * wrong (an unknown service, a rate outside 1-1000). Empty text: no budget. Pure.
 */
export function parseBudget(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of text.split(',').map((p) => p.trim())) {
    if (part === '') continue;
    const m = /^([a-z0-9]+)=(\d+)$/.exec(part);
    const service = m?.[1] ?? '';
    const rate = Number(m?.[2]);
    if (m === null || !(budgetedServices as readonly string[]).includes(service) || rate < 1 || rate > 1000)
      throw new UsageError(
        `--aws-requests-per-second: want SERVICE=N pairs with SERVICE one of ${budgetedServices.join(', ')} and N from 1 to 1000, e.g. route53=5,rds=10; got ${JSON.stringify(part)}`,
      );
    out[service] = rate;
  }
  return out;
}

/** A duration that must be above zero (a deadline of 0 would fail every call). */
function positiveDuration(name: string, text: string): number {
  const ms = parseDuration(text);
  if (ms <= 0)
    throw new UsageError(`--${name}: want a duration above zero, e.g. 10s, got ${JSON.stringify(text)}`);
  return ms;
}

function parseBool(name: string, text: string): boolean {
  if (/^(true|1|yes)$/i.test(text)) return true;
  if (/^(false|0|no)$/i.test(text)) return false;
  throw new UsageError(`--${name}: want true or false, got ${JSON.stringify(text)}`);
}

/**
 * Flags win over environment, environment over defaults. `registry` is the
 * kinds to serve (tests add their own). Pure given `env`.
 */
export function parseRunOptions(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  registry: readonly KindModule[] = kinds,
): RunOptions {
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
        'team-policy-selector': { type: 'string' },
        'team-policy-required': { type: 'string' },
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
        'aws-timeout': { type: 'string' },
        'aws-requests-per-second': { type: 'string' },
        'kube-timeout': { type: 'string' },
        'gateway-api': { type: 'string' },
        ...kindFlagOptions(registry),
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
  const workersText = get('workers', 'SKYLIFT_WORKERS') ?? String(defaultControllerSettings.workers);
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
  const gatewayApi = get('gateway-api', 'SKYLIFT_GATEWAY_API') ?? 'auto';
  if (!isGatewayApiMode(gatewayApi))
    throw new UsageError(`--gateway-api: want auto or off, got ${JSON.stringify(gatewayApi)}`);
  const namespaces = (get('namespaces', 'SKYLIFT_NAMESPACES') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return {
    kubeconfig: get('kubeconfig'),
    region,
    namespaces,
    labelSelector: get('label-selector', 'SKYLIFT_LABEL_SELECTOR'),
    teamPolicySelector: get('team-policy-selector', 'SKYLIFT_TEAM_POLICY_SELECTOR'),
    teamPolicyRequired: parseBool(
      'team-policy-required',
      get('team-policy-required', 'SKYLIFT_TEAM_POLICY_REQUIRED') ?? 'false',
    ),
    workers,
    resyncPeriodMs: parseDuration(
      get('resync-period', 'SKYLIFT_RESYNC_PERIOD') ??
        formatDuration(defaultControllerSettings.resyncPeriodMs),
    ),
    probeAddress: get('probe-address', 'SKYLIFT_PROBE_ADDRESS') ?? ':8080',
    leaderElection: parseBool('leader-elect', get('leader-elect', 'SKYLIFT_LEADER_ELECT') ?? 'true'),
    leaderElectionNamespace:
      get('leader-election-namespace', 'SKYLIFT_LEADER_ELECTION_NAMESPACE', 'POD_NAMESPACE') ??
      'skylift-system',
    leaderElectionId: get('leader-election-id', 'SKYLIFT_LEADER_ELECTION_ID') ?? 'skylift-leader',
    clusterId: get('cluster-id', 'SKYLIFT_CLUSTER_ID') ?? defaultControllerSettings.clusterId,
    logLevel,
    logFormat,
    shutdownDeadlineMs: parseDuration(get('shutdown-deadline', 'SKYLIFT_SHUTDOWN_DEADLINE') ?? '20s'),
    awsTimeoutMs: positiveDuration(
      'aws-timeout',
      get('aws-timeout', 'SKYLIFT_AWS_TIMEOUT') ?? formatDuration(awsTimeoutDefaults.requestMs),
    ),
    awsRequestsPerSecond: parseBudget(
      get('aws-requests-per-second', 'SKYLIFT_AWS_REQUESTS_PER_SECOND') ?? '',
    ),
    kubeTimeoutMs: positiveDuration(
      'kube-timeout',
      get('kube-timeout', 'SKYLIFT_KUBE_TIMEOUT') ?? formatDuration(kubeRequestTimeoutMs),
    ),
    kinds: configureKinds((f) => get(f.name, f.env), registry),
    gatewayApi,
  };
}
