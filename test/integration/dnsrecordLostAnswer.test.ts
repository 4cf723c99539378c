// Regression test for a bug `make chaos` found (seed 464953112, 24 objects):
// Route 53 carries out a DNSRecord's CREATE batch (record + ownership TXT) but
// the answer is lost. The retried CREATE is refused "already exists"; the
// adapter used to rethrow that as an ownership conflict although the TXT
// beside the record names this very object, leaving it at Ready=False reason
// Conflict until the next resync (10 min). It must recognise the record as its
// own and become Ready.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dnsRecordType, type DNSRecord } from '../../src/kinds/dnsrecord/api.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
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
  type RunningDnsController,
} from '../support/dns.ts';
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
  proxy.clearFaults();
  for (const r of running.splice(0)) await r.stop();
});

describe('DNSRecord whose create answer is lost', () => {
  it('becomes Ready with its own record instead of reporting a conflict with itself', async () => {
    const ns = await newNamespace(admin, 'lost-answer');
    const r53 = route53At(stackInfo().awsEndpoint);
    const zone = `${ns}.example.com`;
    const zoneId = await createZone(r53, zone);
    running.push(await startDnsController({ namespace: ns, endpoint: proxy.endpoint, resyncPeriod: '10m' }));
    // Route 53 applies the batch; the operator never hears back.
    const lost = proxy.inject({
      service: 'route53',
      operation: 'ChangeResourceRecordSets',
      fault: { kind: 'dropResponse' },
      times: 1,
    });

    const created = await createDnsRecord(admin, ns, 'www', {
      zoneName: zone,
      name: 'www',
      type: 'A',
      ttl: 300,
      records: ['192.0.2.10'],
    });
    // Settles either way within seconds: Ready, or the (wrong) conflict that would stay for a resync period.
    const ready = await waitFor(
      async () => {
        const r = await readObject<DNSRecord>(admin, dnsRecordType, ns, 'www');
        const c = r?.status?.conditions?.find((x) => x.type === 'Ready');
        return c?.status === 'True' || c?.reason === 'Conflict' ? c : undefined;
      },
      { timeoutMs: 30_000, description: 'www Ready or in conflict' },
    );
    expect(`${ready.status} ${ready.reason}: ${ready.message}`).toMatch(/^True /);

    expect(lost.hits).toBe(1);
    const records = await listRecords(r53, zoneId);
    expect(findRecord(records, `www.${zone}`, 'A')?.ResourceRecords).toEqual([{ Value: '192.0.2.10' }]);
    const owner = findRecord(records, `_skylift-owner.a.www.${zone}`, 'TXT');
    expect(parseOwnerValue(owner?.ResourceRecords?.[0]?.Value ?? '')?.uid).toBe(created.metadata.uid);
  });
});
