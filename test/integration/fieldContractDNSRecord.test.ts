// DNSRecord's field contract, generated half (test/support/fieldProbes.ts): every field the
// contract says is applied in AWS is changed after create (and back), and Route 53 shows it as soon
// as the object is Ready and Synced at the new generation; every fixed field's change is refused by the
// apiserver. A field added to the contract without a probe fails the first test.
import type { ResourceRecordSet, Route53Client } from '@aws-sdk/client-route-53';
import { afterAll, beforeAll } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { dnsRecordFieldContract, dnsRecordType } from '../../src/kinds/dnsrecord/api.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import {
  createDnsRecord,
  createZone,
  listRecords,
  route53At,
  startDnsController,
  type RunningDnsController,
} from '../support/dns.ts';
import {
  describeFieldContract,
  waitSettledAtGeneration,
  type FieldProbe,
  type FixedProbe,
} from '../support/fieldProbes.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { stackInfo } from '../support/stack.ts';

let admin: KubeClient;
let r53: Route53Client;
let controller: RunningDnsController;
let ns: string;
let zone: string;
let zoneId: string;
const name = 'probed';

/** The probed record set: name probe, type A, set identifier blue. */
async function recordSet(): Promise<ResourceRecordSet> {
  const rs = (await listRecords(r53, zoneId)).find(
    (r) => r.Name === `probe.${zone}.` && r.Type === 'A' && r.SetIdentifier === 'blue',
  );
  if (rs === undefined) throw new Error(`no record set probe.${zone} A blue`);
  return rs;
}

const probe = (
  field: string,
  read: (rs: ResourceRecordSet) => unknown,
  before: unknown,
  ...steps: [Record<string, unknown>, unknown][]
): FieldProbe => ({
  field,
  before,
  steps: steps.map(([patch, aws]) => ({ patch, aws })),
  read: async () => read(await recordSet()),
});

const values = (rs: ResourceRecordSet): (string | undefined)[] =>
  (rs.ResourceRecords ?? []).map((r) => r.Value).sort();

const probes = (): FieldProbe[] => [
  probe('ttl', (rs) => rs.TTL, 60, [{ ttl: 300 }, 300], [{ ttl: 60 }, 60]),
  probe(
    'records',
    values,
    ['192.0.2.1'],
    [{ records: ['192.0.2.1', '192.0.2.2'] }, ['192.0.2.1', '192.0.2.2']],
    [{ records: ['192.0.2.1'] }, ['192.0.2.1']],
  ),
  probe(
    'aliasTarget',
    (rs) => ({ alias: rs.AliasTarget, values: values(rs) }),
    { alias: undefined, values: ['192.0.2.1'] },
    [
      {
        records: null,
        aliasTarget: { dnsName: 'lb-1.us-east-1.elb.amazonaws.com', hostedZoneId: 'Z35SXDOTRQ7X7K' },
      },
      {
        alias: {
          DNSName: 'lb-1.us-east-1.elb.amazonaws.com',
          HostedZoneId: 'Z35SXDOTRQ7X7K',
          EvaluateTargetHealth: false,
        },
        values: [],
      },
    ],
    [
      { aliasTarget: { dnsName: 'lb-2.us-east-1.elb.amazonaws.com', evaluateTargetHealth: true } },
      {
        alias: {
          DNSName: 'lb-2.us-east-1.elb.amazonaws.com',
          HostedZoneId: 'Z35SXDOTRQ7X7K',
          EvaluateTargetHealth: true,
        },
        values: [],
      },
    ],
    [
      { aliasTarget: null, records: ['192.0.2.1'] },
      { alias: undefined, values: ['192.0.2.1'] },
    ],
  ),
  probe('weight', (rs) => rs.Weight, 10, [{ weight: 20 }, 20], [{ weight: 10 }, 10]),
];

const fixed: FixedProbe[] = [
  { field: 'zoneId', patch: { zoneName: null, zoneId: 'Z0000000000000000000' } },
  { field: 'zoneName', patch: { zoneName: 'other.example.com' } },
  { field: 'name', patch: { name: 'other' } },
  { field: 'type', patch: { type: 'AAAA', records: ['2001:db8::1'] } },
  { field: 'setIdentifier', patch: { setIdentifier: 'green' } },
  { field: 'externalName', patch: { externalName: 'other' } },
];

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  ns = await newNamespace(admin, 'dns-contract');
  r53 = route53At(stackInfo().awsEndpoint);
  zone = `${ns}.example.com`;
  zoneId = await createZone(r53, zone);
  controller = await startDnsController({ namespace: ns, endpoint: stackInfo().awsEndpoint });
  await createDnsRecord(admin, ns, name, {
    zoneName: zone,
    name: 'probe',
    type: 'A',
    ttl: 60,
    records: ['192.0.2.1'],
    setIdentifier: 'blue',
    weight: 10,
  });
  await waitSettledAtGeneration(admin, dnsRecordType, ns, name, 'create');
});
afterAll(async () => {
  await controller.stop();
});

describeFieldContract({
  kind: 'DNSRecord',
  service: 'Route 53',
  type: dnsRecordType,
  contract: dnsRecordFieldContract,
  probes,
  fixed,
  object: () => ({ admin, ns, name }),
  refused: /immutable|cannot be (set|added)|cannot be set, changed or removed/,
});
