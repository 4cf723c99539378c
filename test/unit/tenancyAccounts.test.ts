import { afterEach, describe, expect, it } from 'vitest';
import type { TeamPolicy } from '../../src/apis/teampolicy.ts';
import { createAwsClients, type AwsClients } from '../../src/providers/aws/clients.ts';
import { RequeueAfter, RetryableError } from '../../src/runtime/errors.ts';
import { Metrics } from '../../src/runtime/metrics.ts';
import type { AssumeRoleReport, ThrottlingReport } from '../../src/tenancy/directory.ts';
import { ScopeKey } from '../../src/providers/aws/accountScope.ts';
import {
  AwsAccounts,
  RoleCredentials,
  roleAccount,
  roleSessionName,
  type AssumeRoleInput,
  type AssumedCredentials,
} from '../../src/tenancy/accounts.ts';
import { FakeClock } from '../support/fakeClock.ts';

/** An STS stub: each call answers credentials valid for `lifetimeMs` from the clock's now, or `fail`. */
function stubSts(clock: FakeClock, lifetimeMs: number) {
  const calls: AssumeRoleInput[] = [];
  const state: { fail?: Error; gate?: Promise<void> } = {};
  const assumeRole = async (input: AssumeRoleInput): Promise<AssumedCredentials> => {
    calls.push(input);
    const n = calls.length;
    if (state.gate !== undefined) await state.gate;
    if (state.fail !== undefined) throw state.fail;
    return {
      accessKeyId: `ASIA${String(n).padStart(4, '0')}`,
      secretAccessKey: `secret-${n}`,
      sessionToken: `token-${n}`,
      expiration: new Date(clock.now() + lifetimeMs),
    };
  };
  return { calls, state, assumeRole };
}

const input: AssumeRoleInput = {
  roleArn: 'arn:aws:iam::111122223333:role/team-a',
  sessionName: 'skylift-team-a',
  durationSeconds: 3600,
};

function accessDenied(): Error {
  return Object.assign(
    new Error('User: arn:aws:iam::123456789012:user/op is not authorized to perform: sts:AssumeRole'),
    {
      name: 'AccessDenied',
      $metadata: { httpStatusCode: 403 },
    },
  );
}

describe('RoleCredentials', () => {
  it.each([
    { reason: 'an hour: refreshed when 5 minutes remain', lifetimeMs: 3_600_000, refreshAfterMs: 3_300_000 },
    { reason: '15 minutes: refreshed when 5 minutes remain', lifetimeMs: 900_000, refreshAfterMs: 600_000 },
    {
      reason: 'a minute (tests): refreshed when a third remains',
      lifetimeMs: 60_000,
      refreshAfterMs: 40_000,
    },
  ])('$reason, so no caller ever gets expired credentials', async ({ lifetimeMs, refreshAfterMs }) => {
    const clock = new FakeClock();
    const sts = stubSts(clock, lifetimeMs);
    const creds = new RoleCredentials({ clock, assumeRole: sts.assumeRole, input });
    const first = await creds.get();
    clock.advance(refreshAfterMs - 1);
    expect(await creds.get()).toBe(first);
    expect(sts.calls).toHaveLength(1);
    clock.advance(1);
    const second = await creds.get();
    expect(sts.calls).toHaveLength(2);
    expect(second.accessKeyId).not.toBe(first.accessKeyId);
    // Over many lifetimes, called every 1/20th of one: every answer is valid for a while yet.
    const step = lifetimeMs / 20;
    for (let i = 0; i < 200; i++) {
      clock.advance(step);
      const c = await creds.get();
      expect(c.expiration.getTime() - clock.now()).toBeGreaterThan(0);
    }
    const lifetimes = (200 * step) / refreshAfterMs;
    expect(sts.calls.length).toBeLessThanOrEqual(Math.ceil(lifetimes) + 2);
  });

  it('shares one AssumeRole among concurrent callers', async () => {
    const clock = new FakeClock();
    const sts = stubSts(clock, 3_600_000);
    let open = (): void => undefined;
    sts.state.gate = new Promise<void>((r) => {
      open = r;
    });
    const creds = new RoleCredentials({ clock, assumeRole: sts.assumeRole, input });
    const waiting = Array.from({ length: 50 }, () => creds.get());
    open();
    const all = await Promise.all(waiting);
    expect(sts.calls).toHaveLength(1);
    expect(new Set(all.map((c) => c.accessKeyId))).toEqual(new Set(['ASIA0001']));
  });

  it('answers a failure from the cache for failureTtlMs, then asks STS again', async () => {
    const clock = new FakeClock();
    const sts = stubSts(clock, 3_600_000);
    sts.state.fail = accessDenied();
    const creds = new RoleCredentials({ clock, assumeRole: sts.assumeRole, input, failureTtlMs: 30_000 });
    await expect(creds.get()).rejects.toThrow(/not authorized/);
    const many = await Promise.allSettled(Array.from({ length: 100 }, () => creds.get()));
    expect(many.every((r) => r.status === 'rejected')).toBe(true);
    expect(sts.calls).toHaveLength(1);
    clock.advance(29_999);
    await expect(creds.get()).rejects.toThrow(/not authorized/);
    expect(sts.calls).toHaveLength(1);
    clock.advance(1);
    delete sts.state.fail;
    expect((await creds.get()).accessKeyId).toBe('ASIA0002');
    expect(creds.failure).toBeUndefined();
  });

  it('serves the last credentials while they are valid when a refresh fails, and says so', async () => {
    const clock = new FakeClock();
    const sts = stubSts(clock, 900_000);
    const creds = new RoleCredentials({ clock, assumeRole: sts.assumeRole, input, failureTtlMs: 30_000 });
    const first = await creds.get();
    clock.advance(600_000);
    sts.state.fail = accessDenied();
    expect(await creds.get()).toBe(first);
    expect(creds.failure).toBe(sts.state.fail);
    // Past their expiration the failure is the answer.
    clock.advance(300_000);
    await expect(creds.get()).rejects.toThrow(/not authorized/);
  });
});

describe('roleSessionName', () => {
  const rule = /^[\w+=,.@-]{2,64}$/;
  it.each([
    { reason: 'a short cluster ID as is', id: 'prod-eu', want: 'skylift-prod-eu' },
    { reason: 'characters outside the rule replaced', id: 'a b/c:d', want: 'skylift-a-b-c-d' },
    { reason: 'exactly 64 kept', id: 'n'.repeat(56), want: `skylift-${'n'.repeat(56)}` },
  ])('$reason', ({ id, want }) => {
    expect(roleSessionName(id)).toBe(want);
    expect(roleSessionName(id)).toMatch(rule);
  });
  it('truncates a long cluster ID to 64 with a hash, so two with one prefix differ', () => {
    const a = roleSessionName(`${'x'.repeat(60)}-a`);
    const b = roleSessionName(`${'x'.repeat(60)}-b`);
    expect(a).toMatch(rule);
    expect(a).toHaveLength(64);
    expect(a.startsWith('skylift-xxxx')).toBe(true);
    expect(a).not.toBe(b);
  });
});

describe('AwsAccounts with roles', () => {
  const made: AwsClients[] = [];
  afterEach(() => {
    for (const c of made.splice(0)) c.destroy();
  });

  const policy = (name: string, roleArn: string, externalId?: string): TeamPolicy => ({
    metadata: { name },
    spec: {
      namespaces: { names: ['x'] },
      aws: { roleArn, ...(externalId !== undefined ? { externalId } : {}) },
    },
  });

  function setup() {
    const clock = new FakeClock();
    const metrics = new Metrics();
    const clientOptions = {
      clock,
      metrics,
      endpoint: 'http://127.0.0.1:1',
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    };
    const own = createAwsClients({ ...clientOptions, region: 'us-east-1' });
    made.push(own);
    const sts = stubSts(clock, 3_600_000);
    const reports: [string, AssumeRoleReport][] = [];
    const accounts = new AwsAccounts({
      own,
      clientOptions,
      assumeRole: sts.assumeRole,
      sessionName: 'skylift-prod',
      failureTtlMs: 30_000,
      reports: { reportAssumeRole: (name, r) => reports.push([name, r]) },
    });
    return { clock, sts, accounts, reports };
  }

  it('assumes the role with one session per role and external ID, whatever policy names it, and signs with its credentials', async () => {
    const { sts, accounts, reports } = setup();
    const p = policy('team-a', 'arn:aws:iam::111122223333:role/team-a', 'ext-1');
    const a = await accounts.clientsFor(p);
    expect(await accounts.clientsFor(p)).toBe(a);
    // Another policy naming the same role and external ID: the same session and clients.
    expect(
      await accounts.clientsFor(policy('team-a2', 'arn:aws:iam::111122223333:role/team-a', 'ext-1')),
    ).toBe(a);
    expect(sts.calls).toEqual([
      {
        roleArn: p.spec.aws?.roleArn,
        externalId: 'ext-1',
        sessionName: 'skylift-prod',
        durationSeconds: 3600,
      },
    ]);
    // Another external ID is another session.
    await accounts.clientsFor(policy('team-a3', 'arn:aws:iam::111122223333:role/team-a', 'ext-9'));
    expect(sts.calls).toHaveLength(2);
    const provider = (await a.route53()).config.credentials;
    const creds = await provider();
    expect(creds.accessKeyId).toBe('ASIA0001');
    expect(creds.sessionToken).toBe('token-1');
    expect(reports.at(-1)).toEqual(['team-a3', { ok: true, account: '111122223333' }]);
    accounts.destroy();
  });

  it('shares rate limiters and the account scope per account and region, whatever role, never between accounts', async () => {
    const { accounts } = setup();
    const a1 = await accounts.clientsFor(policy('a', 'arn:aws:iam::111122223333:role/a'));
    const a2 = await accounts.clientsFor(policy('a2', 'arn:aws:iam::111122223333:role/a2'));
    const b = await accounts.clientsFor(policy('b', 'arn:aws:iam::444455556666:role/b'));
    expect(a1).not.toBe(a2);
    expect(a1.scope).toBe(a2.scope);
    expect(a1.scope).not.toBe(b.scope);
    expect(a1.scope).not.toBe(accounts.own.scope);
    // A limiter comes with its service's client, made on first use.
    await Promise.all([a1, a2, b, accounts.own].map((c) => c.route53()));
    expect(a1.limiters.get('route53')).toBeDefined();
    expect(a1.limiters.get('route53')).toBe(a2.limiters.get('route53'));
    expect(a1.limiters.get('route53')).not.toBe(b.limiters.get('route53'));
    expect(a1.limiters.get('route53')).not.toBe(accounts.own.limiters.get('route53'));
    accounts.destroy();
  });

  it('lets go of the sessions, clients and scopes no policy uses any more', async () => {
    const { sts, accounts } = setup();
    const a = policy('a', 'arn:aws:iam::111122223333:role/a');
    const b = policy('b', 'arn:aws:iam::444455556666:role/b');
    const regional: TeamPolicy = {
      metadata: { name: 'r' },
      spec: { namespaces: { names: ['y'] }, aws: { region: 'eu-west-1' } },
    };
    const ca = await accounts.clientsFor(a);
    const cb = await accounts.clientsFor(b);
    const cr = await accounts.clientsFor(regional);
    const kept = ca.scope.memo(new ScopeKey<{ n: number }>('kept'), () => ({ n: 1 }));
    expect(accounts.held()).toEqual({ sessions: 2, clients: 3, scopes: 2 });
    accounts.follow([a, regional]);
    expect(accounts.held()).toEqual({ sessions: 1, clients: 2, scopes: 1 });
    expect(cb.destroyed).toBe(true);
    expect(ca.destroyed).toBe(false);
    expect(cr.destroyed).toBe(false);
    expect(ca.scope.size).toBe(1);
    expect(ca.scope.memo(new ScopeKey<{ n: number }>('other'), () => ({ n: 2 }))).not.toBe(kept);
    accounts.follow([]);
    expect(accounts.held()).toEqual({ sessions: 0, clients: 0, scopes: 0 });
    expect(ca.destroyed && cr.destroyed).toBe(true);
    expect(ca.scope.size).toBe(0);
    // Asked for again (the policy came back): a new session and new clients.
    const again = await accounts.clientsFor(a);
    expect(again).not.toBe(ca);
    expect(again.destroyed).toBe(false);
    expect(sts.calls).toHaveLength(3);
    accounts.destroy();
  });

  it('sets each account’s request budget from the lowest spec.aws.requestsPerSecond of its policies, and lifts it when they go', async () => {
    const { accounts } = setup();
    const withBudget = (name: string, role: string, route53?: number): TeamPolicy => ({
      metadata: { name },
      spec: {
        namespaces: { names: ['x'] },
        aws: { roleArn: role, ...(route53 !== undefined ? { requestsPerSecond: { route53 } } : {}) },
      },
    });
    const a8 = withBudget('a8', 'arn:aws:iam::111122223333:role/a', 8);
    const a3 = withBudget('a3', 'arn:aws:iam::111122223333:role/a2', 3);
    const b = withBudget('b', 'arn:aws:iam::444455556666:role/b');
    accounts.follow([a8, a3, b]);
    // Budgets apply to scopes made after follow, and to limiters made after the budget.
    const ca = await accounts.clientsFor(a8);
    const cb = await accounts.clientsFor(b);
    await Promise.all([ca.route53(), cb.route53()]);
    expect(ca.limiters.get('route53')?.maxPerSecond).toBe(3);
    expect(ca.limiters.get('route53')?.ratePerSecond).toBe(3);
    expect(cb.limiters.get('route53')?.maxPerSecond).toBe(10);
    // The lower policy goes: the account climbs back towards the higher budget.
    accounts.follow([a8, b]);
    expect(ca.limiters.get('route53')?.maxPerSecond).toBe(8);
    // None left: the default (Route 53's quota, 10/s).
    accounts.follow([withBudget('a8', 'arn:aws:iam::111122223333:role/a'), b]);
    expect(ca.limiters.get('route53')?.maxPerSecond).toBe(10);
    accounts.destroy();
  });

  it('reports sustained throttling of the account to each policy reaching it', async () => {
    const clock = new FakeClock();
    const metrics = new Metrics();
    const clientOptions = {
      clock,
      metrics,
      endpoint: 'http://127.0.0.1:1',
      credentials: { accessKeyId: 't', secretAccessKey: 't' },
    };
    const own = createAwsClients({ ...clientOptions, region: 'us-east-1' });
    made.push(own);
    const seen: [string, ThrottlingReport][] = [];
    const accounts = new AwsAccounts({
      own,
      clientOptions,
      assumeRole: stubSts(clock, 3_600_000).assumeRole,
      reports: { reportAssumeRole: () => undefined, reportThrottling: (name, r) => seen.push([name, r]) },
    });
    const p = policy('team-a', 'arn:aws:iam::111122223333:role/a');
    const c = await accounts.clientsFor(p);
    expect(seen.at(-1)).toEqual(['team-a', { account: '111122223333', sustained: [], ratePerSecond: {} }]);
    await c.route53();
    for (let m = 0; m < 3; m++) {
      if (m > 0) clock.advance(60_000);
      c.scope.throttles.note('route53', true, clock.now());
    }
    await accounts.clientsFor(p);
    expect(seen.at(-1)).toEqual([
      'team-a',
      {
        account: '111122223333',
        sustained: [{ service: 'route53', minutes: 3, calls: 3, throttles: 3 }],
        ratePerSecond: { route53: 10 },
      },
    ]);
    accounts.destroy();
  });

  it('retries a passing STS failure (throttled, 5xx) with the work queue’s backoff, asking STS again after a second', async () => {
    const { clock, sts, accounts, reports } = setup();
    sts.state.fail = Object.assign(new Error('Rate exceeded'), {
      name: 'Throttling',
      $metadata: { httpStatusCode: 400 },
    });
    const p = policy('team-t', 'arn:aws:iam::444455556666:role/team-t');
    const err: unknown = await accounts.clientsFor(p).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RetryableError);
    expect((err as RetryableError).reason).toBe('AssumeRoleFailed');
    expect((err as RetryableError).message).toContain('Throttling');
    expect(reports.at(-1)?.[1]).toMatchObject({ ok: false });
    await expect(accounts.clientsFor(p)).rejects.toThrow(RetryableError);
    expect(sts.calls).toHaveLength(1);
    clock.advance(1000);
    delete sts.state.fail;
    await accounts.clientsFor(p);
    expect(sts.calls).toHaveLength(2);
    expect(reports.at(-1)).toEqual(['team-t', { ok: true, account: '444455556666' }]);
    accounts.destroy();
  });

  it('turns a refused AssumeRole into RequeueAfter AssumeRoleFailed naming the policy, role, error and fix, once per TTL', async () => {
    const { clock, sts, accounts, reports } = setup();
    sts.state.fail = accessDenied();
    const p = policy('team-b', 'arn:aws:iam::444455556666:role/team-b', 'ext-2');
    const err: unknown = await accounts.clientsFor(p).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RequeueAfter);
    const r = err as RequeueAfter;
    expect(r.reason).toBe('AssumeRoleFailed');
    expect(r.delayMs).toBe(60_000);
    expect(r.message).toContain('TeamPolicy team-b');
    expect(r.message).toContain('arn:aws:iam::444455556666:role/team-b');
    expect(r.message).toContain('AccessDenied');
    expect(r.message).toMatch(/trust policy must allow .* sts:AssumeRole with the condition sts:ExternalId/);
    expect(reports.at(-1)).toEqual(['team-b', { ok: false, message: r.message }]);
    for (let i = 0; i < 1000; i++) await expect(accounts.clientsFor(p)).rejects.toThrow(RequeueAfter);
    expect(sts.calls).toHaveLength(1);
    clock.advance(30_000);
    delete sts.state.fail;
    await accounts.clientsFor(p);
    expect(sts.calls).toHaveLength(2);
    expect(reports.at(-1)).toEqual(['team-b', { ok: true, account: '444455556666' }]);
    accounts.destroy();
  });

  it('says STS did not answer for a network failure', async () => {
    const { sts, accounts } = setup();
    sts.state.fail = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { name: 'Error' });
    await expect(accounts.clientsFor(policy('c', 'arn:aws:iam::111122223333:role/c'))).rejects.toThrow(
      /cannot assume role arn:aws:iam::111122223333:role\/c \(Error: connect ECONNREFUSED.*STS did not answer/,
    );
    accounts.destroy();
  });

  it('reads the account of a role ARN', () => {
    expect(roleAccount('arn:aws:iam::111122223333:role/path/x')).toBe('111122223333');
    expect(roleAccount('arn:aws-cn:iam::111122223333:role/x')).toBe('111122223333');
    expect(roleAccount('arn:aws:iam::1111:role/x')).toBeUndefined();
  });
});
