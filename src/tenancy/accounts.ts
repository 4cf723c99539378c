// The AWS clients an object is reconciled with, chosen by its namespace's tenancy: the operator's
// own (no policy, or a policy without an identity), another region's, or an assumed role's.
import { createHash } from 'node:crypto';
import type { STSClient } from '@aws-sdk/client-sts';
import type { TeamPolicy } from '../apis/teampolicy.ts';
import {
  createAwsClients,
  ownAccount,
  type AwsClientOptions,
  type AwsClients,
  type AwsCredentialIdentity,
} from '../providers/aws/clients.ts';
import { LazyClient } from '../providers/aws/lazyClient.ts';
import { AccountScope } from '../providers/aws/accountScope.ts';
import type { Clock } from '../runtime/clock.ts';
import { RequeueAfter, RetryableError } from '../runtime/errors.ts';
import { AwsReason, AwsRetryableError, classifyAwsError, toTypedAwsError } from '../providers/aws/errors.ts';
import type { TenantSource } from './directory.ts';

/** Where a tenancy's AWS clients come from. */
export interface AwsAccountSource {
  /** The operator's own clients (its identity, its --region). */
  readonly own: AwsClients;
  /**
   * The clients for objects under `policy` (undefined: no policy). Clients are cached per identity
   * and region, whatever namespace asks; every set of one account and region shares its rate
   * limiters, caches and batchers (`clients.scope`). May block on STS; throws a typed error
   * (RequeueAfter with reason AssumeRoleFailed when the role cannot be assumed).
   */
  clientsFor(policy: TeamPolicy | undefined): Promise<AwsClients>;
  /**
   * Follows `policies` (every TeamPolicy now): lets go of the role sessions, clients and account
   * scopes none of them uses (a policy deleted or moved to another role or region), and sets each
   * account's request budget (the lowest spec.aws.requestsPerSecond of the policies reaching it).
   * Calls still in flight on released clients fail and their objects are retried with their
   * policy's clients. Idempotent; never calls AWS.
   */
  follow(policies: Iterable<TeamPolicy>): void;
  /**
   * The 12-digit account `aws` reaches: a role's from its ARN, the operator's own asked once of
   * STS GetCallerIdentity (cached; a failure is asked again next time). Throws on failure. The
   * STS SDK is loaded at the first call that asks STS (in the operator: the first object
   * connected with its own clients, whose `status.location` needs the account).
   */
  accountOf(aws: AwsClients): Promise<string>;
  /** Destroys every client made here (not `own`). */
  destroy(): void;
}

/** Temporary credentials of an assumed role; `expiration` is required. */
export interface AssumedCredentials extends AwsCredentialIdentity {
  readonly sessionToken: string;
  readonly expiration: Date;
}

/** What one AssumeRole asks for. */
export interface AssumeRoleInput {
  readonly roleArn: string;
  readonly externalId?: string | undefined;
  readonly sessionName: string;
  readonly durationSeconds: number;
}

/**
 * One sts:AssumeRole call from the operator's own identity. Resolves to the role's temporary
 * credentials or rejects with the AWS error (or a network error) as the SDK throws it.
 */
export type AssumeRole = (input: AssumeRoleInput) => Promise<AssumedCredentials>;

/** The condition reason of objects (and of their policy) whose role cannot be assumed. */
export const assumeRoleFailedReason = 'AssumeRoleFailed';

/** Default lifetime asked of AssumeRole (a role's default maximum session duration). */
const defaultDurationSeconds = 3600;
/** Refresh when less than this remains (or a third of the lifetime, if that is shorter). */
const refreshMarginMs = 5 * 60_000;

/** How long a transient AssumeRole failure (throttled, 5xx, no answer) is answered from the cache. */
const transientFailureTtlMs = 1000;

/**
 * True when a failed AssumeRole may well succeed on its own soon: STS throttled it, failed (5xx),
 * or did not answer — as opposed to refusing it (AccessDenied, a bad role or external ID). Pure.
 */
export function assumeRoleTransient(err: unknown): boolean {
  const cls = classifyAwsError(err);
  return cls === 'throttling' || cls === 'transient' || cls === 'unreachable';
}

/** Options for {@link RoleCredentials}. */
export interface RoleCredentialsOptions {
  readonly clock: Clock;
  readonly assumeRole: AssumeRole;
  readonly input: AssumeRoleInput;
  /** How long a failed AssumeRole is answered from the cache before STS is asked again (default 30 s). */
  readonly failureTtlMs?: number;
}

/**
 * The credentials of one role session, cached. `get()` answers from the cache until less than
 * 5 minutes (or a third of the lifetime, if shorter) remain, then assumes the role again before
 * they expire; concurrent callers share one AssumeRole in flight. A failure is answered from the
 * cache for `failureTtlMs`, then retried; while the last good credentials are still valid they are
 * served despite a failed refresh (and `failure` says so).
 */
export class RoleCredentials {
  private readonly o: RoleCredentialsOptions;
  private current: { readonly creds: AssumedCredentials; readonly refreshAt: number } | undefined;
  private inFlight: Promise<AssumedCredentials> | undefined;
  private lastFailure: { readonly error: Error; readonly until: number } | undefined;

  constructor(o: RoleCredentialsOptions) {
    this.o = o;
  }

  /** The last AssumeRole's error if it failed (cleared by a success). */
  get failure(): Error | undefined {
    return this.lastFailure?.error;
  }

  /** Valid credentials of the role; rejects with the AssumeRole error. Cheap while cached. */
  get(): Promise<AssumedCredentials> {
    const now = this.o.clock.now();
    const c = this.current;
    if (c !== undefined && now < c.refreshAt) return Promise.resolve(c.creds);
    if (this.inFlight !== undefined) return this.inFlight;
    const failed = this.lastFailure;
    if (failed !== undefined && now < failed.until) {
      if (c !== undefined && now < c.creds.expiration.getTime()) return Promise.resolve(c.creds);
      return Promise.reject(failed.error);
    }
    const call = this.assume();
    this.inFlight = call;
    const clear = (): void => {
      if (this.inFlight === call) this.inFlight = undefined;
    };
    call.then(clear, clear);
    return call;
  }

  private async assume(): Promise<AssumedCredentials> {
    const started = this.o.clock.now();
    try {
      const creds = await this.o.assumeRole(this.o.input);
      const expires = creds.expiration.getTime();
      const margin = Math.min(refreshMarginMs, (expires - started) / 3);
      this.current = { creds, refreshAt: expires - margin };
      this.lastFailure = undefined;
      return creds;
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      // STS throttling, a 5xx or no answer passes soon: asked again after a second, not after the
      // failure TTL meant for a refusal (a role or trust policy someone must fix).
      const ttl = assumeRoleTransient(error) ? transientFailureTtlMs : (this.o.failureTtlMs ?? 30_000);
      this.lastFailure = { error, until: this.o.clock.now() + ttl };
      const c = this.current;
      if (c !== undefined && this.o.clock.now() < c.creds.expiration.getTime()) return c.creds;
      throw error;
    }
  }
}

/**
 * The RoleSessionName of an installation's role sessions: `skylift-<cluster id>` within STS's rule
 * (2-64 characters of `[\w+=,.@-]`); a longer one keeps its start and ends in a hash of the ID,
 * so two long IDs do not share a name. Pure.
 */
export function roleSessionName(clusterId: string): string {
  const name = `skylift-${clusterId}`.replace(/[^\w+=,.@-]/g, '-');
  if (name.length <= 64) return name;
  const hash = createHash('sha256').update(clusterId).digest('hex').slice(0, 8);
  return `${name.slice(0, 64 - hash.length - 1)}-${hash}`;
}

/** The 12-digit account of an IAM role ARN, or undefined. Pure. */
export function roleAccount(roleArn: string): string | undefined {
  return /^arn:aws[a-z-]*:iam::(\d{12}):role\//.exec(roleArn)?.[1];
}

/**
 * What to tell the user when `policy`'s role cannot be assumed: the policy, the role, the AWS
 * error, and what to fix (the trust policy, or the way to STS when it did not answer). Pure.
 */
export function assumeRoleFailure(policy: TeamPolicy, err: unknown): string {
  const roleArn = policy.spec.aws?.roleArn ?? '';
  const externalId = policy.spec.aws?.externalId;
  const e = err as { name?: unknown; message?: unknown; $metadata?: { httpStatusCode?: unknown } };
  const name = typeof e.name === 'string' ? e.name : 'Error';
  const message = typeof e.message === 'string' ? e.message : String(err);
  const answered = typeof e.$metadata?.httpStatusCode === 'number';
  const fix = answered
    ? `the role's trust policy must allow the operator's IAM role to call sts:AssumeRole${
        externalId !== undefined ? ' with the condition sts:ExternalId equal to spec.aws.externalId' : ''
      }, and the operator's own IAM policy must allow sts:AssumeRole on the role`
    : "STS did not answer: check the operator's network access to STS";
  return `TeamPolicy ${policy.metadata.name}: cannot assume role ${roleArn} (${name}: ${message}); ${fix}; retrying`;
}

/** Options for {@link AwsAccounts}. */
export interface AwsAccountsOptions {
  readonly own: AwsClients;
  /** How to build clients for another region or identity (the operator's own options). */
  readonly clientOptions: Omit<AwsClientOptions, 'region'>;
  /**
   * Where each AssumeRole outcome, and the throttling of each policy's account, is reported (the
   * policy's status); absent: nowhere.
   */
  readonly reports?: Pick<TenantSource, 'reportAssumeRole'> & Partial<Pick<TenantSource, 'reportThrottling'>>;
  /** The STS call (tests); default: AssumeRole with an STS client built like `own`'s, counted as `own`'s. */
  readonly assumeRole?: AssumeRole;
  /**
   * The RoleSessionName of every role session (default `skylift`; the operator passes
   * `skylift-<cluster id>`, see {@link roleSessionName}): what CloudTrail shows after the role.
   */
  readonly sessionName?: string;
  /**
   * Every account's request budget by service unless a TeamPolicy reaching it sets its own
   * (--aws-requests-per-second); default none: each service's built-in rate.
   */
  readonly defaultBudget?: Readonly<Record<string, number>>;
  /** Session lifetime asked of AssumeRole (default 3600 s). */
  readonly durationSeconds?: number;
  /** When an object whose role cannot be assumed is tried again (default 60 s). */
  readonly retryMs?: number;
  /** How long a failed AssumeRole is answered from the cache (default 30 s). */
  readonly failureTtlMs?: number;
  /** The operator's own account (tests); default: STS GetCallerIdentity, once. */
  readonly ownAccount?: () => Promise<string>;
}

/** Lowers the budget kept under `key` to `budget`'s rates where they are lower (or first set). */
function addBudget(
  budgets: Map<string, Record<string, number>>,
  key: string,
  budget: Readonly<Record<string, number | undefined>> | undefined,
): void {
  if (budget === undefined) return;
  const kept = budgets.get(key) ?? {};
  for (const [service, rate] of Object.entries(budget)) {
    if (rate === undefined) continue;
    kept[service] = Math.min(kept[service] ?? rate, rate);
  }
  budgets.set(key, kept);
}

/** The key of one role session: the role and the external ID it is assumed with. Pure. */
function sessionKeyOf(roleArn: string, externalId: string | undefined): string {
  return JSON.stringify([roleArn, externalId ?? null]);
}

/** The key of one set of clients signed by a role session in a region. Pure. */
function roleClientsKeyOf(roleArn: string, externalId: string | undefined, region: string): string {
  return JSON.stringify([roleArn, externalId ?? null, region]);
}

/**
 * Clients per region for policies that name only a region, and per (role, external ID, region) for
 * policies that name a role: the role is assumed from the operator's own identity, with one session
 * per role and external ID whoever's namespaces use it, its credentials refreshed before they
 * expire. Every set of one account and region shares one {@link AccountScope}: the rate limiters
 * (the account's budget) and the kinds' caches, batchers and lookups — so 50 namespaces under one
 * policy, or under ten policies naming roles of one account, cost what one namespace costs.
 * Sessions, clients and scopes no policy uses any more are let go, and each account's request
 * budget set, by {@link follow}.
 */
export class AwsAccounts implements AwsAccountSource {
  readonly own: AwsClients;
  private readonly o: AwsAccountsOptions;
  private readonly byRegion = new Map<string, AwsClients>();
  private readonly byRole = new Map<string, AwsClients>();
  private readonly sessions = new Map<string, RoleCredentials>();
  private readonly scopes = new Map<string, AccountScope>();
  /** Each account's budget by `account/region` (`own/<region>` for the operator's identity), from {@link follow}. */
  private budgets = new Map<string, Record<string, number>>();
  private sts: AssumeRole | undefined;
  /** STS from the operator's own identity, its SDK loaded at the first STS call (issue 16). */
  private readonly stsClient = new LazyClient<STSClient>('sts', async (config) => {
    const { STSClient } = await import('@aws-sdk/client-sts');
    return new STSClient({ ...config });
  });
  private ownAccountId: Promise<string> | undefined;

  constructor(o: AwsAccountsOptions) {
    this.o = o;
    this.own = o.own;
    this.own.scope.setBudget(this.budgetOf(`${ownAccount}/${this.own.region}`));
  }

  /** The budget of the account and region `key` (`account/region`): its policies' over the default. */
  private budgetOf(key: string): Record<string, number> {
    return { ...this.o.defaultBudget, ...this.budgets.get(key) };
  }

  async clientsFor(policy: TeamPolicy | undefined): Promise<AwsClients> {
    const clients = await this.clientsOf(policy);
    if (policy !== undefined) this.reportThrottling(policy, clients);
    return clients;
  }

  private async clientsOf(policy: TeamPolicy | undefined): Promise<AwsClients> {
    const identity = policy?.spec.aws;
    const region = identity?.region ?? this.own.region;
    if (policy !== undefined && identity?.roleArn !== undefined)
      return this.assumed(policy, identity.roleArn, identity.externalId, region);
    if (region === this.own.region) return this.own;
    let clients = this.byRegion.get(region);
    if (clients === undefined) {
      clients = createAwsClients({ ...this.o.clientOptions, region });
      clients.scope.setBudget(this.budgetOf(`${ownAccount}/${region}`));
      this.byRegion.set(region, clients);
    }
    return clients;
  }

  /** Tells the policy's status how much AWS throttles the account its clients reach (cheap; deduplicated there). */
  private reportThrottling(policy: TeamPolicy, clients: AwsClients): void {
    const reports = this.o.reports;
    if (reports?.reportThrottling === undefined) return;
    const sustained = clients.scope.throttles.sustained(this.o.clientOptions.clock.now());
    const ratePerSecond: Record<string, number> = {};
    for (const t of sustained) {
      const rate = clients.limiters.get(t.service)?.ratePerSecond;
      if (rate !== undefined) ratePerSecond[t.service] = rate;
    }
    reports.reportThrottling(policy.metadata.name, {
      account: clients.account,
      sustained,
      ratePerSecond,
    });
  }

  follow(policies: Iterable<TeamPolicy>): void {
    const regions = new Set<string>();
    const sessions = new Set<string>();
    const roleClients = new Set<string>();
    const budgets = new Map<string, Record<string, number>>();
    for (const p of policies) {
      const identity = p.spec.aws;
      const region = identity?.region ?? this.own.region;
      const account = identity?.roleArn !== undefined ? roleAccount(identity.roleArn) : ownAccount;
      if (account !== undefined) addBudget(budgets, `${account}/${region}`, identity?.requestsPerSecond);
      if (identity?.roleArn === undefined) {
        regions.add(region);
        continue;
      }
      sessions.add(sessionKeyOf(identity.roleArn, identity.externalId));
      roleClients.add(roleClientsKeyOf(identity.roleArn, identity.externalId, region));
    }
    this.budgets = budgets;
    for (const [region, c] of this.byRegion) {
      if (regions.has(region)) continue;
      c.destroy();
      this.byRegion.delete(region);
    }
    for (const [key, c] of this.byRole) {
      if (roleClients.has(key)) continue;
      c.destroy();
      this.byRole.delete(key);
    }
    for (const key of this.sessions.keys()) if (!sessions.has(key)) this.sessions.delete(key);
    const inUse = new Set([...this.byRole.values()].map((c) => c.scope));
    for (const [key, scope] of this.scopes) {
      if (inUse.has(scope)) {
        scope.setBudget(this.budgetOf(key));
        continue;
      }
      scope.release();
      this.scopes.delete(key);
    }
    for (const c of [this.own, ...this.byRegion.values()])
      c.scope.setBudget(this.budgetOf(`${ownAccount}/${c.region}`));
  }

  /** How many role sessions, sets of clients and account scopes are held (for tests and the memory report). */
  held(): { readonly sessions: number; readonly clients: number; readonly scopes: number } {
    return {
      sessions: this.sessions.size,
      clients: this.byRole.size + this.byRegion.size,
      scopes: this.scopes.size,
    };
  }

  accountOf(aws: AwsClients): Promise<string> {
    if (aws.account !== ownAccount) return Promise.resolve(aws.account);
    if (this.o.ownAccount !== undefined) return this.o.ownAccount();
    this.ownAccountId ??= this.callerAccount().catch((err: unknown) => {
      this.ownAccountId = undefined;
      throw err;
    });
    return this.ownAccountId;
  }

  /**
   * The operator's own account, as STS GetCallerIdentity answers it. A failed call is a typed AWS
   * error (AWSUnreachable when STS did not answer, AWSCredentials when it refused the credentials).
   */
  private async callerAccount(): Promise<string> {
    const client = await this.client();
    const { GetCallerIdentityCommand } = await import('@aws-sdk/client-sts');
    const what = "look up the operator's AWS account (sts:GetCallerIdentity)";
    let account: string | undefined;
    try {
      account = (await client.send(new GetCallerIdentityCommand({}))).Account;
    } catch (err) {
      throw toTypedAwsError(what, err);
    }
    if (account === undefined)
      throw new AwsRetryableError(AwsReason.AwsError, `${what}: answered without an account`, undefined);
    return account;
  }

  destroy(): void {
    for (const c of this.byRegion.values()) c.destroy();
    for (const c of this.byRole.values()) c.destroy();
    for (const s of this.scopes.values()) s.release();
    this.byRegion.clear();
    this.byRole.clear();
    this.sessions.clear();
    this.scopes.clear();
  }

  private async assumed(
    policy: TeamPolicy,
    roleArn: string,
    externalId: string | undefined,
    region: string,
  ): Promise<AwsClients> {
    const name = policy.metadata.name;
    const retryMs = this.o.retryMs ?? 60_000;
    const account = roleAccount(roleArn);
    if (account === undefined) {
      const message = `TeamPolicy ${name}: spec.aws.roleArn ${roleArn} is not an IAM role ARN (arn:aws:iam::<12-digit account>:role/<name>); fix spec.aws.roleArn`;
      this.o.reports?.reportAssumeRole(name, { ok: false, message });
      throw new RequeueAfter(retryMs, message, assumeRoleFailedReason);
    }
    const sessionKey = sessionKeyOf(roleArn, externalId);
    let session = this.sessions.get(sessionKey);
    if (session === undefined) {
      session = new RoleCredentials({
        clock: this.o.clientOptions.clock,
        assumeRole: this.assumeRole(),
        input: {
          roleArn,
          externalId,
          sessionName: this.o.sessionName ?? 'skylift',
          durationSeconds: this.o.durationSeconds ?? defaultDurationSeconds,
        },
        ...(this.o.failureTtlMs !== undefined ? { failureTtlMs: this.o.failureTtlMs } : {}),
      });
      this.sessions.set(sessionKey, session);
    }
    try {
      await session.get();
    } catch (err) {
      const message = assumeRoleFailure(policy, err);
      this.o.reports?.reportAssumeRole(name, { ok: false, message });
      // A passing STS failure is retried with the work queue's backoff; a refusal after retryMs.
      if (assumeRoleTransient(err)) throw new RetryableError(assumeRoleFailedReason, message, { cause: err });
      throw new RequeueAfter(retryMs, message, assumeRoleFailedReason);
    }
    const refreshFailed = session.failure;
    this.o.reports?.reportAssumeRole(
      name,
      refreshFailed === undefined
        ? { ok: true, account }
        : {
            ok: false,
            account,
            message: `${assumeRoleFailure(policy, refreshFailed)} (the credentials of the last AssumeRole are used until they expire)`,
          },
    );
    const clientsKey = roleClientsKeyOf(roleArn, externalId, region);
    let clients = this.byRole.get(clientsKey);
    if (clients === undefined) {
      const creds = session;
      clients = createAwsClients({
        ...this.o.clientOptions,
        region,
        account,
        scope: this.scopeOf(account, region),
        credentials: () => creds.get(),
      });
      this.byRole.set(clientsKey, clients);
    }
    return clients;
  }

  /** The scope of one account and region, made at its first set of clients. */
  private scopeOf(account: string, region: string): AccountScope {
    const key = `${account}/${region}`;
    let scope = this.scopes.get(key);
    if (scope === undefined) {
      scope = new AccountScope(account, region);
      scope.setBudget(this.budgetOf(key));
      this.scopes.set(key, scope);
    }
    return scope;
  }

  /** One STS client from the operator's own identity and endpoint, counted as the operator's own calls. */
  private client(): Promise<STSClient> {
    return this.stsClient.of(this.own);
  }

  /** The STS call: the injected one, or one STS client from the operator's own identity and endpoint. */
  private assumeRole(): AssumeRole {
    if (this.o.assumeRole !== undefined) return this.o.assumeRole;
    if (this.sts === undefined) {
      this.sts = async (input) => {
        const client = await this.client();
        const { AssumeRoleCommand } = await import('@aws-sdk/client-sts');
        const out = await client.send(
          new AssumeRoleCommand({
            RoleArn: input.roleArn,
            RoleSessionName: input.sessionName,
            DurationSeconds: input.durationSeconds,
            ...(input.externalId !== undefined ? { ExternalId: input.externalId } : {}),
          }),
        );
        const c = out.Credentials;
        if (
          c?.AccessKeyId === undefined ||
          c.SecretAccessKey === undefined ||
          c.SessionToken === undefined ||
          c.Expiration === undefined
        )
          throw new Error(`AssumeRole ${input.roleArn} answered without credentials`);
        return {
          accessKeyId: c.AccessKeyId,
          secretAccessKey: c.SecretAccessKey,
          sessionToken: c.SessionToken,
          expiration: c.Expiration,
        };
      };
    }
    return this.sts;
  }
}
