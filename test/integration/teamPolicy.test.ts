// TeamPolicies in the reconcile, on the real apiserver and moto behind the proxy: the DNSRecord
// controller served through a TenantDirectory. What a namespace may not do is Synced=False reason
// Forbidden with a message naming the policy and the field, and makes no AWS change.
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { configMapType } from '../../src/apis/core.ts';
import { resourcePath, type KubeObject } from '../../src/apis/meta.ts';
import { dnsRecordType, type DNSRecord } from '../../src/kinds/dnsrecord/api.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import type { TeamsMarker, TenantDirectory } from '../../src/tenancy/directory.ts';
import type { Route53Client } from '@aws-sdk/client-route-53';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import type { AwsCall } from '../../dev/awsOperation.ts';
import {
  createDnsRecord,
  createZone,
  findRecord,
  listRecords,
  route53At,
  startDnsController,
  waitForCondition,
  type RunningDnsController,
} from '../support/dns.ts';
import { kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { startTcpProxy } from '../support/tcpProxy.ts';
import { KubeClient } from '../../src/runtime/kube/client.ts';
import { kubeConfig, stackInfo, startFaultProxy } from '../support/stack.ts';
import {
  applyTeamPolicy,
  deleteTeamPolicies,
  deleteTeamPolicy,
  readTeamPolicy,
  startTenants,
  teamsMarkerFor,
} from '../../dev/teamPolicies.ts';

const group = 'integration-teampolicy';
let admin: KubeClient;
let proxy: AwsFaultProxy;
let tenants: TenantDirectory;
const running: RunningDnsController[] = [];
/** Every Route 53 change sent through the proxy, body included. */
let changes: AwsCall[] = [];

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  proxy = await startFaultProxy();
  tenants = await startTenants(admin, group);
  proxy.watch((call) => {
    if (call.operation === 'ChangeResourceRecordSets') changes.push(call);
  });
});
afterAll(async () => {
  await deleteTeamPolicies(admin, group);
  await tenants.stop();
  await proxy.stop();
});
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
  await deleteTeamPolicies(admin, group);
});

async function controllerFor(ns: string): Promise<void> {
  running.push(await startDnsController({ namespace: ns, endpoint: proxy.endpoint, tenants }));
}

const a = (name: string) => ({ name, type: 'A' as const, ttl: 60, records: ['192.0.2.10'] });
/** Route 53 changes sent for a name since the last reset. */
const changesTo = (fqdn: string): number =>
  changes.filter((c) => c.body.includes(`<Name>${fqdn}</Name>`)).length;

/** Waits until the record `fqdn` is gone from the zone and DNSRecord `ns/name` from the cluster. */
async function recordAndObjectGone(
  r53: Route53Client,
  zoneId: string,
  fqdn: string,
  ns: string,
  name: string,
  description: string,
): Promise<void> {
  await waitFor(
    async () =>
      findRecord(await listRecords(r53, zoneId), fqdn, 'A') === undefined &&
      (await readObject<DNSRecord>(admin, dnsRecordType, ns, name)) === undefined
        ? true
        : undefined,
    { timeoutMs: 20_000, description },
  );
}

/** Waits until deleting DNSRecord `ns/name` is refused ("cannot delete the AWS resource: …"); returns it. */
async function deletionRefused(ns: string, name: string, description: string): Promise<DNSRecord> {
  return waitFor(
    async () => {
      const r = await readObject<DNSRecord>(admin, dnsRecordType, ns, name);
      const m = r?.status?.conditions?.find((c) => c.type === 'Synced')?.message ?? '';
      return m.startsWith('cannot delete the AWS resource') ? r : undefined;
    },
    { timeoutMs: 15_000, description },
  );
}

describe('TeamPolicy in the reconcile', () => {
  it('refuses another team’s names and NS delegations without a Route 53 change, serves its own', async () => {
    const ns = await newNamespace(admin, 'tp-names');
    const zone = `${ns}.example.com`;
    const r53 = route53At(stackInfo().awsEndpoint);
    const zoneId = await createZone(r53, zone);
    await applyTeamPolicy(admin, group, `${ns}-payments`, {
      namespaces: { names: [ns] },
      guardrails: { dnsRecords: { zones: [{ name: zone }], names: [`payments.${zone}`] } },
    });
    await controllerFor(ns);
    changes = [];
    await createDnsRecord(admin, ns, 'mine', { zoneName: zone, ...a('api.payments') });
    await createDnsRecord(admin, ns, 'theirs', { zoneName: zone, ...a('login.admin') });
    await createDnsRecord(admin, ns, 'challenge', {
      zoneName: zone,
      name: '_acme-challenge.admin',
      type: 'TXT',
      records: ['token'],
    });
    await createDnsRecord(admin, ns, 'delegation', {
      zoneName: zone,
      name: 'sub.payments',
      type: 'NS',
      records: ['ns1.attacker.example.net'],
    });
    await waitForCondition(admin, ns, 'mine', { type: 'Ready', status: 'True' });
    const theirs = await waitForCondition(admin, ns, 'theirs', {
      type: 'Synced',
      status: 'False',
      reason: 'Forbidden',
    });
    expect(theirs.status?.conditions?.find((c) => c.type === 'Synced')?.message).toBe(
      `TeamPolicy ${ns}-payments forbids spec.name: login.admin.${zone} is not within the names this namespace may write (payments.${zone}); the name is fixed at create: delete this DNSRecord and create one under an allowed name, or ask the platform team to add a domain to spec.guardrails.dnsRecords.names`,
    );
    const challenge = await waitForCondition(admin, ns, 'challenge', {
      type: 'Synced',
      status: 'False',
      reason: 'Forbidden',
    });
    expect(challenge.status?.conditions?.find((c) => c.type === 'Synced')?.message).toMatch(
      new RegExp(`forbids spec.name: _acme-challenge\\.admin\\.${ns}\\.example\\.com is not within`),
    );
    const ns1 = await waitForCondition(admin, ns, 'delegation', {
      type: 'Synced',
      status: 'False',
      reason: 'Forbidden',
    });
    expect(ns1.status?.conditions?.find((c) => c.type === 'Synced')?.message).toMatch(
      /forbids spec.type: an NS record at sub\.payments\..* delegates a subdomain to other name servers/,
    );
    expect(theirs.metadata.finalizers ?? []).toEqual([]);
    const records = await listRecords(r53, zoneId);
    expect(findRecord(records, `api.payments.${zone}`, 'A')).toBeDefined();
    expect(findRecord(records, `login.admin.${zone}`, 'A')).toBeUndefined();
    expect(findRecord(records, `_acme-challenge.admin.${zone}`, 'TXT')).toBeUndefined();
    expect(findRecord(records, `sub.payments.${zone}`, 'NS')).toBeUndefined();
    expect(changesTo(`login.admin.${zone}.`)).toBe(0);
    expect(changesTo(`sub.payments.${zone}.`)).toBe(0);
    const policy = await waitFor(
      async () => {
        const p = await readTeamPolicy(admin, `${ns}-payments`);
        return p.status?.namespaceCount === 1 ? p : undefined;
      },
      { timeoutMs: 10_000, description: 'policy status' },
    );
    expect(policy.status?.selectedNamespaces).toEqual([ns]);
    expect(policy.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'True',
      reason: 'Serving',
    });
  });

  it('marks existing objects Forbidden when the policy tightens, changes nothing in AWS for them, still deletes', async () => {
    const ns = await newNamespace(admin, 'tp-tighten');
    const zone = `${ns}.example.com`;
    const r53 = route53At(stackInfo().awsEndpoint);
    const zoneId = await createZone(r53, zone);
    const name = `${ns}-team`;
    await applyTeamPolicy(admin, group, name, { namespaces: { names: [ns] } });
    await controllerFor(ns);
    await createDnsRecord(admin, ns, 'www', { zoneName: zone, ...a('www') });
    await waitForCondition(admin, ns, 'www', { type: 'Ready', status: 'True' });
    await applyTeamPolicy(admin, group, name, {
      namespaces: { names: [ns] },
      guardrails: { dnsRecords: { names: [`other.${zone}`] } },
    });
    await waitForCondition(admin, ns, 'www', { type: 'Synced', status: 'False', reason: 'Forbidden' });
    changes = [];
    // A change to the spec of a Forbidden object is not carried out.
    await admin.patch(
      resourcePath(dnsRecordType, { namespace: ns, name: 'www' }),
      { spec: { records: ['192.0.2.99'] } },
      'merge',
    );
    await waitFor(
      async () => {
        const r = await readObject<DNSRecord>(admin, dnsRecordType, ns, 'www');
        const synced = r?.status?.conditions?.find((c) => c.type === 'Synced');
        return synced?.observedGeneration === r?.metadata.generation && synced?.reason === 'Forbidden'
          ? r
          : undefined;
      },
      { timeoutMs: 15_000, description: 'the changed object judged Forbidden' },
    );
    expect(findRecord(await listRecords(r53, zoneId), `www.${zone}`, 'A')?.ResourceRecords).toEqual([
      { Value: '192.0.2.10' },
    ]);
    expect(changesTo(`www.${zone}.`)).toBe(0);
    // Deleting it still cleans up what Skylift made.
    await admin.delete(resourcePath(dnsRecordType, { namespace: ns, name: 'www' }));
    await recordAndObjectGone(r53, zoneId, `www.${zone}`, ns, 'www', 'record and object gone');
  });

  it('refuses a namespace no policy selects, and one two policies select (both policies say so); serves it again once one remains', async () => {
    const ns = await newNamespace(admin, 'tp-select');
    const zone = `${ns}.example.com`;
    await createZone(route53At(stackInfo().awsEndpoint), zone);
    const other = `${ns}-other`;
    await applyTeamPolicy(admin, group, other, { namespaces: { names: [`${ns}-x`] } });
    await controllerFor(ns);
    await createDnsRecord(admin, ns, 'www', { zoneName: zone, ...a('www') });
    const refused = await waitForCondition(admin, ns, 'www', {
      type: 'Synced',
      status: 'False',
      reason: 'Forbidden',
    });
    expect(refused.status?.conditions?.find((c) => c.type === 'Synced')?.message).toMatch(
      new RegExp(`^namespace ${ns} is not selected by any TeamPolicy; once a TeamPolicy exists`),
    );
    // Other teams' policies are not named to this one (issue 27, item 18).
    expect(refused.status?.conditions?.find((c) => c.type === 'Synced')?.message).not.toContain(other);
    // Two policies: by name and by label.
    await admin.patch(`/api/v1/namespaces/${ns}`, { metadata: { labels: { team: ns } } }, 'merge');
    await applyTeamPolicy(admin, group, `${ns}-a`, { namespaces: { names: [ns] } });
    await applyTeamPolicy(admin, group, `${ns}-b`, {
      namespaces: { selector: { matchLabels: { team: ns } } },
    });
    const overlap = await waitFor(
      async () => {
        const r = await readObject<DNSRecord>(admin, dnsRecordType, ns, 'www');
        const m = r?.status?.conditions?.find((c) => c.type === 'Synced')?.message ?? '';
        return m.includes('is selected by 2 TeamPolicies') ? m : undefined;
      },
      { timeoutMs: 15_000, description: 'overlap refusal' },
    );
    expect(overlap).toBe(
      `namespace ${ns} is selected by 2 TeamPolicies (${ns}-a, ${ns}-b); a namespace must have exactly one: remove it from all but one policy's spec.namespaces`,
    );
    for (const [p, q] of [
      [`${ns}-a`, `${ns}-b`],
      [`${ns}-b`, `${ns}-a`],
    ] as const) {
      const policy = await waitFor(
        async () => {
          const got = await readTeamPolicy(admin, p);
          return got.status?.conditions?.find((c) => c.type === 'Ready')?.reason === 'Overlap'
            ? got
            : undefined;
        },
        { timeoutMs: 10_000, description: `${p} Overlap` },
      );
      expect(policy.status?.conditions?.find((c) => c.type === 'Ready')?.message).toBe(
        `TeamPolicy ${q} also selects ${ns}: those namespaces are refused until exactly one policy selects them`,
      );
    }
    await deleteTeamPolicy(admin, `${ns}-b`);
    await waitForCondition(admin, ns, 'www', { type: 'Ready', status: 'True' });
  });

  it('carries out a refused object once the policy loosens; refuses it again when its namespace loses its policy', async () => {
    const ns = await newNamespace(admin, 'tp-loosen');
    const zone = `${ns}.example.com`;
    const r53 = route53At(stackInfo().awsEndpoint);
    const zoneId = await createZone(r53, zone);
    const name = `${ns}-team`;
    await applyTeamPolicy(admin, group, name, {
      namespaces: { names: [ns] },
      guardrails: { dnsRecords: { names: [`a.${zone}`] } },
    });
    // Another policy exists throughout: losing its own policy leaves the namespace unselected.
    await applyTeamPolicy(admin, group, `${ns}-other`, { namespaces: { names: [`${ns}-x`] } });
    await controllerFor(ns);
    await createDnsRecord(admin, ns, 'api', { zoneName: zone, ...a('api.b') });
    await waitForCondition(admin, ns, 'api', { type: 'Synced', status: 'False', reason: 'Forbidden' });
    expect(findRecord(await listRecords(r53, zoneId), `api.b.${zone}`, 'A')).toBeUndefined();
    await applyTeamPolicy(admin, group, name, {
      namespaces: { names: [ns] },
      guardrails: { dnsRecords: { names: [`a.${zone}`, `b.${zone}`] } },
    });
    await waitForCondition(admin, ns, 'api', { type: 'Ready', status: 'True' });
    expect(findRecord(await listRecords(r53, zoneId), `api.b.${zone}`, 'A')).toBeDefined();
    changes = [];
    await deleteTeamPolicy(admin, name);
    const lost = await waitForCondition(admin, ns, 'api', {
      type: 'Synced',
      status: 'False',
      reason: 'Forbidden',
    });
    expect(lost.status?.conditions?.find((c) => c.type === 'Synced')?.message).toMatch(
      new RegExp(`^namespace ${ns} is not selected by any TeamPolicy`),
    );
    // The record stays as it was: losing the policy changes nothing in AWS.
    expect(findRecord(await listRecords(r53, zoneId), `api.b.${zone}`, 'A')).toBeDefined();
    expect(changesTo(`api.b.${zone}.`)).toBe(0);
    // Deleted meanwhile: the finalizer stays (no identity to delete with), and says why.
    await admin.delete(resourcePath(dnsRecordType, { namespace: ns, name: 'api' }));
    const stuck = await deletionRefused(ns, 'api', 'deletion refused for lack of a policy');
    expect(stuck.metadata.finalizers).toContain('aws.skylift.dev/cleanup');
    expect(stuck.status?.conditions?.find((c) => c.type === 'Synced')?.message).toMatch(
      new RegExp(
        `^cannot delete the AWS resource: namespace ${ns} is not selected by any TeamPolicy; .*\\. The finalizer aws.skylift.dev/cleanup stays until Skylift may reach AWS for this namespace again; to leave the resource in AWS instead, remove the finalizer$`,
      ),
    );
    expect(findRecord(await listRecords(r53, zoneId), `api.b.${zone}`, 'A')).toBeDefined();
    // The policy back: the deletion completes and cleans up.
    await applyTeamPolicy(admin, group, name, { namespaces: { names: [ns] } });
    await recordAndObjectGone(
      r53,
      zoneId,
      `api.b.${zone}`,
      ns,
      'api',
      'record and object gone once the policy is back',
    );
  });

  it('records where a resource lives, and refuses to act when the policy moves the namespace to another account', async () => {
    const ns = await newNamespace(admin, 'tp-move');
    const zone = `${ns}.example.com`;
    const r53 = route53At(stackInfo().awsEndpoint);
    const zoneId = await createZone(r53, zone);
    const name = `${ns}-team`;
    await applyTeamPolicy(admin, group, name, { namespaces: { names: [ns] } });
    running.push(
      await startDnsController({ namespace: ns, endpoint: proxy.endpoint, tenants, accounts: {} }),
    );
    await createDnsRecord(admin, ns, 'www', { zoneName: zone, ...a('www') });
    const ready = await waitForCondition(admin, ns, 'www', { type: 'Ready', status: 'True' });
    // moto's account for the operator's own credentials (STS GetCallerIdentity).
    expect(ready.status?.location).toEqual({ account: '123456789012', region: 'us-east-1' });
    // The platform team points the namespace at another account: nothing is created there.
    await applyTeamPolicy(admin, group, name, {
      namespaces: { names: [ns] },
      aws: { roleArn: 'arn:aws:iam::210987654321:role/team' },
    });
    const moved = await waitForCondition(admin, ns, 'www', {
      type: 'Synced',
      status: 'False',
      reason: 'Forbidden',
    });
    expect(moved.status?.conditions?.find((c) => c.type === 'Synced')?.message).toBe(
      "this object's AWS resource is in account 123456789012, region us-east-1, but its namespace is now served in account 210987654321, region us-east-1 (its TeamPolicy's spec.aws changed); Skylift will not create a second one there nor act on the first: restore the policy's spec.aws, or delete this object with spec.deletionPolicy: Orphan and create it again",
    );
    changes = [];
    await admin.delete(resourcePath(dnsRecordType, { namespace: ns, name: 'www' }));
    const stuck = await deletionRefused(ns, 'www', 'deletion refused in the wrong account');
    expect(stuck.metadata.finalizers).toContain('aws.skylift.dev/cleanup');
    expect(changesTo(`www.${zone}.`)).toBe(0);
    expect(findRecord(await listRecords(r53, zoneId), `www.${zone}`, 'A')).toBeDefined();
    // Restored: the deletion completes in the account the record lives in.
    await applyTeamPolicy(admin, group, name, { namespaces: { names: [ns] } });
    await recordAndObjectGone(
      r53,
      zoneId,
      `www.${zone}`,
      ns,
      'www',
      'record and object gone once the policy is restored',
    );
  });

  // Issue 27, item 10: while no TeamPolicy existed — every policy deleted and applied again, as a
  // GitOps sync or a chart reinstall does — objects were carried out with the operator's identity
  // and no guardrails, and stayed after the policies returned.
  it('fails closed once a policy has been seen: every policy deleted, a restart with none, until the platform team deletes the marker', async () => {
    const own = `${group}-closed-${randomBytes(3).toString('hex')}`;
    const marker = teamsMarkerFor(own);
    let directory = await startTenants(admin, own);
    const ns = await newNamespace(admin, 'tp-closed');
    const zone = `${ns}.example.com`;
    const r53 = route53At(stackInfo().awsEndpoint);
    const zoneId = await createZone(r53, zone);
    let controller = await startDnsController({
      namespace: ns,
      endpoint: proxy.endpoint,
      tenants: directory,
    });
    try {
      await applyTeamPolicy(admin, own, `${own}-team`, {
        namespaces: { names: [ns] },
        guardrails: { dnsRecords: { names: [`allowed.${zone}`] } },
      });
      await createDnsRecord(admin, ns, 'apex', { zoneName: zone, ...a('www') });
      await syncedMessage(ns, 'apex', (m) => m.startsWith(`TeamPolicy ${own}-team forbids spec.name`));

      // Every policy deleted: refused, nothing in Route 53.
      await deleteTeamPolicies(admin, own);
      const closed = `namespace ${ns} is not selected by any TeamPolicy, and this installation serves only namespaces a TeamPolicy selects (it has served teams since a TeamPolicy was first seen; recorded in ConfigMap ${marker.namespace}/${marker.name}), also while none exists: ask the platform team to add ${ns} to a TeamPolicy's spec.namespaces`;
      await syncedMessage(ns, 'apex', (m) => m === closed);
      await createDnsRecord(admin, ns, 'new', { zoneName: zone, ...a('new') });
      await syncedMessage(ns, 'new', (m) => m === closed);
      // Recorded in its marker once the policy was seen.
      expect((await readConfigMap(marker))?.data).toMatchObject({ teamsServed: 'true' });

      // A restart with no policy at all: still refused (the marker is read at start).
      await controller.stop();
      await directory.stop();
      directory = await startTenants(admin, own);
      controller = await startDnsController({ namespace: ns, endpoint: proxy.endpoint, tenants: directory });
      await createDnsRecord(admin, ns, 'after-restart', { zoneName: zone, ...a('after') });
      await syncedMessage(ns, 'after-restart', (m) => m === closed);
      expect(findRecord(await listRecords(r53, zoneId), `www.${zone}`, 'A')).toBeUndefined();
      expect(findRecord(await listRecords(r53, zoneId), `new.${zone}`, 'A')).toBeUndefined();
      expect(findRecord(await listRecords(r53, zoneId), `after.${zone}`, 'A')).toBeUndefined();

      // Turned off deliberately: the marker deleted, then a restart: one team again.
      await controller.stop();
      await directory.stop();
      await admin.delete(resourcePath(configMapType, { namespace: marker.namespace, name: marker.name }));
      directory = await startTenants(admin, own);
      controller = await startDnsController({ namespace: ns, endpoint: proxy.endpoint, tenants: directory });
      await waitForCondition(admin, ns, 'after-restart', { type: 'Ready', status: 'True' });
      expect(findRecord(await listRecords(r53, zoneId), `after.${zone}`, 'A')).toBeDefined();
    } finally {
      await controller.stop();
      await directory.stop();
      await deleteTeamPolicies(admin, own);
    }
  });

  it('re-judges its objects when a policy is deleted and created again (same name, new rules) while the operator could not watch', async () => {
    const own = `${group}-recreated-${randomBytes(3).toString('hex')}`;
    const partition = await startTcpProxy(kubeConfig().cluster.server);
    const cutOff = new KubeClient({
      ...kubeConfig(),
      cluster: { ...kubeConfig().cluster, server: partition.url },
    });
    const directory = await startTenants(cutOff, own);
    const ns = await newNamespace(admin, 'tp-recreated');
    const zone = `${ns}.example.com`;
    await createZone(route53At(stackInfo().awsEndpoint), zone);
    const controller = await startDnsController({
      namespace: ns,
      endpoint: proxy.endpoint,
      tenants: directory,
    });
    const policy = `${own}-team`;
    try {
      await applyTeamPolicy(admin, own, policy, {
        namespaces: { names: [ns] },
        guardrails: { dnsRecords: { names: [`a.${zone}`] } },
      });
      await createDnsRecord(admin, ns, 'www', { zoneName: zone, ...a('www.a') });
      await waitForCondition(admin, ns, 'www', { type: 'Ready', status: 'True' });

      // The operator cannot reach the apiserver while the policy is deleted and created again
      // (generation 1 both times), now without the record's name.
      partition.cut();
      await deleteTeamPolicy(admin, policy);
      await waitFor(
        async () =>
          (await readTeamPolicy(admin, policy).catch(() => undefined)) === undefined ? true : undefined,
        {
          timeoutMs: 10_000,
          description: `${policy} gone`,
        },
      );
      await applyTeamPolicy(admin, own, policy, {
        namespaces: { names: [ns] },
        guardrails: { dnsRecords: { names: [`b.${zone}`] } },
      });
      partition.restore();
      const refused = await waitForCondition(
        admin,
        ns,
        'www',
        { type: 'Synced', status: 'False', reason: 'Forbidden' },
        20_000,
      );
      expect(refused.status?.conditions?.find((c) => c.type === 'Synced')?.message).toMatch(
        new RegExp(
          `^TeamPolicy ${policy} forbids spec.name: www.a.${ns}.example.com is not within the names`,
        ),
      );
    } finally {
      partition.restore();
      await controller.stop();
      await directory.stop();
      await deleteTeamPolicies(admin, own);
      await partition.stop();
    }
  });

  it('refuses a namespace it has not listed yet instead of judging it without its labels', async () => {
    const ns = await newNamespace(admin, 'tp-unlisted');
    // Every namespace not given to a team: a namespace whose labels are unknown would match.
    await applyTeamPolicy(admin, group, `${ns}-unassigned`, {
      namespaces: { selector: { matchExpressions: [{ key: 'skylift.dev/team', operator: 'DoesNotExist' }] } },
    });
    await waitFor(async () => ((await tenants.tenancyOf(ns)).kind === 'policy' ? true : undefined), {
      timeoutMs: 10_000,
      description: `${ns} served by ${ns}-unassigned`,
    });
    const unlisted = `${ns}-unlisted`;
    expect(await tenants.tenancyOf(unlisted)).toEqual({
      kind: 'refused',
      message: `namespace ${unlisted} is not known yet (not listed by the operator), so which TeamPolicy selects it cannot be told: it is served once it is`,
    });
  });
});

/** Waits until DNSRecord `ns/name`'s Synced=False message satisfies `ok`; returns the message. */
async function syncedMessage(ns: string, name: string, ok: (m: string) => boolean): Promise<string> {
  let last = '';
  return waitFor(
    async () => {
      const r = await readObject<DNSRecord>(admin, dnsRecordType, ns, name);
      const c = r?.status?.conditions?.find((x) => x.type === 'Synced');
      last = c?.message ?? '';
      return c?.status === 'False' && ok(last) ? last : undefined;
    },
    {
      timeoutMs: 20_000,
      description: `${ns}/${name} Synced=False with the expected message (last: ${last})`,
    },
  );
}

/** The ConfigMap `marker`, or undefined. */
function readConfigMap(
  marker: TeamsMarker,
): Promise<(KubeObject & { data?: Record<string, string> }) | undefined> {
  return readObject(admin, configMapType, marker.namespace, marker.name);
}
