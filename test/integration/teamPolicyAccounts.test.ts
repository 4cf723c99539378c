// TeamPolicies with spec.aws.roleArn on the real stack: the DNSRecord controller, run through
// tenancy, assumes each policy's role (moto puts what an assumed role makes in the role's account),
// so each namespace's records land in its own account's zone, signed with the assumed credentials.
// A role that cannot be assumed (AccessDenied injected at the fault proxy) leaves its namespace's
// objects Synced=False AssumeRoleFailed with no Route 53 call, until it can be assumed again.
import { randomBytes } from 'node:crypto';
import type { Route53Client } from '@aws-sdk/client-route-53';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TeamPolicy } from '../../src/apis/teampolicy.ts';
import { waitFor } from '../../dev/wait.ts';
import { installCrds } from '../../dev/installCrds.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import type { TenantDirectory } from '../../src/tenancy/directory.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import {
  createDnsRecord,
  createZone,
  findRecord,
  listRecords,
  route53AsRole,
  startDnsController,
  waitForCondition,
  type RunningDnsController,
} from '../support/dns.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { applyTeamPolicy, deleteTeamPolicies, readTeamPolicy, startTenants } from '../../dev/teamPolicies.ts';

const group = `sts-${randomBytes(3).toString('hex')}`;
const accountA = '210000000001';
const accountB = '210000000002';
const accountC = '210000000003';
const roleOf = (account: string): string => `arn:aws:iam::${account}:role/skylift-${group}`;

let admin: KubeClient;
let proxy: AwsFaultProxy;
let tenants: TenantDirectory;
let controller: RunningDnsController | undefined;
const ns = { a: '', b: '', c: '' };
/** Zones by account, then by name: each namespace's zone exists in both its own account and another. */
const zones = new Map<string, { r53: Route53Client; byName: Map<string, string> }>();

/** A Route 53 client straight to moto with credentials of `account`'s role (as its platform team would). */
function route53As(account: string): Promise<Route53Client> {
  return route53AsRole(stackInfo().awsEndpoint, roleOf(account), `test-${group}`);
}

async function createPolicy(
  name: string,
  namespace: string,
  account: string,
  externalId: string,
): Promise<void> {
  await applyTeamPolicy(admin, group, name, {
    namespaces: { names: [namespace] },
    aws: { roleArn: roleOf(account), externalId },
  });
}

async function waitForPolicy(
  name: string,
  check: (p: TeamPolicy) => boolean,
  what: string,
): Promise<TeamPolicy> {
  return waitFor(
    async () => {
      const p = await readTeamPolicy(admin, name);
      return check(p) ? p : undefined;
    },
    { timeoutMs: 30_000, description: `TeamPolicy ${name} ${what}` },
  );
}

async function recordsIn(account: string, zoneName: string) {
  const z = zones.get(account);
  const id = z?.byName.get(zoneName);
  if (z === undefined || id === undefined) throw new Error(`no zone ${zoneName} in ${account}`);
  return listRecords(z.r53, id);
}

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  proxy = await startFaultProxy();
  ns.a = await newNamespace(admin, 'sts-a');
  ns.b = await newNamespace(admin, 'sts-b');
  ns.c = await newNamespace(admin, 'sts-c');
  // Each namespace's zone in its own account, and a zone of the same name in the other account:
  // a record signed as the wrong account would land there (the operator's own account has none).
  const plan: [string, string[]][] = [
    [accountA, [ns.a, ns.b]],
    [accountB, [ns.a, ns.b]],
    [accountC, [ns.c]],
  ];
  for (const [account, names] of plan) {
    const r53 = await route53As(account);
    const byName = new Map<string, string>();
    for (const n of names) byName.set(`${n}.example.com`, await createZone(r53, `${n}.example.com`));
    zones.set(account, { r53, byName });
  }
  await createPolicy(`${group}-a`, ns.a, accountA, 'ext-a');
  await createPolicy(`${group}-b`, ns.b, accountB, 'ext-b');
  await createPolicy(`${group}-c`, ns.c, accountC, 'ext-c');
  tenants = await startTenants(admin, group);
});

afterAll(async () => {
  await controller?.stop();
  await tenants.stop();
  await proxy.stop();
  // Cluster-scoped: the files that run after this one share the apiserver.
  await deleteTeamPolicies(admin, group);
  for (const z of zones.values()) z.r53.destroy();
});

describe('TeamPolicy roles', () => {
  it('a role that cannot be assumed: AssumeRoleFailed on every object and the policy, no Route 53 call; fixed, it recovers', async () => {
    const denied = proxy.inject({
      service: 'sts',
      operation: 'AssumeRole',
      match: (call) => call.body.includes(accountC),
      fault: {
        kind: 'error',
        status: 403,
        code: 'AccessDenied',
        message: `User: arn:aws:iam::123456789012:user/skylift is not authorized to perform: sts:AssumeRole on resource: ${roleOf(accountC)}`,
      },
    });
    controller = await startDnsController({
      namespace: [ns.a, ns.b, ns.c].join(','),
      endpoint: proxy.endpoint,
      tenants,
      accounts: { retryMs: 1000, failureTtlMs: 500 },
    });
    proxy.resetCalls();
    const started = Date.now();
    const zone = `${ns.c}.example.com`;
    const names = ['www', 'api', 'mail'];
    for (const name of names)
      await createDnsRecord(admin, ns.c, name, { zoneName: zone, name, type: 'A', records: ['192.0.2.3'] });
    for (const name of names) {
      const r = await waitForCondition(admin, ns.c, name, {
        type: 'Synced',
        status: 'False',
        reason: 'AssumeRoleFailed',
      });
      const msg = r.status?.conditions?.find((x) => x.type === 'Synced')?.message ?? '';
      expect(msg).toContain(`TeamPolicy ${group}-c`);
      expect(msg).toContain(roleOf(accountC));
      expect(msg).toContain('AccessDenied');
      expect(msg).toMatch(
        /trust policy must allow the operator's IAM role to call sts:AssumeRole with the condition sts:ExternalId/,
      );
    }
    const policy = await waitForPolicy(
      `${group}-c`,
      (p) => p.status?.assumeRole?.result === 'Failed',
      'assumeRole Failed',
    );
    expect(policy.status?.assumeRole?.message).toContain('AccessDenied');
    const ready = policy.status?.conditions?.find((c) => c.type === 'Ready');
    expect(ready).toMatchObject({ status: 'False', reason: 'AssumeRoleFailed' });
    // Retried (not left until the resync), yet never a hot loop: at most one AssumeRole per
    // failure TTL for the three objects together.
    await expect.poll(() => denied.hits, { timeout: 30_000 }).toBeGreaterThan(1);
    const elapsed = Date.now() - started;
    expect(denied.hits).toBeLessThanOrEqual(Math.ceil(elapsed / 500) + 1);
    expect(proxy.count({ service: 'route53' })).toBe(0);

    denied.remove();
    for (const name of names)
      await waitForCondition(admin, ns.c, name, { type: 'Ready', status: 'True' }, 60_000);
    const records = await recordsIn(accountC, zone);
    for (const name of names) expect(findRecord(records, `${name}.${zone}`, 'A')).toBeDefined();
    const fixed = await waitForPolicy(
      `${group}-c`,
      (p) => p.status?.assumeRole?.result === 'Succeeded',
      'assumeRole Succeeded',
    );
    expect(fixed.status?.assumeRole?.account).toBe(accountC);
    expect(fixed.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
  });

  it("puts each namespace's records in its own role's account, signed with the assumed credentials", async () => {
    expect(controller).toBeDefined();
    proxy.resetCalls();
    for (const [n, ip] of [
      [ns.a, '192.0.2.1'],
      [ns.b, '192.0.2.2'],
    ] as const)
      await createDnsRecord(admin, n, 'www', {
        zoneName: `${n}.example.com`,
        name: 'www',
        type: 'A',
        records: [ip],
      });
    await waitForCondition(admin, ns.a, 'www', { type: 'Ready', status: 'True' }, 60_000);
    await waitForCondition(admin, ns.b, 'www', { type: 'Ready', status: 'True' }, 60_000);

    for (const [own, other, n, ip] of [
      [accountA, accountB, ns.a, '192.0.2.1'],
      [accountB, accountA, ns.b, '192.0.2.2'],
    ] as const) {
      const zone = `${n}.example.com`;
      const mine = findRecord(await recordsIn(own, zone), `www.${zone}`, 'A');
      expect(mine?.ResourceRecords?.map((r) => r.Value)).toEqual([ip]);
      expect(findRecord(await recordsIn(other, zone), `www.${zone}`, 'A')).toBeUndefined();
    }

    // STS was called with the operator's own key; Route 53 only with the roles' session keys.
    const calls = proxy.calls();
    const assumes = calls.filter((c) => c.service === 'sts' && c.operation === 'AssumeRole');
    expect(assumes.length).toBeGreaterThanOrEqual(2);
    expect(new Set(assumes.map((c) => c.accessKeyId))).toEqual(new Set(['testing']));
    const r53 = calls.filter((c) => c.service === 'route53');
    expect(r53.some((c) => c.operation === 'ChangeResourceRecordSets')).toBe(true);
    const keys = new Set(r53.map((c) => c.accessKeyId));
    expect(keys.has('testing')).toBe(false);
    expect(keys.has(undefined)).toBe(false);
    expect(keys.size).toBeGreaterThanOrEqual(2);

    for (const [name, account] of [
      [`${group}-a`, accountA],
      [`${group}-b`, accountB],
    ] as const) {
      const p = await waitForPolicy(
        name,
        (x) => x.status?.assumeRole?.result === 'Succeeded',
        'assumeRole Succeeded',
      );
      expect(p.status?.assumeRole?.account).toBe(account);
      expect(p.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
        status: 'True',
        reason: 'Serving',
      });
    }

    // The AWS call metrics carry the role's account.
    const calls2 = await controller?.metrics.awsCalls.get();
    const accountsSeen = new Set(
      (calls2?.values ?? [])
        .filter((v) => v.labels.service === 'route53')
        .map((v) => String(v.labels.account)),
    );
    expect(accountsSeen).toEqual(new Set([accountA, accountB, accountC]));
  });
});
