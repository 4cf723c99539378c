// Many namespaces under TeamPolicies that reach one AWS account (issue 28): one role session per
// role, and one zone directory, one listing per zone and one change batcher for the whole account,
// whatever namespace or role asks — while every change goes out signed by its own namespace's role
// and never beside another role's changes. Before issue 28 each namespace had its own session,
// clients, zone lookups and listings: 10 namespaces made 10 AssumeRoles, 10 zone lookups and 10
// listings of the one zone.
import { randomBytes } from 'node:crypto';
import type { Route53Client } from '@aws-sdk/client-route-53';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { applyTeamPolicy, deleteTeamPolicies, readTeamPolicy, startTenants } from '../../dev/teamPolicies.ts';
import { waitFor } from '../../dev/wait.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import type { TenantDirectory } from '../../src/tenancy/directory.ts';
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

const group = `shared-${randomBytes(3).toString('hex')}`;
const account = '210000000028';
const roleOf = (name: string): string => `arn:aws:iam::${account}:role/${name}-${group}`;
const zoneName = `${group}.example.com`;
const perNamespace = 3;

let admin: KubeClient;
let proxy: AwsFaultProxy;
let tenants: TenantDirectory;
let controller: RunningDnsController | undefined;
let r53: Route53Client;
let zoneId = '';
/** Namespaces by the role their policy names. */
const byRole = { one: [] as string[], two: [] as string[] };
const changeBodies: { accessKeyId: string | undefined; body: string }[] = [];

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  proxy = await startFaultProxy();
  for (let i = 0; i < 10; i++) (i < 6 ? byRole.one : byRole.two).push(await newNamespace(admin, `sh${i}`));
  r53 = await route53AsRole(stackInfo().awsEndpoint, roleOf('one'), 'test');
  zoneId = await createZone(r53, zoneName);
  // Two policies naming two roles of one account, and a third naming the first role again.
  await applyTeamPolicy(admin, group, `${group}-one`, {
    namespaces: { names: byRole.one.slice(0, 3) },
    aws: { roleArn: roleOf('one') },
  });
  await applyTeamPolicy(admin, group, `${group}-one-again`, {
    namespaces: { names: byRole.one.slice(3) },
    aws: { roleArn: roleOf('one') },
  });
  await applyTeamPolicy(admin, group, `${group}-two`, {
    namespaces: { names: byRole.two },
    aws: { roleArn: roleOf('two') },
  });
  tenants = await startTenants(admin, group);
});

afterAll(async () => {
  await controller?.stop();
  await tenants.stop();
  await proxy.stop();
  await deleteTeamPolicies(admin, group);
  r53.destroy();
});

describe('namespaces sharing one account', () => {
  it('share one session per role, one zone lookup, one listing and the batches of their role; changes are signed by their own role only', async () => {
    const all = [...byRole.one, ...byRole.two];
    controller = await startDnsController({
      namespace: all.join(','),
      endpoint: proxy.endpoint,
      tenants,
      accounts: {},
    });
    proxy.resetCalls();
    const stop = proxy.watch((call) => {
      if (call.service === 'route53' && call.operation === 'ChangeResourceRecordSets')
        changeBodies.push({ accessKeyId: call.accessKeyId, body: call.body });
    });
    await Promise.all(
      all.flatMap((ns) =>
        Array.from({ length: perNamespace }, (_, i) =>
          createDnsRecord(admin, ns, `r${i}`, {
            zoneName,
            name: `${ns}-r${i}`,
            type: 'A',
            records: ['192.0.2.8'],
          }),
        ),
      ),
    );
    for (const ns of all)
      for (let i = 0; i < perNamespace; i++)
        await waitForCondition(admin, ns, `r${i}`, { type: 'Ready', status: 'True' }, 60_000);
    stop();

    const records = await listRecords(r53, zoneId);
    for (const ns of all)
      for (let i = 0; i < perNamespace; i++)
        expect(findRecord(records, `${ns}-r${i}.${zoneName}`, 'A')).toBeDefined();

    // One session per role, whatever policy or namespace: not one per namespace.
    const assumes = proxy.count({ service: 'sts', operation: 'AssumeRole' });
    expect(assumes).toBe(2);
    // The zone is looked up and listed once for the account, not once per namespace.
    expect(proxy.count({ service: 'route53', operation: 'ListHostedZonesByName' })).toBe(1);
    expect(proxy.count({ service: 'route53', operation: 'ListResourceRecordSets' })).toBe(1);

    // Every change call is signed by one role's session and carries only that role's namespaces.
    const roleOfNamespace = new Map([
      ...byRole.one.map((ns) => [ns, 'one'] as const),
      ...byRole.two.map((ns) => [ns, 'two'] as const),
    ]);
    const roleByKey = new Map<string, string>();
    for (const call of changeBodies) {
      const roles = new Set(
        [...call.body.matchAll(/<Name>([a-z0-9-]+)-r\d+\./g)].map((m) => roleOfNamespace.get(m[1] ?? '')),
      );
      expect(roles.size).toBe(1);
      const role = [...roles][0] ?? '';
      expect(call.accessKeyId).toBeDefined();
      const key = call.accessKeyId ?? '';
      expect(roleByKey.get(key) ?? role).toBe(role);
      roleByKey.set(key, role);
    }
    expect(new Set(roleByKey.values())).toEqual(new Set(['one', 'two']));
  });

  it('shows sustained throttling of the account on the policy (Throttled=True, Ready untouched), and its end', async () => {
    const name = `${group}-two`;
    tenants.reportThrottling(name, {
      account,
      sustained: [{ service: 'route53', minutes: 3, calls: 120, throttles: 9 }],
      ratePerSecond: { route53: 4.2 },
    });
    const throttled = await waitFor(
      async () => {
        const p = await readTeamPolicy(admin, name);
        const c = p.status?.conditions?.find((x) => x.type === 'Throttled');
        return c?.status === 'True' ? c : undefined;
      },
      { timeoutMs: 30_000, description: `TeamPolicy ${name} Throttled=True` },
    );
    expect(throttled.reason).toBe('SustainedThrottling');
    expect(throttled.message).toContain(
      `account ${account}: route53 throttled 9 of 120 calls in 3 of the last 5 minutes`,
    );
    const ready = (await readTeamPolicy(admin, name)).status?.conditions?.find((x) => x.type === 'Ready');
    expect(ready?.status).toBe('True');
    tenants.reportThrottling(name, { account, sustained: [], ratePerSecond: {} });
    const calm = await waitFor(
      async () => {
        const p = await readTeamPolicy(admin, name);
        const c = p.status?.conditions?.find((x) => x.type === 'Throttled');
        return c?.status === 'False' ? c : undefined;
      },
      { timeoutMs: 30_000, description: `TeamPolicy ${name} Throttled=False` },
    );
    expect(calm.reason).toBe('WithinBudget');
  });
});
