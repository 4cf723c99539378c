// A DNSRecord with deletionPolicy Orphan deleted while a Route 53 change of its is still in the
// change batcher: the engine used to drop the finalizer at once, and the change (record and
// ownership TXT) landed afterwards, so Skylift changed Route 53 for an object it had let go of.
// Now a change still waiting for its batch is withdrawn, and one already sent holds the finalizer
// until Route 53 has answered it; after the release nothing is ever sent for the record.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dnsRecordType, type DNSRecord } from '../../src/kinds/dnsrecord/api.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import { finalizerName } from '../../src/apis/managed.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { parseOwnerValue } from '../../src/providers/route53/names.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
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
import { stackInfo, startFaultProxy } from '../support/stack.ts';

let admin: KubeClient;
let proxy: AwsFaultProxy;
const running: RunningDnsController[] = [];
const unwatch: (() => void)[] = [];

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  proxy = await startFaultProxy();
});
afterAll(async () => {
  await proxy.stop();
});
afterEach(async () => {
  for (const u of unwatch.splice(0)) u();
  proxy.clearFaults();
  for (const r of running.splice(0)) await r.stop();
});

const ready = { type: 'Ready', status: 'True' } as const;

/** A namespace, a zone named after it, the controller, and the ChangeResourceRecordSets bodies naming `kept`. */
async function setup(prefix: string, batchWindowMs: number) {
  const ns = await newNamespace(admin, prefix);
  const r53 = route53At(stackInfo().awsEndpoint);
  const zone = `${ns}.example.com`;
  const zoneId = await createZone(r53, zone);
  running.push(
    await startDnsController({ namespace: ns, endpoint: proxy.endpoint, settings: { batchWindowMs } }),
  );
  const keptChanges: string[] = [];
  unwatch.push(
    proxy.watch((call) => {
      if (call.operation === 'ChangeResourceRecordSets' && call.body.includes(`kept.${zone}.`))
        keptChanges.push(call.body);
    }),
  );
  return { ns, r53, zone, zoneId, keptChanges };
}

function gone(ns: string, name: string): Promise<true> {
  return waitFor(
    async () => ((await readObject(admin, dnsRecordType, ns, name)) === undefined ? true : undefined),
    { timeoutMs: 30_000, description: `${ns}/${name} gone` },
  );
}

async function patchRecords(ns: string, name: string, records: string[]): Promise<void> {
  await admin.patch(resourcePath(dnsRecordType, { namespace: ns, name }), { spec: { records } }, 'merge');
}

describe('DNSRecord with deletionPolicy Orphan deleted during a change', () => {
  it('withdraws a change still waiting for its batch and sends nothing for the record after letting go', async () => {
    // A long window keeps the spec change queued in the batcher while the object is deleted.
    const { ns, r53, zone, zoneId, keptChanges } = await setup('dns-orphan-queued', 4000);
    const kept = await createDnsRecord(admin, ns, 'kept', {
      zoneName: zone,
      name: 'kept',
      type: 'A',
      ttl: 60,
      records: ['192.0.2.41'],
      deletionPolicy: 'Orphan',
    });
    await waitForCondition(admin, ns, 'kept', ready);

    await patchRecords(ns, 'kept', ['192.0.2.42']);
    await waitFor(
      async () => {
        const r = await readObject<DNSRecord>(admin, dnsRecordType, ns, 'kept');
        const c = r?.status?.conditions?.find((x) => x.type === 'Ready');
        const queued = c?.reason === 'Updating' || c?.reason === 'Pending';
        return r?.status?.observedGeneration === 2 && queued ? true : undefined;
      },
      { timeoutMs: 30_000, description: 'the UPSERT for generation 2 queued' },
    );
    const sentBeforeDelete = keptChanges.length;
    await admin.delete(resourcePath(dnsRecordType, { namespace: ns, name: 'kept' }));
    await gone(ns, 'kept');

    // A later record in the same zone: its batch would carry the queued change had it stayed queued.
    await createDnsRecord(admin, ns, 'later', {
      zoneName: zone,
      name: 'later',
      type: 'A',
      records: ['192.0.2.43'],
    });
    await waitForCondition(admin, ns, 'later', ready);

    expect(keptChanges.length, 'change calls for kept.* after the delete').toBe(sentBeforeDelete);
    const records = await listRecords(r53, zoneId);
    // What existed at release: the record and its ownership TXT, both as the last applied change left them.
    expect(findRecord(records, `kept.${zone}`, 'A')?.ResourceRecords).toEqual([{ Value: '192.0.2.41' }]);
    const owner = findRecord(records, `_skylift-owner.a.kept.${zone}`, 'TXT');
    expect(parseOwnerValue(owner?.ResourceRecords?.[0]?.Value ?? '')?.uid).toBe(kept.metadata.uid);
  });

  it('switching to ObserveOnly withdraws a change still waiting for its batch: ObserveOnly writes nothing', async () => {
    const { ns, r53, zone, zoneId, keptChanges } = await setup('dns-observe-queued', 4000);
    await createDnsRecord(admin, ns, 'kept', {
      zoneName: zone,
      name: 'kept',
      type: 'A',
      ttl: 60,
      records: ['192.0.2.61'],
    });
    await waitForCondition(admin, ns, 'kept', ready);
    await patchRecords(ns, 'kept', ['192.0.2.62']);
    await waitFor(
      async () => {
        const r = await readObject<DNSRecord>(admin, dnsRecordType, ns, 'kept');
        const c = r?.status?.conditions?.find((x) => x.type === 'Ready');
        return r?.status?.observedGeneration === 2 && c?.reason === 'Updating' ? true : undefined;
      },
      { timeoutMs: 30_000, description: 'the UPSERT for generation 2 queued' },
    );
    const sentBefore = keptChanges.length;
    await admin.patch(
      resourcePath(dnsRecordType, { namespace: ns, name: 'kept' }),
      { spec: { managementPolicy: 'ObserveOnly' } },
      'merge',
    );
    await waitFor(
      async () => {
        const r = await readObject<DNSRecord>(admin, dnsRecordType, ns, 'kept');
        return r?.status?.observedGeneration === 3 && !(r.metadata.finalizers ?? []).includes(finalizerName)
          ? true
          : undefined;
      },
      { timeoutMs: 30_000, description: 'kept observed as ObserveOnly, finalizer gone' },
    );
    await createDnsRecord(admin, ns, 'later', {
      zoneName: zone,
      name: 'later',
      type: 'A',
      records: ['192.0.2.63'],
    });
    await waitForCondition(admin, ns, 'later', ready);

    expect(keptChanges.length, 'change calls for kept.* after ObserveOnly').toBe(sentBefore);
    expect(findRecord(await listRecords(r53, zoneId), `kept.${zone}`, 'A')?.ResourceRecords).toEqual([
      { Value: '192.0.2.61' },
    ]);
  });

  it('keeps the finalizer until Route 53 has answered a change already sent, then lets go', async () => {
    const { ns, r53, zone, zoneId, keptChanges } = await setup('dns-orphan-sent', 200);
    const kept = await createDnsRecord(admin, ns, 'kept', {
      zoneName: zone,
      name: 'kept',
      type: 'A',
      ttl: 60,
      records: ['192.0.2.51'],
      deletionPolicy: 'Orphan',
    });
    await waitForCondition(admin, ns, 'kept', ready);

    // The proxy holds the next change for kept for 3 s before passing it to Route 53.
    const held = proxy.inject({
      service: 'route53',
      operation: 'ChangeResourceRecordSets',
      match: (call) => call.body.includes(`kept.${zone}.`),
      fault: { kind: 'latency', ms: 3000 },
      times: 1,
    });
    await patchRecords(ns, 'kept', ['192.0.2.52']);
    await waitFor(() => Promise.resolve(held.hits === 1 ? true : undefined), {
      timeoutMs: 30_000,
      description: 'the UPSERT sent (held by the proxy)',
    });
    await admin.delete(resourcePath(dnsRecordType, { namespace: ns, name: 'kept' }));

    // Settles within the 3 s: the object waits for the answer, or (the old behaviour) is gone already.
    const seen = await waitFor(
      async () => {
        const r = await readObject<DNSRecord>(admin, dnsRecordType, ns, 'kept');
        if (r === undefined) return { gone: true as const };
        const c = r.status?.conditions?.find((x) => x.type === 'Ready');
        return c?.reason === 'Deleting' ? { gone: false as const, object: r, message: c.message } : undefined;
      },
      { timeoutMs: 30_000, description: 'kept waiting for Route 53 or gone' },
    );
    expect(seen.gone, 'the object was released while its change was in flight').toBe(false);
    if (!seen.gone) {
      expect(seen.object.metadata.finalizers).toContain(finalizerName);
      expect(seen.message).toContain('waiting for Route 53 to answer the change');
    }

    await gone(ns, 'kept');
    // The held call was answered before the object went (the proxy logs a call when it answers it).
    expect(proxy.count({ operation: 'ChangeResourceRecordSets', outcome: 'latency' })).toBe(1);
    const sentAtRelease = keptChanges.length;

    await createDnsRecord(admin, ns, 'later', {
      zoneName: zone,
      name: 'later',
      type: 'A',
      records: ['192.0.2.53'],
    });
    await waitForCondition(admin, ns, 'later', ready);
    expect(keptChanges.length, 'change calls for kept.* after the release').toBe(sentAtRelease);

    // What the last spec said, written by the change Route 53 answered before the release.
    const records = await listRecords(r53, zoneId);
    expect(findRecord(records, `kept.${zone}`, 'A')?.ResourceRecords).toEqual([{ Value: '192.0.2.52' }]);
    const owner = findRecord(records, `_skylift-owner.a.kept.${zone}`, 'TXT');
    expect(parseOwnerValue(owner?.ResourceRecords?.[0]?.Value ?? '')?.uid).toBe(kept.metadata.uid);
  });
});
