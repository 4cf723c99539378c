import type { EC2Client } from '@aws-sdk/client-ec2';
import type { ElasticLoadBalancingV2Client } from '@aws-sdk/client-elastic-load-balancing-v2';
import type { RDSClient } from '@aws-sdk/client-rds';
import type { Route53Client } from '@aws-sdk/client-route-53';
import type { Clock } from '../../runtime/clock.ts';
import type { Metrics } from '../../runtime/metrics.ts';
import { startAwsCallSpan, type AwsCallResult } from '../../runtime/tracing.ts';
import { classifyAwsError, tagOperation } from './errors.ts';
import { destroyedError, LazyClient } from './lazyClient.ts';
import { AccountScope } from './accountScope.ts';
import { AdaptiveRateLimiter, defaultServiceRates, type AdaptiveRateOptions } from './rateLimiter.ts';

/**
 * The shared SDK clients, one per service, for one region.
 *
 * Every service's client is made on first use (issue 16: a process serving only DNSRecords never
 * loads the ELBv2 or RDS SDK): the first call of `route53()`, `elbv2()`, … loads the service's SDK
 * package and builds the client with `config`, adopted into this set (the service's rate limiter,
 * call metrics and tracing; destroyed with the set). Every later call answers that one client,
 * concurrent first calls included. A failed load is tried again at the next call; after destroy()
 * every call rejects.
 */
export interface AwsClients {
  readonly region: string;
  /** The account these clients reach: a role's 12-digit account, or `own` (the operator's, unknown here). */
  readonly account: string;
  /** Route 53 (DNSRecord). */
  route53(): Promise<Route53Client>;
  /** Elastic Load Balancing v2 (MyIngress). */
  elbv2(): Promise<ElasticLoadBalancingV2Client>;
  /**
   * ELBv2 without SDK retries, for creates: a create whose answer was lost is not re-sent blindly;
   * the engine looks the resource up first. Shares the `elasticloadbalancing` rate limiter.
   */
  elbv2Create(): Promise<ElasticLoadBalancingV2Client>;
  /** RDS (ManagedDB). */
  rds(): Promise<RDSClient>;
  /** EC2, for subnet and security group lookups by tag (a MyIngress's subnetSelector, TeamPolicy guardrails by tag). */
  ec2(): Promise<EC2Client>;
  /**
   * The client-side limiters, by signing name (route53, elasticloadbalancing, rds, ec2, …): one
   * for each service whose client was made or adopted so far, shared by every set of the scope.
   */
  readonly limiters: ReadonlyMap<string, AdaptiveRateLimiter>;
  /**
   * What these clients share with every other set reaching the same account and region (whatever
   * identity signs): the limiters above, and the kinds' caches and batchers kept per account.
   */
  readonly scope: AccountScope;
  /** What every client here is built with (region, endpoint, credentials, attempts): for a kind's own client. */
  readonly config: AwsClientConfig;
  /**
   * Takes in a kind's own SDK client for another service (by its signing
   * name): its calls then wait for that service's adaptive rate limiter and
   * are counted and traced like the shared clients', and it is destroyed
   * with them. Returns the client. Call once per client. On a destroyed set
   * it destroys `client` and throws (a client made on first use that was
   * still loading when the set was destroyed).
   */
  adopt<C extends AdoptableClient>(service: string, client: C): C;
  /** True once destroy() was called: no client of this set may be used or made any more. */
  readonly destroyed: boolean;
  /** Destroys every client of this set, adopted ones and those made on first use included. */
  destroy(): void;
}

/** The SDK client configuration the shared clients are built with. */
export interface AwsClientConfig {
  readonly region: string;
  readonly maxAttempts: number;
  readonly endpoint?: string;
  readonly credentials?: AwsCredentials;
  /** Deadlines of every HTTP attempt: an endpoint that does not answer fails with TimeoutError. */
  readonly requestHandler: AwsRequestTimeouts;
}

/** The deadlines of one HTTP attempt, as the SDK's Node HTTP handler takes them. */
export interface AwsRequestTimeouts {
  /** Time to open the connection. */
  readonly connectionTimeout: number;
  /** Time from sending the request to the whole answer. */
  readonly requestTimeout: number;
  /** Make a request outliving requestTimeout fail (the SDK only warns otherwise). */
  readonly throwOnRequestTimeout: true;
}

/** One set of AWS credentials; temporary ones carry a session token and when they expire. */
export interface AwsCredentialIdentity {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly expiration?: Date;
}

/**
 * Credentials as the SDK takes them: fixed, or a function it calls whenever the credentials it
 * holds are near their expiration (so the function must be cheap: it serves from a cache).
 */
export type AwsCredentials = AwsCredentialIdentity | (() => Promise<AwsCredentialIdentity>);

/** The label value of the AWS call metrics for the operator's own identity. */
export const ownAccount = 'own';

/** Default deadlines of an AWS call attempt; with 3 attempts a dead endpoint is reported in about a minute. */
export const awsTimeoutDefaults = { connectMs: 3000, requestMs: 15_000 } as const;

/** Any AWS SDK v3 client. */
export interface AdoptableClient {
  readonly middlewareStack: unknown;
  destroy(): void;
}

/** Options for {@link createAwsClients}. */
export interface AwsClientOptions {
  readonly region: string;
  readonly clock: Clock;
  readonly metrics: Metrics;
  /** Defaults to $AWS_ENDPOINT_URL; unset means real AWS. */
  readonly endpoint?: string | undefined;
  /** Attempts per call including SDK retries (default 3). */
  readonly maxAttempts?: number;
  readonly rates?: Readonly<Record<string, AdaptiveRateOptions>>;
  /** Static credentials (tests) or a provider (an assumed role's); default: the SDK's default chain. */
  readonly credentials?: AwsCredentials;
  /** The `account` label of the AWS call metrics: a 12-digit account, or {@link ownAccount} (the default). */
  readonly account?: string;
  /**
   * The account and region these clients share with other sets (its rate limiters: missing ones
   * are created and added to it). Default: a scope of these clients' own.
   */
  readonly scope?: AccountScope;
  /** Deadline of one HTTP attempt, answer included (default awsTimeoutDefaults.requestMs). */
  readonly requestTimeoutMs?: number;
  /** Deadline to open a connection (default awsTimeoutDefaults.connectMs, at most the request deadline). */
  readonly connectTimeoutMs?: number;
}

interface MiddlewareStackLike {
  add(
    mw: (
      next: (args: unknown) => Promise<unknown>,
      context: { commandName?: string },
    ) => (args: unknown) => Promise<unknown>,
    opts: { step: 'finalizeRequest'; priority: 'low'; name: string },
  ): void;
}

/**
 * Builds the SDK clients every controller shares. Credentials come from the
 * SDK's default chain (environment, IRSA web identity, instance role); the
 * endpoint from AWS_ENDPOINT_URL, so the emulator, LocalStack and real AWS
 * differ only in configuration. Each client gets a middleware that runs per
 * HTTP attempt (inside the SDK's retries): it waits for the service's
 * adaptive rate limiter, and records `skylift_aws_api_calls_total` and
 * throttles, labelled with the account (`own` for the operator's identity).
 */
export function createAwsClients(opts: AwsClientOptions): AwsClients {
  const endpoint = opts.endpoint ?? process.env.AWS_ENDPOINT_URL;
  const requestMs = opts.requestTimeoutMs ?? awsTimeoutDefaults.requestMs;
  const base: AwsClientConfig = {
    region: opts.region,
    maxAttempts: opts.maxAttempts ?? 3,
    requestHandler: {
      connectionTimeout: Math.min(opts.connectTimeoutMs ?? awsTimeoutDefaults.connectMs, requestMs),
      requestTimeout: requestMs,
      throwOnRequestTimeout: true,
    },
    ...(endpoint !== undefined && endpoint !== '' ? { endpoint } : {}),
    ...(opts.credentials !== undefined
      ? { credentials: typeof opts.credentials === 'function' ? opts.credentials : { ...opts.credentials } }
      : {}),
  };
  const rates = { ...defaultServiceRates, ...opts.rates };
  const account = opts.account ?? ownAccount;
  const scope = opts.scope ?? new AccountScope(account, opts.region);
  const limiters = scope.limiters;
  const adopted: AdoptableClient[] = [];
  let destroyed = false;
  const instrument = (service: string, stack: MiddlewareStackLike): void => {
    if (limiters.has(service)) {
      instrumentWith(service, stack);
      return;
    }
    const rate = rates[service] ?? { maxPerSecond: 10, minPerSecond: 1, burst: 10 };
    const limiter = scope.addLimiter(service, new AdaptiveRateLimiter(opts.clock, rate));
    opts.metrics.awsRateLimit.set({ service, account }, limiter.ratePerSecond);
    instrumentWith(service, stack);
  };
  /** Attaches the service's (already created) limiter and metrics to another client's stack. */
  const instrumentWith = (service: string, stack: MiddlewareStackLike): void => {
    const limiter = limiters.get(service);
    if (limiter === undefined) throw new Error(`no rate limiter for ${service}`);
    stack.add(
      (next, context) => async (args) => {
        const operation = (context.commandName ?? 'Unknown').replace(/Command$/, '');
        await limiter.acquire();
        // Started after the limiter wait, so the span measures AWS, not our own throttling.
        const span = startAwsCallSpan(service, operation, opts.region);
        try {
          const out = await next(args);
          limiter.onSuccess();
          scope.throttles.note(service, false, opts.clock.now());
          opts.metrics.awsCalls.inc({ service, operation, outcome: 'success', account });
          span?.end({ outcome: 'success', ...responseDetails(out) });
          return out;
        } catch (err) {
          tagOperation(err, operation);
          const cls = classifyAwsError(err);
          scope.throttles.note(service, cls === 'throttling', opts.clock.now());
          if (cls === 'throttling') {
            limiter.onThrottle();
            opts.metrics.awsThrottles.inc({ service, account });
          }
          const outcome = cls === 'throttling' ? 'throttled' : cls === 'unknown' ? 'error' : cls;
          opts.metrics.awsCalls.inc({ service, operation, outcome, account });
          span?.end({ outcome, ...errorDetails(err) });
          throw err;
        } finally {
          opts.metrics.awsRateLimit.set({ service, account }, limiter.ratePerSecond);
        }
      },
      { step: 'finalizeRequest', priority: 'low', name: 'skyliftRateLimitAndMetrics' },
    );
  };
  const clients: AwsClients = {
    region: opts.region,
    account,
    route53: () => route53Client.of(clients),
    elbv2: () => elbv2Client.of(clients),
    elbv2Create: () => elbv2CreateClient.of(clients),
    rds: () => rdsClient.of(clients),
    ec2: () => ec2Client.of(clients),
    limiters,
    scope,
    config: base,
    adopt(service, client) {
      if (destroyed) {
        client.destroy();
        throw destroyedError(account, opts.region, service);
      }
      instrument(service, client.middlewareStack as MiddlewareStackLike);
      adopted.push(client);
      return client;
    },
    get destroyed() {
      return destroyed;
    },
    destroy() {
      destroyed = true;
      for (const c of adopted.splice(0)) c.destroy();
    },
  };
  return clients;
}

// Each service's client, made on first use per set (see {@link AwsClients}).
const route53Client = new LazyClient<Route53Client>('route53', async (config) => {
  const { Route53Client } = await import('@aws-sdk/client-route-53');
  return new Route53Client(config);
});
const elbv2Sdk = () => import('@aws-sdk/client-elastic-load-balancing-v2');
const elbv2Client = new LazyClient<ElasticLoadBalancingV2Client>(
  'elasticloadbalancing',
  async (config) => new (await elbv2Sdk()).ElasticLoadBalancingV2Client(config),
);
const elbv2CreateClient = new LazyClient<ElasticLoadBalancingV2Client>(
  'elasticloadbalancing',
  async (config) => new (await elbv2Sdk()).ElasticLoadBalancingV2Client({ ...config, maxAttempts: 1 }),
);
const rdsClient = new LazyClient<RDSClient>('rds', async (config) => {
  const { RDSClient } = await import('@aws-sdk/client-rds');
  return new RDSClient(config);
});
const ec2Client = new LazyClient<EC2Client>('ec2', async (config) => {
  const { EC2Client } = await import('@aws-sdk/client-ec2');
  return new EC2Client(config);
});

type CallDetails = Omit<AwsCallResult, 'outcome'>;

/** HTTP status and request id of a successful attempt (the finalizeRequest step sees the raw response and the parsed output). */
function responseDetails(out: unknown): CallDetails {
  const o = out as
    { response?: { statusCode?: unknown }; output?: { $metadata?: { requestId?: unknown } } } | undefined;
  const status = o?.response?.statusCode;
  const requestId = o?.output?.$metadata?.requestId;
  return {
    ...(typeof status === 'number' ? { statusCode: status } : {}),
    ...(typeof requestId === 'string' ? { requestId } : {}),
  };
}

/** HTTP status, AWS error code and request id of a failed attempt (SDK service errors carry `$metadata`). */
function errorDetails(err: unknown): CallDetails {
  const e = err as
    { name?: unknown; $metadata?: { httpStatusCode?: unknown; requestId?: unknown } } | undefined;
  const status = e?.$metadata?.httpStatusCode;
  const requestId = e?.$metadata?.requestId;
  return {
    errorCode: typeof e?.name === 'string' ? e.name : 'Unknown',
    ...(typeof status === 'number' ? { statusCode: status } : {}),
    ...(typeof requestId === 'string' ? { requestId } : {}),
  };
}
