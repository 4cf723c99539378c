// DNSRecord end to end inside the test process: the real apiserver, moto
// behind the fault-injecting proxy, the DNSRecord controller.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dnsRecordType, type DNSRecord } from '../../src/kinds/dnsrecord/api.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { finalizerName, requestAnnotation } from '../../src/apis/managed.ts';
import { route53Pending, type AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import {
  changeRecords,
  createDnsRecord,
  createZone,
  deleteZone,
  findRecord,
  listRecords,
  route53At,
  startDnsController,
  waitForCondition,
  type RunningDnsController,
} from '../support/dns.ts';
import { counterValue } from '../support/gadgetController.ts';
import { eventsFor, kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { ensureMyIngressCrd, putMyIngress } from '../support/myingressStub.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';

let admin: KubeClient;
let proxy: AwsFaultProxy;
const running: RunningDnsController[] = [];

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  proxy = await startFaultProxy();
});
afterAll(async () => {
  await proxy.stop();
});
afterEach(async () => {
  proxy.clearFaults();
  for (const r of running.splice(0)) await r.stop();
});

async function setup(
  prefix: string,
  opts: {
    resyncPeriod?: string;
    zoneCacheTtlMs?: number;
    resyncListingMaxAgeMs?: number;
    batchWindowMs?: number;
    awsTimeoutMs?: number;
  } = {},
) {
  const ns = await newNamespace(admin, prefix);
  const r53 = route53At(stackInfo().awsEndpoint);
  const zone = `${ns}.example.com`;
  const zoneId = await createZone(r53, zone);
  const start = async (): Promise<RunningDnsController> => {
    const op = await startDnsController({
      namespace: ns,
      endpoint: proxy.endpoint,
      ...(opts.resyncPeriod !== undefined ? { resyncPeriod: opts.resyncPeriod } : {}),
      ...(opts.awsTimeoutMs !== undefined ? { awsTimeoutMs: opts.awsTimeoutMs } : {}),
      settings: {
        ...(opts.zoneCacheTtlMs !== undefined ? { zoneCacheTtlMs: opts.zoneCacheTtlMs } : {}),
        ...(opts.resyncListingMaxAgeMs !== undefined
          ? { resyncListingMaxAgeMs: opts.resyncListingMaxAgeMs }
          : {}),
        ...(opts.batchWindowMs !== undefined ? { batchWindowMs: opts.batchWindowMs } : {}),
      },
    });
    running.push(op);
    return op;
  };
  return { ns, r53, zone, zoneId, start };
}

const ready = { type: 'Ready', status: 'True' } as const;

describe('DNSRecord', () => {
  // Issue 14, item 3: the zone's own NS and Skylift's ownership TXT records could be adopted and rewritten.
  it('refuses the zone apex NS/SOA and ownership TXT records, adopted or created, and changes neither', async () => {
    const { ns, r53, zone, zoneId, start } = await setup('dns-guard');
    await start();
    const apexNs = findRecord(await listRecords(r53, zoneId), zone, 'NS');
    expect(apexNs).toBeDefined();
    await createDnsRecord(admin, ns, 'apex-ns', {
      zoneName: zone,
      name: '@',
      type: 'NS',
      ttl: 60,
      records: ['ns.attacker.example.'],
      externalName: `${zone}./NS`,
    });
    const apex = await waitForCondition(admin, ns, 'apex-ns', {
      type: 'Synced',
      status: 'False',
      reason: 'Terminal',
    });
    expect(apex.status?.conditions?.find((c) => c.type === 'Synced')?.message).toContain("the zone's own NS");
    await createDnsRecord(admin, ns, 'forged', {
      zoneName: zone,
      name: '_skylift-owner.a.www',
      type: 'TXT',
      records: ['"heritage=skylift,owner=evil/evil,uid=x"'],
    });
    const forged = await waitForCondition(admin, ns, 'forged', {
      type: 'Synced',
      status: 'False',
      reason: 'Terminal',
    });
    expect(forged.status?.conditions?.find((c) => c.type === 'Synced')?.message).toContain(
      'ownership record',
    );
    const after = await listRecords(r53, zoneId);
    expect(findRecord(after, zone, 'NS')).toEqual(apexNs);
    expect(after.filter((r) => r.Name?.startsWith('_skylift-owner.a.www'))).toEqual([]);
  });

  it('creates a record with its ownership TXT, follows spec changes, and deletes both', async () => {
    const { ns, r53, zone, zoneId, start } = await setup('dns-life');
    await start();
    await createDnsRecord(admin, ns, 'www', {
      zoneName: zone,
      name: 'www',
      type: 'A',
      ttl: 60,
      records: ['192.0.2.10'],
    });
    const r = await waitForCondition(admin, ns, 'www', ready);
    expect(r.status).toMatchObject({ fqdn: `www.${zone}.`, zoneId, changeStatus: 'INSYNC' });
    expect(r.metadata.finalizers).toContain(finalizerName);

    let records = await listRecords(r53, zoneId);
    expect(findRecord(records, `www.${zone}`, 'A')?.ResourceRecords).toEqual([{ Value: '192.0.2.10' }]);
    const owner = findRecord(records, `_skylift-owner.a.www.${zone}`, 'TXT');
    expect(owner?.ResourceRecords?.[0]?.Value).toContain(`skylift/owner=${ns}/www`);
    expect(owner?.ResourceRecords?.[0]?.Value).toContain(`skylift/uid=${r.metadata.uid ?? ''}`);

    await admin.patch(
      resourcePath(dnsRecordType, { namespace: ns, name: 'www' }),
      { spec: { ttl: 120, records: ['192.0.2.11', '192.0.2.12'] } },
      'merge',
    );
    await waitFor(
      async () => {
        const rr = findRecord(await listRecords(r53, zoneId), `www.${zone}`, 'A');
        return rr?.TTL === 120 && rr.ResourceRecords?.length === 2 ? true : undefined;
      },
      { timeoutMs: 30_000, description: 'updated record in Route 53' },
    );
    await waitFor(
      async () =>
        (await readObject<DNSRecord>(admin, dnsRecordType, ns, 'www'))?.status?.observedGeneration === 2
          ? true
          : undefined,
      {
        timeoutMs: 30_000,
        description: 'generation 2 observed',
      },
    );

    await admin.delete(resourcePath(dnsRecordType, { namespace: ns, name: 'www' }));
    await waitFor(
      async () => ((await readObject(admin, dnsRecordType, ns, 'www')) === undefined ? true : undefined),
      { timeoutMs: 30_000, description: 'www deleted' },
    );
    records = await listRecords(r53, zoneId);
    expect(findRecord(records, `www.${zone}`, 'A')).toBeUndefined();
    expect(findRecord(records, `_skylift-owner.a.www.${zone}`, 'TXT')).toBeUndefined();
  });

  it('converges 200 records in one zone with a handful of change calls', async () => {
    // All objects exist before the operator starts (as after a restart or a GitOps sync), and a 3 s
    // window, so the number of calls measures batching rather than how fast the test creates objects.
    const { ns, r53, zone, zoneId, start } = await setup('dns-bulk', { batchWindowMs: 3000 });
    proxy.resetCalls();
    const n = Number(process.env.SKYLIFT_DNS_SCALE ?? 200);
    const names = Array.from({ length: n }, (_, i) => `host-${i}`);
    for (let i = 0; i < names.length; i += 50) {
      await Promise.all(
        names.slice(i, i + 50).map((name, j) =>
          createDnsRecord(admin, ns, name, {
            zoneName: zone,
            name,
            type: 'A',
            records: [`10.0.${Math.floor((i + j) / 250)}.${((i + j) % 250) + 1}`],
          }),
        ),
      );
    }
    await start();
    await waitFor(
      async () => {
        const list = await admin.get<{ items: DNSRecord[] }>(resourcePath(dnsRecordType, { namespace: ns }));
        const done = list.items.filter((r) =>
          r.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
        ).length;
        return done === n ? true : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500, description: `${n} records Ready` },
    );
    const records = await listRecords(r53, zoneId);
    expect(records.filter((r) => r.Type === 'A')).toHaveLength(n);
    expect(records.filter((r) => r.Type === 'TXT' && r.Name?.startsWith('_skylift-owner.'))).toHaveLength(n);
    const counts = proxy.countsByOperation();
    process.stdout.write(`[dns-bulk] ${n} records: ${JSON.stringify(counts)}\n`);
    // Batches are bounded by how fast objects arrive (one call per window at most), not by their number.
    expect(counts['route53:ChangeResourceRecordSets'] ?? 0).toBeLessThanOrEqual(
      Math.max(6, Math.ceil(n / 40)),
    );
    // One paginated listing of the zone (300 record sets a page), not one call per record.
    expect(counts['route53:ListResourceRecordSets'] ?? 0).toBeLessThanOrEqual(
      Math.ceil((2 * n + 2) / 300) + 2,
    );
  });

  it('writes each new record twice (finalizer with marker, then its outcome) and nothing on no-op resyncs', async () => {
    const { ns, zone, start } = await setup('dns-writes', { resyncPeriod: '1s' });
    const op = await start();
    const n = 30;
    const writes = async (): Promise<Record<string, number>> => {
      const out: Record<string, number> = {};
      for (const v of (await op.metrics.kubeRequests.get()).values)
        if (v.labels.verb !== 'GET') out[String(v.labels.verb)] = (out[String(v.labels.verb)] ?? 0) + v.value;
      return out;
    };
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        createDnsRecord(admin, ns, `w-${i}`, {
          zoneName: zone,
          name: `w-${i}`,
          type: 'A',
          records: [`10.9.0.${i + 1}`],
        }),
      ),
    );
    for (let i = 0; i < n; i++) await waitForCondition(admin, ns, `w-${i}`, ready);
    const created = await writes();
    process.stdout.write(`[dns-writes] ${n} new records: ${JSON.stringify(created)}\n`);
    // The records themselves are patched (finalizer and marker; status); Events are created (POST).
    expect(created.PATCH ?? 0).toBeLessThanOrEqual(2 * n);
    expect(created.PUT ?? 0).toBe(0);
    expect(created.DELETE ?? 0).toBe(0);
    expect(created.POST ?? 0).toBeLessThanOrEqual(n);

    const before = await counterValue(op.metrics.reconcileTotal, { controller: 'dnsrecord' });
    await waitFor(
      async () =>
        (await counterValue(op.metrics.reconcileTotal, { controller: 'dnsrecord' })) >= before + 2 * n
          ? true
          : undefined,
      { timeoutMs: 30_000, description: 'two resyncs of every record' },
    );
    expect(await writes()).toEqual(created);
  });

  // Issue 28: the records of a zone resync spread over the resync jitter, and each look found the
  // listing older than the cache's age and listed the zone again; settled records now share one
  // listing per wave (DNSRecordSettings.resyncListingMaxAgeMs, by default a fifth of the period).
  it('lists a zone once for a whole resync wave, not once per cache age', async () => {
    const { ns, zone, start } = await setup('dns-wave', {
      resyncPeriod: '1s',
      zoneCacheTtlMs: 100,
      resyncListingMaxAgeMs: 60_000,
    });
    const op = await start();
    const n = 20;
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        createDnsRecord(admin, ns, `v-${i}`, {
          zoneName: zone,
          name: `v-${i}`,
          type: 'A',
          records: ['192.0.2.9'],
        }),
      ),
    );
    for (let i = 0; i < n; i++) await waitForCondition(admin, ns, `v-${i}`, ready);
    proxy.resetCalls();
    const before = await counterValue(op.metrics.reconcileTotal, { controller: 'dnsrecord' });
    await waitFor(
      async () =>
        (await counterValue(op.metrics.reconcileTotal, { controller: 'dnsrecord' })) >= before + 3 * n
          ? true
          : undefined,
      { timeoutMs: 30_000, description: 'three resyncs of every record' },
    );
    expect(proxy.count({ service: 'route53', operation: 'ListResourceRecordSets' })).toBeLessThanOrEqual(1);
    expect(proxy.count({ service: 'route53', operation: 'ChangeResourceRecordSets' })).toBe(0);
  });

  // Issue 27, item 14: adopting or observing a record made moments earlier was judged on the
  // cached zone listing (up to 30 s old): Terminal "does not exist … delete and create again" for
  // an adoption, NotFound for ObserveOnly, about a record that was there.
  it('adopts and observes a record made since the zone was last listed, not calling it missing', async () => {
    const { ns, r53, zone, zoneId, start } = await setup('dns-fresh');
    await start();
    // The operator lists the zone (and caches the listing) for a record of its own.
    await createDnsRecord(admin, ns, 'first', {
      zoneName: zone,
      name: 'first',
      type: 'A',
      records: ['192.0.2.60'],
    });
    await waitForCondition(admin, ns, 'first', ready);
    const made = (name: string) => ({
      Action: 'CREATE' as const,
      ResourceRecordSet: {
        Name: `${name}.${zone}.`,
        Type: 'A' as const,
        TTL: 300,
        ResourceRecords: [{ Value: '192.0.2.61' }],
      },
    });
    await changeRecords(r53, zoneId, [made('outside'), made('watched')]);
    await createDnsRecord(admin, ns, 'adopt-now', {
      zoneName: zone,
      name: 'outside',
      type: 'A',
      records: ['192.0.2.62'],
      externalName: `outside.${zone}/A`,
    });
    await createDnsRecord(admin, ns, 'observe-now', {
      zoneName: zone,
      name: 'watched',
      type: 'A',
      records: ['192.0.2.61'],
      managementPolicy: 'ObserveOnly',
    });
    const adopted = await waitForCondition(admin, ns, 'adopt-now', ready);
    expect(adopted.status?.conditions?.find((c) => c.type === 'Synced')?.status).toBe('True');
    await waitForCondition(admin, ns, 'observe-now', ready);
    expect(findRecord(await listRecords(r53, zoneId), `outside.${zone}`, 'A')?.ResourceRecords).toEqual([
      { Value: '192.0.2.62' },
    ]);
  });

  it('refuses a record owned by no one (Conflict) and adopts it through externalName', async () => {
    const { ns, r53, zone, zoneId, start } = await setup('dns-owner');
    await start();
    await changeRecords(r53, zoneId, [
      {
        Action: 'CREATE',
        ResourceRecordSet: {
          Name: `legacy.${zone}.`,
          Type: 'CNAME',
          TTL: 300,
          ResourceRecords: [{ Value: 'old.example.net' }],
        },
      },
    ]);
    await createDnsRecord(admin, ns, 'grab', {
      zoneName: zone,
      name: 'legacy',
      type: 'CNAME',
      records: ['new.example.net'],
    });
    const conflicted = await waitForCondition(admin, ns, 'grab', {
      type: 'Synced',
      status: 'False',
      reason: 'Conflict',
    });
    expect(conflicted.status?.conditions?.find((c) => c.type === 'Synced')?.message).toContain(
      'set spec.externalName to adopt it',
    );
    expect(findRecord(await listRecords(r53, zoneId), `legacy.${zone}`, 'CNAME')?.ResourceRecords).toEqual([
      { Value: 'old.example.net' },
    ]);

    await admin.delete(resourcePath(dnsRecordType, { namespace: ns, name: 'grab' }));
    await waitFor(
      async () => ((await readObject(admin, dnsRecordType, ns, 'grab')) === undefined ? true : undefined),
      { timeoutMs: 30_000, description: 'grab gone' },
    );
    expect(findRecord(await listRecords(r53, zoneId), `legacy.${zone}`, 'CNAME')).toBeDefined();

    await createDnsRecord(admin, ns, 'adopt', {
      zoneName: zone,
      name: 'legacy',
      type: 'CNAME',
      records: ['new.example.net'],
      externalName: `legacy.${zone}/CNAME`,
    });
    const adopted = await waitForCondition(admin, ns, 'adopt', ready);
    const records = await listRecords(r53, zoneId);
    expect(findRecord(records, `legacy.${zone}`, 'CNAME')?.ResourceRecords).toEqual([
      { Value: 'new.example.net' },
    ]);
    expect(
      findRecord(records, `_skylift-owner.cname.legacy.${zone}`, 'TXT')?.ResourceRecords?.[0]?.Value,
    ).toContain(adopted.metadata.uid ?? '');

    // A second object claiming the now-owned record gets a Conflict naming the owner.
    await createDnsRecord(admin, ns, 'thief', {
      zoneName: zone,
      name: 'legacy',
      type: 'CNAME',
      records: ['evil.example.net'],
      externalName: `legacy.${zone}/CNAME`,
    });
    const thief = await waitForCondition(admin, ns, 'thief', {
      type: 'Synced',
      status: 'False',
      reason: 'Conflict',
    });
    expect(thief.status?.conditions?.find((c) => c.type === 'Synced')?.message).toContain(`${ns}/adopt`);
    expect(findRecord(await listRecords(r53, zoneId), `legacy.${zone}`, 'CNAME')?.ResourceRecords).toEqual([
      { Value: 'new.example.net' },
    ]);
  });

  it('leaves a hand-made record alone on delete when its adoption was refused before the ownership record was written', async () => {
    const { ns, r53, zone, zoneId, start } = await setup('dns-halfadopt');
    await start();
    const handMade = [{ Value: '192.0.2.70' }];
    await changeRecords(r53, zoneId, [
      {
        Action: 'CREATE',
        ResourceRecordSet: { Name: `legacy.${zone}.`, Type: 'A', TTL: 300, ResourceRecords: handMade },
      },
    ]);
    // Route 53 refuses the adoption's UPSERT (record and ownership TXT in one batch), not a DELETE.
    proxy.inject({
      service: 'route53',
      operation: 'ChangeResourceRecordSets',
      match: (call) => call.body.includes(`legacy.${zone}`) && call.body.includes('UPSERT'),
      fault: { kind: 'throttle', code: 'InvalidChangeBatch', status: 400 },
    });
    await createDnsRecord(admin, ns, 'adopt', {
      zoneName: zone,
      name: 'legacy',
      type: 'A',
      records: ['192.0.2.71'],
      externalName: `legacy.${zone}/A`,
    });
    const refused = await waitForCondition(admin, ns, 'adopt', {
      type: 'Synced',
      status: 'False',
      reason: 'Terminal',
    });
    expect(refused.metadata.finalizers).toContain(finalizerName);
    const txt = (await listRecords(r53, zoneId)).filter((r) => r.Type === 'TXT');
    expect(txt.map((r) => r.Name).filter((n) => n?.startsWith('_skylift-owner'))).toEqual([]);

    await admin.delete(resourcePath(dnsRecordType, { namespace: ns, name: 'adopt' }));
    await waitFor(
      async () => ((await readObject(admin, dnsRecordType, ns, 'adopt')) === undefined ? true : undefined),
      { timeoutMs: 30_000, description: 'adopt released' },
    );
    expect(findRecord(await listRecords(r53, zoneId), `legacy.${zone}`, 'A')?.ResourceRecords).toEqual(
      handMade,
    );
  });

  it('repairs drift found by the per-zone listing, and counts it', async () => {
    const { ns, r53, zone, zoneId, start } = await setup('dns-drift', {
      resyncPeriod: '1s',
      zoneCacheTtlMs: 500,
    });
    const op = await start();
    await createDnsRecord(admin, ns, 'api', {
      zoneName: zone,
      name: 'api',
      type: 'A',
      ttl: 60,
      records: ['192.0.2.20'],
    });
    await waitForCondition(admin, ns, 'api', ready);
    await changeRecords(r53, zoneId, [
      {
        Action: 'UPSERT',
        ResourceRecordSet: {
          Name: `api.${zone}.`,
          Type: 'A',
          TTL: 60,
          ResourceRecords: [{ Value: '203.0.113.66' }],
        },
      },
    ]);
    await waitFor(
      async () =>
        findRecord(await listRecords(r53, zoneId), `api.${zone}`, 'A')?.ResourceRecords?.[0]?.Value ===
        '192.0.2.20'
          ? true
          : undefined,
      { timeoutMs: 30_000, description: 'changed record put back' },
    );
    expect(await counterValue(op.metrics.driftCorrections, { kind: 'DNSRecord' })).toBeGreaterThanOrEqual(1);
    await waitForCondition(admin, ns, 'api', ready);

    const rr = findRecord(await listRecords(r53, zoneId), `api.${zone}`, 'A');
    if (rr === undefined) throw new Error('record missing');
    await changeRecords(r53, zoneId, [{ Action: 'DELETE', ResourceRecordSet: rr }]);
    await waitFor(
      async () =>
        findRecord(await listRecords(r53, zoneId), `api.${zone}`, 'A') !== undefined ? true : undefined,
      {
        timeoutMs: 30_000,
        description: 'deleted record recreated',
      },
    );
    expect(await counterValue(op.metrics.driftCorrections, { kind: 'DNSRecord' })).toBeGreaterThanOrEqual(2);
  });

  it('survives a throttling storm with nothing lost and no terminal condition', async () => {
    const { ns, r53, zone, zoneId, start } = await setup('dns-storm');
    await start();
    // The first calls are always throttled (so the storm cannot miss a run with few calls), then 30 %.
    proxy.inject({ service: 'route53', fault: { kind: 'throttle', code: 'Throttling' }, times: 3 });
    proxy.inject({ service: 'route53', fault: { kind: 'throttle', code: 'Throttling' }, probability: 0.3 });
    proxy.inject({
      service: 'route53',
      operation: 'ChangeResourceRecordSets',
      fault: { kind: 'throttle', code: 'PriorRequestNotComplete' },
      probability: 0.2,
    });
    const n = 40;
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        createDnsRecord(admin, ns, `s${i}`, {
          zoneName: zone,
          name: `s${i}`,
          type: 'TXT',
          records: [`storm ${i}`],
        }),
      ),
    );
    await waitFor(
      async () => {
        const list = await admin.get<{ items: DNSRecord[] }>(resourcePath(dnsRecordType, { namespace: ns }));
        for (const r of list.items) {
          const synced = r.status?.conditions?.find((c) => c.type === 'Synced');
          if (synced?.reason === 'Terminal')
            throw new Error(`${r.metadata.name} went Terminal: ${synced.message}`);
        }
        return list.items.filter((r) =>
          r.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
        ).length === n
          ? true
          : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500, description: 'all records Ready through the storm' },
    );
    expect(proxy.count({ service: 'route53', outcome: 'throttle' })).toBeGreaterThan(0);
    const txt = (await listRecords(r53, zoneId)).filter((r) => r.Type === 'TXT' && r.Name?.startsWith('s'));
    expect(txt).toHaveLength(n);
  });

  it('fails only the record Route 53 rejects when a batch is refused', async () => {
    const { ns, r53, zone, zoneId, start } = await setup('dns-poison');
    await start();
    proxy.inject({
      service: 'route53',
      operation: 'ChangeResourceRecordSets',
      match: (call) => call.body.includes('toxic.'),
      fault: { kind: 'throttle', code: 'InvalidChangeBatch', status: 400 },
    });
    await Promise.all([
      ...Array.from({ length: 5 }, (_, i) =>
        createDnsRecord(admin, ns, `ok${i}`, {
          zoneName: zone,
          name: `ok${i}`,
          type: 'A',
          records: ['192.0.2.1'],
        }),
      ),
      createDnsRecord(admin, ns, 'toxic', {
        zoneName: zone,
        name: 'toxic',
        type: 'A',
        records: ['192.0.2.2'],
      }),
    ]);
    for (let i = 0; i < 5; i++) await waitForCondition(admin, ns, `ok${i}`, ready);
    const bad = await waitForCondition(admin, ns, 'toxic', {
      type: 'Synced',
      status: 'False',
      reason: 'Terminal',
    });
    expect(bad.status?.conditions?.find((c) => c.type === 'Synced')?.message).toContain(
      'Route 53 rejected the change',
    );
    expect(findRecord(await listRecords(r53, zoneId), `toxic.${zone}`, 'A')).toBeUndefined();
  });

  // Issue 14, item 9: a change batch Route 53 does not answer showed Synced=True beside "Route 53 failed".
  it('reports a change batch that fails as Synced=False (AWSUnreachable), not as progress, then recovers', async () => {
    const { ns, r53, zone, zoneId, start } = await setup('dns-unanswered');
    await start();
    proxy.inject({
      service: 'route53',
      operation: 'ChangeResourceRecordSets',
      fault: { kind: 'drop' },
    });
    await createDnsRecord(admin, ns, 'lost', {
      zoneName: zone,
      name: 'lost',
      type: 'A',
      records: ['192.0.2.9'],
    });
    const failing = await waitForCondition(admin, ns, 'lost', {
      type: 'Synced',
      status: 'False',
      reason: 'AWSUnreachable',
    });
    const conditions = failing.status?.conditions ?? [];
    expect(conditions.find((c) => c.type === 'Synced')?.message).toContain('Route 53 failed');
    expect(conditions.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'AWSUnreachable',
    });
    proxy.clearFaults();
    const done = await waitForCondition(admin, ns, 'lost', ready, 90_000);
    expect(done.status?.conditions?.find((c) => c.type === 'Synced')).toMatchObject({ status: 'True' });
    expect(findRecord(await listRecords(r53, zoneId), `lost.${zone}`, 'A')).toBeDefined();
  });

  // Issue 27, item 16: Route 53 throttling the deletion's change batch showed Synced=True (Deleting).
  it('shows Route 53 throttling a deletion as Synced=False Throttled, then deletes the record', async () => {
    const { ns, r53, zone, zoneId, start } = await setup('dns-throttled-delete');
    await start();
    await createDnsRecord(admin, ns, 'gone', {
      zoneName: zone,
      name: 'gone',
      type: 'A',
      records: ['192.0.2.12'],
    });
    await waitForCondition(admin, ns, 'gone', ready);
    const throttle = proxy.inject({
      service: 'route53',
      operation: 'ChangeResourceRecordSets',
      fault: { kind: 'throttle', code: 'Throttling' },
    });
    await admin.delete(resourcePath(dnsRecordType, { namespace: ns, name: 'gone' }));
    const throttled = await waitForCondition(admin, ns, 'gone', {
      type: 'Synced',
      status: 'False',
      reason: 'Throttled',
    });
    expect(throttled.status?.conditions?.find((c) => c.type === 'Synced')?.message).toContain(
      'Route 53 is throttling',
    );
    expect(throttled.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'Throttled',
    });
    expect(throttle.hits).toBeGreaterThan(0);
    throttle.remove();
    await waitFor(
      async () => ((await readObject(admin, dnsRecordType, ns, 'gone')) === undefined ? true : undefined),
      { timeoutMs: 60_000, description: 'gone deleted once Route 53 takes the change' },
    );
    expect(findRecord(await listRecords(r53, zoneId), `gone.${zone}`, 'A')).toBeUndefined();
  });

  // Issue 27, item 17: an AWS outage while a record was first created stalled the connect step (STS
  // GetCallerIdentity, the account of status.location) and the object showed ReconcileError.
  it('shows AWS not answering at the connect step as Synced=False AWSUnreachable, then recovers', async () => {
    const ns = await newNamespace(admin, 'dns-connect');
    const r53 = route53At(stackInfo().awsEndpoint);
    const zone = `${ns}.example.com`;
    const zoneId = await createZone(r53, zone);
    const silent = proxy.inject({ service: 'sts', fault: { kind: 'hang' } });
    running.push(
      await startDnsController({ namespace: ns, endpoint: proxy.endpoint, awsTimeoutMs: 500, accounts: {} }),
    );
    await createDnsRecord(admin, ns, 'first', {
      zoneName: zone,
      name: 'first',
      type: 'A',
      records: ['192.0.2.11'],
    });
    const stuck = await waitForCondition(admin, ns, 'first', {
      type: 'Synced',
      status: 'False',
      reason: 'AWSUnreachable',
    });
    const message = stuck.status?.conditions?.find((c) => c.type === 'Synced')?.message ?? '';
    expect(message).toMatch(/^connect: /);
    expect(message).toContain('the AWS endpoint did not answer');
    expect(silent.hits).toBeGreaterThan(0);
    silent.remove();
    await waitForCondition(admin, ns, 'first', ready, 90_000);
    expect(findRecord(await listRecords(r53, zoneId), `first.${zone}`, 'A')).toBeDefined();
  });

  // Issue 14, item 6: with Route 53 not answering at all (the emulator stopped), a new object got no
  // status: the SDK clients had no request timeout, so the first call never returned.
  it('shows an AWS endpoint that never answers as Synced=False AWSUnreachable, then recovers', async () => {
    const { ns, r53, zone, zoneId, start } = await setup('dns-silent', { awsTimeoutMs: 500 });
    await start();
    proxy.inject({ service: 'route53', fault: { kind: 'latency', ms: 600_000 } });
    await createDnsRecord(admin, ns, 'silent', {
      zoneName: zone,
      name: 'silent',
      type: 'A',
      records: ['192.0.2.10'],
    });
    const stuck = await waitForCondition(admin, ns, 'silent', {
      type: 'Synced',
      status: 'False',
      reason: 'AWSUnreachable',
    });
    expect(stuck.status?.conditions?.find((c) => c.type === 'Synced')?.message).toContain(
      'the AWS endpoint did not answer',
    );
    expect(stuck.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False' });
    proxy.clearFaults();
    await waitForCondition(admin, ns, 'silent', ready, 90_000);
    expect(findRecord(await listRecords(r53, zoneId), `silent.${zone}`, 'A')).toBeDefined();
  });

  it('is Ready only once Route 53 reports the change INSYNC', async () => {
    const { ns, zone, start } = await setup('dns-sync');
    await start();
    // Pending for longer than a new record's first-status hold (5 s), so the progress is written.
    proxy.inject(route53Pending(5));
    await createDnsRecord(admin, ns, 'slow', {
      zoneName: zone,
      name: 'slow',
      type: 'A',
      records: ['192.0.2.30'],
    });
    const propagating = await waitForCondition(admin, ns, 'slow', {
      type: 'Ready',
      status: 'False',
      reason: 'Propagating',
    });
    expect(propagating.status?.changeStatus).toBe('PENDING');
    const done = await waitForCondition(admin, ns, 'slow', ready);
    expect(done.status?.changeStatus).toBe('INSYNC');
    expect(proxy.count({ service: 'route53', operation: 'GetChange' })).toBeGreaterThanOrEqual(2);
  });

  it('ObserveOnly reports an existing record; Orphan leaves the record behind', async () => {
    const { ns, r53, zone, zoneId, start } = await setup('dns-policy');
    await start();
    await changeRecords(r53, zoneId, [
      {
        Action: 'CREATE',
        ResourceRecordSet: {
          Name: `seen.${zone}.`,
          Type: 'A',
          TTL: 300,
          ResourceRecords: [{ Value: '192.0.2.40' }],
        },
      },
    ]);
    await createDnsRecord(admin, ns, 'seen', {
      zoneName: zone,
      name: 'seen',
      type: 'A',
      records: ['192.0.2.99'],
      managementPolicy: 'ObserveOnly',
    });
    const seen = await waitForCondition(admin, ns, 'seen', ready);
    expect(seen.metadata.finalizers ?? []).not.toContain(finalizerName);
    expect(findRecord(await listRecords(r53, zoneId), `seen.${zone}`, 'A')?.ResourceRecords).toEqual([
      { Value: '192.0.2.40' },
    ]);

    await createDnsRecord(admin, ns, 'kept', {
      zoneName: zone,
      name: 'kept',
      type: 'A',
      records: ['192.0.2.41'],
      deletionPolicy: 'Orphan',
    });
    await waitForCondition(admin, ns, 'kept', ready);
    await admin.delete(resourcePath(dnsRecordType, { namespace: ns, name: 'kept' }));
    await waitFor(
      async () => ((await readObject(admin, dnsRecordType, ns, 'kept')) === undefined ? true : undefined),
      { timeoutMs: 30_000, description: 'kept deleted' },
    );
    expect(findRecord(await listRecords(r53, zoneId), `kept.${zone}`, 'A')).toBeDefined();
  });

  it('reports a zone that does not exist as a terminal error, and follows once the zone is created', async () => {
    const { ns, r53, start } = await setup('dns-nozone', { resyncPeriod: '1s', zoneCacheTtlMs: 500 });
    await start();
    await createDnsRecord(admin, ns, 'lost', {
      zoneName: 'no-such-zone.example',
      name: 'www',
      type: 'A',
      records: ['192.0.2.1'],
    });
    const r = await waitForCondition(admin, ns, 'lost', {
      type: 'Synced',
      status: 'False',
      reason: 'Terminal',
    });
    expect(r.status?.conditions?.find((c) => c.type === 'Synced')?.message).toContain(
      'spec.zoneName no-such-zone.example.: no hosted zone of that name in this account: create it',
    );
    // The message's advice: create the zone; Skylift looks again at the resync period.
    const zoneId = await createZone(r53, 'no-such-zone.example');
    await waitForCondition(admin, ns, 'lost', ready, 30_000);
    expect(findRecord(await listRecords(r53, zoneId), 'www.no-such-zone.example.', 'A')).toBeDefined();
    // Leave the shared emulator without this fixed-name zone: the record goes first, then the zone.
    await admin.delete(resourcePath(dnsRecordType, { namespace: ns, name: 'lost' }));
    await waitFor(
      async () => ((await readObject(admin, dnsRecordType, ns, 'lost')) === undefined ? true : undefined),
      { timeoutMs: 30_000, description: 'the DNSRecord gone' },
    );
    await deleteZone(r53, zoneId);
  });
});

// Issue 27, item 18: a request annotation the kind does not know was silently ignored.
describe('DNSRecord with a request annotation', () => {
  it('says it accepts no requests, naming the annotation, and keeps its record in sync', async () => {
    const { ns, r53, zone, zoneId, start } = await setup('dns-request');
    await start();
    await createDnsRecord(admin, ns, 'www', {
      zoneName: zone,
      name: 'www',
      type: 'A',
      records: ['192.0.2.14'],
    });
    await waitForCondition(admin, ns, 'www', ready);
    const path = resourcePath(dnsRecordType, { namespace: ns, name: 'www' });
    await admin.patch(path, { metadata: { annotations: { [requestAnnotation]: 'snapshot now' } } }, 'merge');
    const refused = await waitForCondition(admin, ns, 'www', {
      type: 'Synced',
      status: 'False',
      reason: 'Terminal',
    });
    const message = refused.status?.conditions?.find((c) => c.type === 'Synced')?.message ?? '';
    expect(message).toContain(`${requestAnnotation} is "snapshot now"`);
    expect(message).toContain('DNSRecord accepts no requests');
    // The record itself is fine, and a spec change still reaches Route 53.
    expect(refused.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    await admin.patch(path, { spec: { records: ['192.0.2.15'] } }, 'merge');
    await waitFor(
      async () =>
        findRecord(await listRecords(r53, zoneId), `www.${zone}`, 'A')?.ResourceRecords?.[0]?.Value ===
        '192.0.2.15'
          ? true
          : undefined,
      { timeoutMs: 30_000, description: 'the changed record in Route 53' },
    );
    await waitFor(
      async () => {
        const events = await eventsFor(admin, ns, 'www');
        return events.some((e) => e.type === 'Warning' && e.note.includes(requestAnnotation))
          ? true
          : undefined;
      },
      { timeoutMs: 15_000, description: 'a Warning Event naming the annotation' },
    );
    await admin.patch(path, { metadata: { annotations: { [requestAnnotation]: null } } }, 'merge');
    await waitForCondition(admin, ns, 'www', { type: 'Synced', status: 'True' });
  });
});

// Issue 27, item 18: two objects of one namespace asking for one record at once: the second was
// told only that "another object" was writing it.
describe('DNSRecord asking for a record another object is writing', () => {
  it('is a Conflict naming that object when it is in the same namespace', async () => {
    const { ns, zone, start } = await setup('dns-duplicate', { batchWindowMs: 1500 });
    await start();
    const spec = { zoneName: zone, name: 'dup', type: 'A' as const, records: ['192.0.2.13'] };
    const [one, two] = await Promise.all([
      createDnsRecord(admin, ns, 'one', spec),
      createDnsRecord(admin, ns, 'two', spec),
    ]);
    const conflicted = await waitFor(
      async () => {
        for (const name of ['one', 'two']) {
          const r = await readObject<DNSRecord>(admin, dnsRecordType, ns, name);
          const synced = r?.status?.conditions?.find((c) => c.type === 'Synced');
          if (synced?.reason === 'Conflict') return { name, message: synced.message };
        }
        return undefined;
      },
      { timeoutMs: 30_000, description: 'one of the two to be a Conflict' },
    );
    const other = conflicted.name === 'one' ? two : one;
    expect(conflicted.message).toContain(`${ns}/${other.metadata.name} (uid ${other.metadata.uid ?? ''})`);
    expect(conflicted.message).toContain(`dup.${zone}`);
    await waitForCondition(admin, ns, other.metadata.name, ready);
  });
});

describe('DNSRecord aliases to a MyIngress', () => {
  it('waits for the MyIngress to report its load balancer, then follows it', async () => {
    await ensureMyIngressCrd(admin);
    const { ns, r53, zone, zoneId, start } = await setup('dns-alias');
    await start();
    await createDnsRecord(admin, ns, 'shop', {
      zoneName: zone,
      name: 'shop',
      type: 'A',
      aliasTarget: { myIngressRef: { name: 'web' } },
    });
    const waiting = await waitForCondition(admin, ns, 'shop', {
      type: 'Ready',
      status: 'False',
      reason: 'WaitingForReference',
    });
    expect(waiting.status?.conditions?.find((c) => c.type === 'Ready')?.message).toContain('MyIngress web');

    await putMyIngress(admin, ns, 'web');
    await putMyIngress(admin, ns, 'web', {
      dnsName: 'web-lb-1.us-east-1.elb.amazonaws.com',
      canonicalHostedZoneId: 'Z35SXDOTRQ7X7K',
    });
    const first = await waitForCondition(admin, ns, 'shop', ready);
    expect(first.status?.aliasDNSName).toBe('web-lb-1.us-east-1.elb.amazonaws.com');
    expect(findRecord(await listRecords(r53, zoneId), `shop.${zone}`, 'A')?.AliasTarget).toMatchObject({
      HostedZoneId: 'Z35SXDOTRQ7X7K',
    });

    // The load balancer is replaced: the record follows without any change to the DNSRecord.
    await putMyIngress(admin, ns, 'web', {
      dnsName: 'web-lb-2.us-east-1.elb.amazonaws.com',
      canonicalHostedZoneId: 'Z35SXDOTRQ7X7K',
    });
    await waitFor(
      async () => {
        const alias =
          findRecord(await listRecords(r53, zoneId), `shop.${zone}`, 'A')?.AliasTarget?.DNSName ?? '';
        return alias.toLowerCase().startsWith('web-lb-2') ? true : undefined;
      },
      { timeoutMs: 30_000, description: 'alias following the new load balancer' },
    );
  });
});

describe('DNSRecord after a deleted record', () => {
  it('recreates a name whose previous record (an alias) was deleted, even where the emulator keeps a ghost', async () => {
    const { ns, r53, zone, zoneId, start } = await setup('dns-ghost');
    await start();
    const alias = {
      zoneName: zone,
      name: '@',
      type: 'A' as const,
      aliasTarget: { dnsName: 'lb-1.us-east-1.elb.amazonaws.com', hostedZoneId: 'Z35SXDOTRQ7X7K' },
    };
    await createDnsRecord(admin, ns, 'first', alias);
    await waitForCondition(admin, ns, 'first', ready);
    await admin.delete(resourcePath(dnsRecordType, { namespace: ns, name: 'first' }));
    await waitFor(
      async () => ((await readObject(admin, dnsRecordType, ns, 'first')) === undefined ? true : undefined),
      { timeoutMs: 30_000, description: 'first deleted' },
    );
    expect(findRecord(await listRecords(r53, zoneId), zone, 'A')).toBeUndefined();

    await createDnsRecord(admin, ns, 'second', alias);
    await waitForCondition(admin, ns, 'second', ready);
    expect(findRecord(await listRecords(r53, zoneId), zone, 'A')?.AliasTarget?.HostedZoneId).toBe(
      'Z35SXDOTRQ7X7K',
    );
  });
});

// Issue 14, item 5: the operator remembered a zone name's ID forever, so after the zone was deleted
// and created again (same name, new ID) every DNSRecord by zoneName, new ones included, stayed
// Terminal with NoSuchHostedZone for the old ID until the operator restarted.
describe('DNSRecord after its hosted zone is recreated', () => {
  /** Waits until a DNSRecord is Ready in the zone `zoneId` and returns it. */
  function readyIn(ns: string, name: string, zoneId: string): Promise<DNSRecord> {
    return waitFor(
      async () => {
        const r = await readObject<DNSRecord>(admin, dnsRecordType, ns, name);
        const isReady = r?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
        return isReady === true && r?.status?.zoneId === zoneId ? r : undefined;
      },
      { timeoutMs: 30_000, description: `${ns}/${name} Ready in zone ${zoneId}` },
    );
  }

  it('moves records by zoneName, existing and new, to the new zone without a restart', async () => {
    // A short resync brings the existing record back to Route 53 while nothing else happens to it.
    const {
      ns,
      r53,
      zone,
      zoneId: oldId,
      start,
    } = await setup('dns-rezone', {
      resyncPeriod: '2s',
      zoneCacheTtlMs: 1000,
    });
    await start();
    await createDnsRecord(admin, ns, 'old', {
      zoneName: zone,
      name: 'old',
      type: 'A',
      ttl: 60,
      records: ['192.0.2.50'],
    });
    await readyIn(ns, 'old', oldId);

    await deleteZone(r53, oldId);
    const newId = await createZone(r53, zone);
    expect(newId).not.toBe(oldId);
    await createDnsRecord(admin, ns, 'new', {
      zoneName: zone,
      name: 'new',
      type: 'A',
      ttl: 60,
      records: ['192.0.2.51'],
    });

    const [existing, added] = await Promise.all([readyIn(ns, 'old', newId), readyIn(ns, 'new', newId)]);
    expect(existing.status).toMatchObject({ fqdn: `old.${zone}.`, zoneId: newId, changeStatus: 'INSYNC' });
    expect(added.status).toMatchObject({ fqdn: `new.${zone}.`, zoneId: newId, changeStatus: 'INSYNC' });
    const records = await listRecords(r53, newId);
    expect(findRecord(records, `old.${zone}`, 'A')?.ResourceRecords).toEqual([{ Value: '192.0.2.50' }]);
    expect(findRecord(records, `new.${zone}`, 'A')?.ResourceRecords).toEqual([{ Value: '192.0.2.51' }]);
    expect(findRecord(records, `_skylift-owner.a.old.${zone}`, 'TXT')?.ResourceRecords?.[0]?.Value).toContain(
      `skylift/uid=${existing.metadata.uid ?? ''}`,
    );
    expect(findRecord(records, `_skylift-owner.a.new.${zone}`, 'TXT')?.ResourceRecords?.[0]?.Value).toContain(
      `skylift/uid=${added.metadata.uid ?? ''}`,
    );
  });

  it('keeps a record by zoneId Terminal, naming spec.zoneId, and lets it be deleted', async () => {
    const {
      ns,
      r53,
      zone,
      zoneId: oldId,
      start,
    } = await setup('dns-rezone-id', {
      resyncPeriod: '2s',
      zoneCacheTtlMs: 1000,
    });
    await start();
    await createDnsRecord(admin, ns, 'pinned', {
      zoneId: oldId,
      name: 'pinned',
      type: 'A',
      records: ['192.0.2.52'],
    });
    await readyIn(ns, 'pinned', oldId);

    await deleteZone(r53, oldId);
    const newId = await createZone(r53, zone);
    const r = await waitForCondition(admin, ns, 'pinned', {
      type: 'Synced',
      status: 'False',
      reason: 'Terminal',
    });
    const message = r.status?.conditions?.find((c) => c.type === 'Synced')?.message ?? '';
    expect(message).toContain(`hosted zone ${oldId} (spec.zoneId) does not exist`);
    expect(message).toContain('spec.zoneName');
    expect(r.status?.zoneId).toBe(oldId);
    expect(findRecord(await listRecords(r53, newId), `pinned.${zone}`, 'A')).toBeUndefined();

    // Its record went with the zone, so the deletion the message advises completes.
    await admin.delete(resourcePath(dnsRecordType, { namespace: ns, name: 'pinned' }));
    await waitFor(
      async () => ((await readObject(admin, dnsRecordType, ns, 'pinned')) === undefined ? true : undefined),
      { timeoutMs: 30_000, description: 'pinned deleted' },
    );
  });
  // Issue 27, item 8: by zoneName, once no zone had the name, the record could not be deleted (the
  // finalizer was held) although its message advised deleting it.
  it('keeps a record by zoneName Terminal once no zone has the name, and lets it be deleted', async () => {
    const { ns, r53, zone, zoneId, start } = await setup('dns-zone-gone', {
      resyncPeriod: '2s',
      zoneCacheTtlMs: 1000,
    });
    await start();
    await createDnsRecord(admin, ns, 'orphaned', {
      zoneName: zone,
      name: 'orphaned',
      type: 'A',
      records: ['192.0.2.53'],
    });
    await readyIn(ns, 'orphaned', zoneId);

    await deleteZone(r53, zoneId);
    const r = await waitForCondition(admin, ns, 'orphaned', {
      type: 'Synced',
      status: 'False',
      reason: 'Terminal',
    });
    const message = r.status?.conditions?.find((c) => c.type === 'Synced')?.message ?? '';
    expect(message).toContain(`spec.zoneName ${zone}`);
    expect(message).toContain('delete this DNSRecord');

    // No zone holds its record any more (Route 53 deletes only empty zones): the deletion completes.
    await admin.delete(resourcePath(dnsRecordType, { namespace: ns, name: 'orphaned' }));
    await waitFor(
      async () => ((await readObject(admin, dnsRecordType, ns, 'orphaned')) === undefined ? true : undefined),
      { timeoutMs: 30_000, description: 'orphaned deleted' },
    );
  });
});
