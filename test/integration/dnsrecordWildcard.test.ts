// Issue 27, item 1: a wildcard `*.X` and a literal `_wildcard.X` shared one ownership TXT record,
// so a second namespace creating `_wildcard.X` overwrote the first one's mark (and could then
// adopt `*.X` after an Orphan delete). Each now has a mark of its own, side by side; a wildcard's
// own mark under the old name moves to the new one, and a mark another object wrote there stays.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { dnsRecordType } from '../../src/kinds/dnsrecord/api.ts';
import type { ResourceRecordSet } from '@aws-sdk/client-route-53';
import { normalizeName, ownerRecordValue, parseOwnerValue } from '../../src/providers/route53/names.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import {
  changeRecords,
  createDnsRecord,
  createZone,
  listRecords,
  route53At,
  startDnsController,
  waitForCondition,
  type RunningDnsController,
} from '../support/dns.ts';
import { counterValue } from '../support/gadgetController.ts';
import { kubeClient, newNamespace, readObject } from '../support/kube.ts';
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
  for (const r of running.splice(0)) await r.stop();
});

const ready = { type: 'Ready', status: 'True' } as const;
/** Each resync reads the zone afresh, so a change made beside Skylift is seen at the next one. */
const fresh = { zoneCacheTtlMs: 500 };
const a = (name: string, ip: string) => ({ name, type: 'A' as const, ttl: 60, records: [ip] });

/** A record set by name (as Route 53 compares names: `*` or `\\052`, case, trailing dot) and type. */
function find(
  records: readonly ResourceRecordSet[],
  name: string,
  type: string,
): ResourceRecordSet | undefined {
  return records.find((r) => normalizeName(r.Name ?? '') === normalizeName(name) && r.Type === type);
}

/** The uid in the ownership TXT record `name` of the zone, if there is one. */
async function markAt(zoneId: string, name: string): Promise<string | undefined> {
  const rr = find(await listRecords(route53At(stackInfo().awsEndpoint), zoneId), name, 'TXT');
  return parseOwnerValue(rr?.ResourceRecords?.map((r) => r.Value ?? '').join('') ?? '')?.uid;
}

describe('DNSRecord ownership marks of wildcard names', () => {
  it('a wildcard and a literal _wildcard record in two namespaces of one zone keep their own marks', async () => {
    const nsA = await newNamespace(admin, 'dns-wild-a');
    const nsB = await newNamespace(admin, 'dns-wild-b');
    const r53 = route53At(stackInfo().awsEndpoint);
    const zone = `${nsA}.example.com`;
    const zoneId = await createZone(r53, zone);
    running.push(
      await startDnsController({
        namespace: nsA,
        endpoint: proxy.endpoint,
        resyncPeriod: '2s',
        settings: fresh,
      }),
    );
    running.push(
      await startDnsController({
        namespace: nsB,
        endpoint: proxy.endpoint,
        resyncPeriod: '2s',
        settings: fresh,
      }),
    );

    await createDnsRecord(admin, nsA, 'star', { zoneId, ...a('*', '192.0.2.1') });
    const star = await waitForCondition(admin, nsA, 'star', ready);
    await createDnsRecord(admin, nsB, 'literal', { zoneId, ...a('_wildcard', '192.0.2.2') });
    const literal = await waitForCondition(admin, nsB, 'literal', ready);

    // Two marks, each naming its own object, and they stay so through resyncs of both.
    const marks = async () => ({
      star: await markAt(zoneId, `_skylift-owner.a-wildcard.${zone}`),
      literal: await markAt(zoneId, `_skylift-owner.a._wildcard.${zone}`),
    });
    const want = { star: star.metadata.uid, literal: literal.metadata.uid };
    expect(await marks()).toEqual(want);
    // Two resyncs of each object later, no object has rewritten a mark (the two used to fight over one).
    const writes = () => proxy.calls().filter((c) => c.operation === 'ChangeResourceRecordSets').length;
    const before = writes();
    const reconciles = () =>
      Promise.all(running.map((r) => counterValue(r.metrics.reconcileTotal, { controller: 'dnsrecord' })));
    const start = await reconciles();
    await waitFor(
      async () => ((await reconciles()).every((n, i) => n >= (start[i] ?? 0) + 2) ? true : undefined),
      { timeoutMs: 30_000, description: 'two resyncs of each object' },
    );
    expect(await marks()).toEqual(want);
    expect(writes()).toBe(before);
    const records = await listRecords(r53, zoneId);
    expect(find(records, `*.${zone}`, 'A')?.ResourceRecords).toEqual([{ Value: '192.0.2.1' }]);
    expect(find(records, `_wildcard.${zone}`, 'A')?.ResourceRecords).toEqual([{ Value: '192.0.2.2' }]);
  });

  it('moves a wildcard’s own mark from its old name in one batch, and leaves another object’s mark there', async () => {
    const ns = await newNamespace(admin, 'dns-wild-move');
    const r53 = route53At(stackInfo().awsEndpoint);
    const zone = `${ns}.example.com`;
    const zoneId = await createZone(r53, zone);
    running.push(
      await startDnsController({
        namespace: ns,
        endpoint: proxy.endpoint,
        resyncPeriod: '2s',
        settings: fresh,
      }),
    );
    await createDnsRecord(admin, ns, 'star', { zoneId, ...a('*', '192.0.2.3') });
    const star = await waitForCondition(admin, ns, 'star', ready);
    const uid = star.metadata.uid ?? '';
    const owner = { cluster: 'test-cluster', owner: `${ns}/star`, uid };
    const txt = (name: string, value: string) => ({
      Name: name,
      Type: 'TXT' as const,
      TTL: 300,
      ResourceRecords: [{ Value: value }],
    });
    const newMark = `_skylift-owner.a-wildcard.${zone}.`;
    const oldMark = `_skylift-owner.a._wildcard.${zone}.`;
    // As an earlier Skylift left it: the mark under the old name only.
    const current = find(await listRecords(r53, zoneId), newMark, 'TXT');
    await changeRecords(r53, zoneId, [
      { Action: 'DELETE', ResourceRecordSet: current },
      { Action: 'CREATE', ResourceRecordSet: txt(oldMark, ownerRecordValue(owner)) },
    ]);
    await waitFor(
      async () =>
        (await markAt(zoneId, newMark)) === uid && (await markAt(zoneId, oldMark)) === undefined
          ? true
          : undefined,
      { timeoutMs: 30_000, description: 'the mark moved to its new name' },
    );
    expect((await waitForCondition(admin, ns, 'star', ready)).metadata.uid).toBe(uid);

    // Another object's mark under the old name (a literal _wildcard record's, with no record here) stays.
    const other = { cluster: 'test-cluster', owner: 'elsewhere/literal', uid: 'another-object-uid' };
    await changeRecords(r53, zoneId, [
      { Action: 'CREATE', ResourceRecordSet: txt(oldMark, ownerRecordValue(other)) },
    ]);
    await admin.patch(
      resourcePath(dnsRecordType, { namespace: ns, name: 'star' }),
      { spec: { records: ['192.0.2.4'] } },
      'merge',
    );
    await waitFor(
      async () =>
        find(await listRecords(r53, zoneId), `*.${zone}`, 'A')?.ResourceRecords?.[0]?.Value === '192.0.2.4'
          ? true
          : undefined,
      { timeoutMs: 30_000, description: 'the wildcard updated' },
    );
    expect(await markAt(zoneId, oldMark)).toBe('another-object-uid');
    expect(await markAt(zoneId, newMark)).toBe(uid);
    // Deleting the wildcard removes its record and its mark, not the other one.
    await admin.delete(resourcePath(dnsRecordType, { namespace: ns, name: 'star' }));
    await waitFor(
      async () => ((await readObject(admin, dnsRecordType, ns, 'star')) === undefined ? true : undefined),
      { timeoutMs: 30_000, description: 'star deleted' },
    );
    const left = await listRecords(r53, zoneId);
    expect(find(left, `*.${zone}`, 'A')).toBeUndefined();
    expect(await markAt(zoneId, newMark)).toBeUndefined();
    expect(await markAt(zoneId, oldMark)).toBe('another-object-uid');
  });
});
