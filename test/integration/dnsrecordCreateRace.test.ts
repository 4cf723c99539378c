// A record made (by hand, by another tool, by another cluster's Skylift) between Skylift's listing
// of the zone, which it caches, and its CREATE: Route 53 refuses the CREATE, and with it the whole
// batch. moto accepts such a CREATE silently (and lists two record sets of the name), so the rule
// from dev/route53Fidelity.ts answers as Route 53 does. The object must end Synced=False
// Conflict with a message naming the record and what to do — the engine's wording for a conflict
// found by observing — not Route 53's raw text, without retrying in a loop; the other records of
// the refused batch must not be blamed.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dnsRecordType, type DNSRecord } from '../../src/kinds/dnsrecord/api.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { ownerRecordName, ownerRecordValue, parseOwnerValue } from '../../src/providers/route53/names.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
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
import { kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { route53RefuseExistingCreate } from '../../dev/route53Fidelity.ts';
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

const ready = { type: 'Ready', status: 'True' } as const;
const conflict = { type: 'Synced', status: 'False', reason: 'Conflict' } as const;

/**
 * A zone whose listing the controller has cached (a first record made it list the zone), with
 * Route 53's refusal of a CREATE for an existing record in front of the emulator.
 */
async function listedZone(prefix: string) {
  const ns = await newNamespace(admin, prefix);
  const r53 = route53At(stackInfo().awsEndpoint);
  const zone = `${ns}.example.com`;
  const zoneId = await createZone(r53, zone);
  // A window long enough for objects created together to share a batch; a listing that stays cached.
  const op = await startDnsController({
    namespace: ns,
    endpoint: proxy.endpoint,
    resyncPeriod: '10m',
    settings: { batchWindowMs: 1500, zoneCacheTtlMs: 600_000 },
  });
  running.push(op);
  proxy.inject(route53RefuseExistingCreate());
  await createDnsRecord(admin, ns, 'first', {
    zoneName: zone,
    name: 'first',
    type: 'A',
    records: ['192.0.2.1'],
  });
  await waitForCondition(admin, ns, 'first', ready);
  return { ns, r53, zone, zoneId, op };
}

function syncedMessage(r: DNSRecord): string {
  return r.status?.conditions?.find((c) => c.type === 'Synced')?.message ?? '';
}

describe('DNSRecord whose name is created by someone else after the zone was listed', () => {
  it('is a Conflict naming the record and spec.externalName; its batch neighbour becomes Ready', async () => {
    const { ns, r53, zone, zoneId, op } = await listedZone('dns-race');
    // Made behind Skylift's back, after its listing.
    await changeRecords(r53, zoneId, [
      {
        Action: 'CREATE',
        ResourceRecordSet: {
          Name: `late.${zone}.`,
          Type: 'A',
          TTL: 300,
          ResourceRecords: [{ Value: '203.0.113.7' }],
        },
      },
    ]);
    proxy.resetCalls();
    await Promise.all([
      createDnsRecord(admin, ns, 'late', { zoneName: zone, name: 'late', type: 'A', records: ['192.0.2.7'] }),
      createDnsRecord(admin, ns, 'neighbour', {
        zoneName: zone,
        name: 'neighbour',
        type: 'A',
        records: ['192.0.2.8'],
      }),
    ]);

    const late = await waitForCondition(admin, ns, 'late', conflict);
    const message = syncedMessage(late);
    expect(message).toContain(`late.${zone}/A`);
    expect(message).toContain(
      'already exists and is not managed by Skylift; set spec.externalName to adopt it',
    );
    expect(message).not.toContain('Tried to create');
    expect(late.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'Conflict',
    });
    const neighbour = await waitForCondition(admin, ns, 'neighbour', ready);

    // The two went out in one batch, which Route 53 refused as a whole: it was split, and only
    // late's CREATE was refused again on its own.
    expect(await counterValue(op.metrics.route53Batches, { outcome: 'split' })).toBeGreaterThanOrEqual(1);
    expect(proxy.count({ operation: 'ChangeResourceRecordSets', outcome: 'respond' })).toBe(2);

    // No retry loop: a later record's batch goes through, and late's CREATE is not sent again.
    await createDnsRecord(admin, ns, 'after', {
      zoneName: zone,
      name: 'after',
      type: 'A',
      records: ['192.0.2.9'],
    });
    await waitForCondition(admin, ns, 'after', ready);
    expect(proxy.count({ operation: 'ChangeResourceRecordSets', outcome: 'respond' })).toBe(2);
    expect((await readObject<DNSRecord>(admin, dnsRecordType, ns, 'late'))?.status?.conditions).toEqual(
      late.status?.conditions,
    );

    const records = await listRecords(r53, zoneId);
    expect(records.filter((r) => r.Name === `late.${zone}.` && r.Type === 'A')).toEqual([
      { Name: `late.${zone}.`, Type: 'A', TTL: 300, ResourceRecords: [{ Value: '203.0.113.7' }] },
    ]);
    expect(findRecord(records, `_skylift-owner.a.late.${zone}`, 'TXT')).toBeUndefined();
    expect(findRecord(records, `neighbour.${zone}`, 'A')?.ResourceRecords).toEqual([{ Value: '192.0.2.8' }]);
    const owner = findRecord(records, `_skylift-owner.a.neighbour.${zone}`, 'TXT');
    expect(parseOwnerValue(owner?.ResourceRecords?.[0]?.Value ?? '')?.uid).toBe(neighbour.metadata.uid);
  });

  it('is a Conflict naming the owner when another Skylift object owns the record', async () => {
    const { ns, r53, zone, zoneId } = await listedZone('dns-race-owned');
    // Another cluster's Skylift wrote the record and its ownership TXT after the listing.
    const elsewhere = {
      cluster: 'other-cluster',
      owner: 'shop/www',
      uid: '3f0c1e2a-0000-4000-8000-000000000001',
    };
    await changeRecords(r53, zoneId, [
      {
        Action: 'CREATE',
        ResourceRecordSet: {
          Name: `taken.${zone}.`,
          Type: 'A',
          TTL: 300,
          ResourceRecords: [{ Value: '203.0.113.8' }],
        },
      },
      {
        Action: 'CREATE',
        ResourceRecordSet: {
          Name: ownerRecordName(`taken.${zone}.`, 'A', undefined, '_skylift-owner'),
          Type: 'TXT',
          TTL: 300,
          ResourceRecords: [{ Value: ownerRecordValue(elsewhere) }],
        },
      },
    ]);
    await createDnsRecord(admin, ns, 'taken', {
      zoneName: zone,
      name: 'taken',
      type: 'A',
      records: ['192.0.2.10'],
    });

    const taken = await waitForCondition(admin, ns, 'taken', conflict);
    const message = syncedMessage(taken);
    expect(message).toContain(`taken.${zone}/A is owned by a Skylift object of another cluster;`);
    expect(message).not.toContain('Tried to create');
    const records = await listRecords(r53, zoneId);
    expect(findRecord(records, `taken.${zone}`, 'A')?.ResourceRecords).toEqual([{ Value: '203.0.113.8' }]);
    expect(
      parseOwnerValue(
        findRecord(records, `_skylift-owner.a.taken.${zone}`, 'TXT')?.ResourceRecords?.[0]?.Value ?? '',
      ),
    ).toEqual(elsewhere);
  });
});

describe('the Route 53 fidelity rule', () => {
  it('leaves a change to a zone that no longer exists to the emulator: NoSuchHostedZone, as Route 53 answers', async () => {
    proxy.inject(route53RefuseExistingCreate());
    const direct = route53At(stackInfo().awsEndpoint);
    const zoneId = await createZone(direct, `gone-${Date.now()}.example.com`);
    await deleteZone(direct, zoneId);
    const viaProxy = route53At(proxy.endpoint);
    const err = await changeRecords(viaProxy, zoneId, [
      {
        Action: 'CREATE',
        ResourceRecordSet: {
          Name: 'www.gone.example.com',
          Type: 'A',
          TTL: 60,
          ResourceRecords: [{ Value: '192.0.2.1' }],
        },
      },
    ]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as { name?: string } | undefined)?.name).toBe('NoSuchHostedZone');
  });
});
