// Orphan, then adopt: the documented way to keep an AWS resource while replacing the object that
// manages it (docs/product.md item 8, docs/troubleshooting.md) is to delete the object with
// deletionPolicy Orphan and name the resource in a new object's spec.externalName. The resource
// keeps the old object's ownership marks (tags, ownership TXT), and Skylift refused the adoption
// as a Conflict "owned by <old object>" although that object no longer exists, so the advice did
// not work. An owner that no longer exists in this cluster does not own anything: naming its
// resource in spec.externalName adopts it; without externalName the Conflict says how to adopt.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dnsRecordType } from '../../src/kinds/dnsrecord/api.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import { parseOwnerValue } from '../../src/providers/route53/names.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
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
import { stackInfo } from '../support/stack.ts';
import { resourcePath } from '../../src/apis/meta.ts';

let admin: KubeClient;
let controller: RunningDnsController;
let ns: string;
let zone: string;
let zoneId: string;

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  ns = await newNamespace(admin, 'orphan-adopt');
  zone = `${ns}.example.com`;
  zoneId = await createZone(route53At(stackInfo().awsEndpoint), zone);
  controller = await startDnsController({ namespace: ns, endpoint: stackInfo().awsEndpoint });
});
afterAll(async () => {
  await controller.stop();
});

async function ownerUid(name: string): Promise<string | undefined> {
  const records = await listRecords(route53At(stackInfo().awsEndpoint), zoneId);
  const txt = records.find((r) => r.Type === 'TXT' && r.Name?.endsWith(`.a.${name}.${zone}.`));
  return parseOwnerValue((txt?.ResourceRecords ?? []).map((r) => r.Value ?? '').join(' '))?.uid;
}

async function deleteAndWait(name: string): Promise<void> {
  await admin.delete(resourcePath(dnsRecordType, { namespace: ns, name }));
  await waitFor(
    async () => ((await readObject(admin, dnsRecordType, ns, name)) === undefined ? true : undefined),
    {
      timeoutMs: 30_000,
      description: `${name} gone`,
    },
  );
}

describe('a resource left by deletionPolicy Orphan', () => {
  it('is adopted by a new object naming it in spec.externalName', async () => {
    const old = await createDnsRecord(admin, ns, 'old', {
      zoneName: zone,
      name: 'www',
      type: 'A',
      ttl: 300,
      records: ['10.0.0.1'],
      deletionPolicy: 'Orphan',
    });
    await waitForCondition(admin, ns, 'old', { type: 'Ready', status: 'True' });
    expect(await ownerUid('www')).toBe(old.metadata.uid);
    await deleteAndWait('old');
    // Left as it was: the record and the old object's ownership TXT.
    expect(await ownerUid('www')).toBe(old.metadata.uid);

    const heir = await createDnsRecord(admin, ns, 'heir', {
      zoneName: zone,
      name: 'www',
      type: 'A',
      ttl: 300,
      records: ['10.0.0.2'],
      externalName: `www.${zone}./A`,
    });
    await waitForCondition(admin, ns, 'heir', { type: 'Ready', status: 'True' });
    expect(await ownerUid('www')).toBe(heir.metadata.uid);
    const www = findRecord(await listRecords(route53At(stackInfo().awsEndpoint), zoneId), `www.${zone}`, 'A');
    expect(www?.ResourceRecords?.map((r) => r.Value)).toEqual(['10.0.0.2']);
  });

  it('without spec.externalName is a Conflict that says the owner is gone and how to adopt', async () => {
    await createDnsRecord(admin, ns, 'first', {
      zoneName: zone,
      name: 'api',
      type: 'A',
      records: ['10.0.1.1'],
      deletionPolicy: 'Orphan',
    });
    await waitForCondition(admin, ns, 'first', { type: 'Ready', status: 'True' });
    await deleteAndWait('first');
    await createDnsRecord(admin, ns, 'second', {
      zoneName: zone,
      name: 'api',
      type: 'A',
      records: ['10.0.1.2'],
    });
    const synced = (
      await waitForCondition(admin, ns, 'second', { type: 'Synced', status: 'False', reason: 'Conflict' })
    ).status?.conditions?.find((c) => c.type === 'Synced');
    expect(synced?.message).toMatch(
      new RegExp(`owned by ${ns}/first .*no longer exists.*spec\\.externalName`),
    );
  });

  it('owned by an object that still exists stays a Conflict, externalName or not', async () => {
    await createDnsRecord(admin, ns, 'holder', {
      zoneName: zone,
      name: 'db',
      type: 'A',
      records: ['10.0.2.1'],
    });
    await waitForCondition(admin, ns, 'holder', { type: 'Ready', status: 'True' });
    await createDnsRecord(admin, ns, 'taker', {
      zoneName: zone,
      name: 'db',
      type: 'A',
      records: ['10.0.2.2'],
      externalName: `db.${zone}./A`,
    });
    const synced = (
      await waitForCondition(admin, ns, 'taker', { type: 'Synced', status: 'False', reason: 'Conflict' })
    ).status?.conditions?.find((c) => c.type === 'Synced');
    expect(synced?.message).toContain(`owned by ${ns}/holder`);
    expect(synced?.message).not.toContain('no longer exists');
  });
});
