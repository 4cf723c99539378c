// The DNSRecord API in the real apiserver: what admission rejects (with the
// message a user sees) and what it accepts, including immutability.
import { beforeAll, describe, expect, it } from 'vitest';
import { dnsRecordType } from '../../src/kinds/dnsrecord/api.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { KubeApiError, type KubeClient } from '../../src/runtime/kube/client.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';

let client: KubeClient;
let ns: string;
let n = 0;

beforeAll(async () => {
  client = kubeClient();
  await installCrds(client);
  ns = await newNamespace(client, 'dnsapi');
});

async function tryCreate(spec: Record<string, unknown>): Promise<string | undefined> {
  try {
    await client.create(resourcePath(dnsRecordType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'DNSRecord',
      metadata: { name: `r${++n}` },
      spec,
    });
    return undefined;
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 422) return err.message;
    throw err;
  }
}

const base = { zoneName: 'example.com', name: 'www', type: 'A', records: ['192.0.2.10'] } as const;

describe('DNSRecord admission', () => {
  it.each([
    { reason: 'a plain A record', spec: base },
    {
      reason: 'a zone id and an FQDN with a trailing dot',
      spec: { ...base, zoneName: undefined, zoneId: 'Z0123456789ABCDEFGHIJ', name: 'www.example.com.' },
    },
    { reason: 'the apex', spec: { ...base, name: '@' } },
    { reason: 'a wildcard', spec: { ...base, name: '*.apps' } },
    { reason: 'AAAA', spec: { ...base, type: 'AAAA', records: ['2001:db8::10'] } },
    { reason: 'a CNAME', spec: { ...base, type: 'CNAME', records: ['app.example.net'] } },
    {
      reason: 'TXT with spaces and quotes',
      spec: { ...base, name: '_acme-challenge', type: 'TXT', records: ['"v=spf1 -all"', 'plain text'] },
    },
    {
      reason: 'MX',
      spec: { ...base, name: '@', type: 'MX', records: ['10 mail.example.com', '20 mail2.example.com.'] },
    },
    {
      reason: 'SRV',
      spec: { ...base, name: '_sip._tcp', type: 'SRV', records: ['10 5 5060 sip.example.com'] },
    },
    { reason: 'CAA', spec: { ...base, name: '@', type: 'CAA', records: ['0 issue "letsencrypt.org"'] } },
    {
      reason: 'an alias by DNS name',
      spec: {
        ...base,
        records: undefined,
        aliasTarget: { dnsName: 'lb-1.us-east-1.elb.amazonaws.com', hostedZoneId: 'Z35SXDOTRQ7X7K' },
      },
    },
    {
      reason: 'an alias to a MyIngress',
      spec: { ...base, records: undefined, aliasTarget: { myIngressRef: { name: 'web' } } },
    },
    { reason: 'weighted', spec: { ...base, setIdentifier: 'blue', weight: 10 } },
  ])('accepts $reason', async ({ spec }) => {
    expect(await tryCreate(spec)).toBeUndefined();
  });

  it.each([
    {
      reason: 'no zone',
      spec: { ...base, zoneName: undefined },
      message: 'set exactly one of zoneId and zoneName',
    },
    {
      reason: 'two zones',
      spec: { ...base, zoneId: 'Z1' },
      message: 'set exactly one of zoneId and zoneName',
    },
    {
      reason: 'records and alias together',
      spec: { ...base, aliasTarget: { dnsName: 'a.b', hostedZoneId: 'Z1' } },
      message: 'set exactly one of records and aliasTarget',
    },
    {
      reason: 'neither records nor alias',
      spec: { ...base, records: undefined },
      message: 'set exactly one of records and aliasTarget',
    },
    {
      reason: 'an A record that is not IPv4',
      spec: { ...base, records: ['2001:db8::1'] },
      message: 'A records must be IPv4 addresses',
    },
    {
      reason: 'an A record that is a name',
      spec: { ...base, records: ['example.com'] },
      message: 'A records must be IPv4 addresses',
    },
    {
      reason: 'an AAAA record that is IPv4',
      spec: { ...base, type: 'AAAA', records: ['192.0.2.1'] },
      message: 'AAAA records must be IPv6 addresses',
    },
    {
      reason: 'a CNAME at the apex (@)',
      spec: { ...base, name: '@', type: 'CNAME', records: ['x.example.net'] },
      message: 'a CNAME cannot be at the zone apex',
    },
    {
      reason: 'a CNAME at the apex (zone name)',
      spec: { ...base, name: 'Example.com.', type: 'CNAME', records: ['x.example.net'] },
      message: 'a CNAME cannot be at the zone apex',
    },
    {
      reason: 'a CNAME with two values',
      spec: { ...base, type: 'CNAME', records: ['a.example.net', 'b.example.net'] },
      message: 'a CNAME has exactly one value',
    },
    {
      reason: 'an MX without priority',
      spec: { ...base, type: 'MX', records: ['mail.example.com'] },
      message: "MX values are '<priority> <host>'",
    },
    { reason: 'a bad DNS name', spec: { ...base, name: 'bad..name' }, message: 'spec.name' },
    {
      reason: 'a label over 63 characters',
      spec: { ...base, name: 'a'.repeat(64) },
      message: 'spec.name',
    },
    { reason: 'an unknown type', spec: { ...base, type: 'SPF' }, message: 'Unsupported value: "SPF"' },
    {
      reason: 'an alias on a TXT record',
      spec: { ...base, type: 'TXT', records: undefined, aliasTarget: { dnsName: 'a.b', hostedZoneId: 'Z1' } },
      message: 'aliasTarget is only for A and AAAA records',
    },
    {
      reason: 'an alias with a ref and a name',
      spec: {
        ...base,
        records: undefined,
        aliasTarget: { dnsName: 'a.b', hostedZoneId: 'Z1', myIngressRef: { name: 'x' } },
      },
      message: 'set either myIngressRef, or both dnsName and hostedZoneId',
    },
    {
      reason: 'a weight without identifier',
      spec: { ...base, weight: 5 },
      message: 'set setIdentifier and weight together',
    },
    { reason: 'a negative TTL', spec: { ...base, ttl: -1 }, message: 'spec.ttl' },
    { reason: 'a huge string', spec: { ...base, name: 'x'.repeat(5000) }, message: 'spec.name' },
  ])('rejects $reason', async ({ spec, message }) => {
    const err = await tryCreate(spec);
    expect(err).toBeDefined();
    expect(err).toContain(message);
  });

  it('keeps zone, name and type immutable', async () => {
    const path = resourcePath(dnsRecordType, { namespace: ns, name: 'fixed' });
    await client.create(resourcePath(dnsRecordType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'DNSRecord',
      metadata: { name: 'fixed' },
      spec: base,
    });
    const change = async (patch: Record<string, unknown>): Promise<string> => {
      try {
        await client.patch(path, { spec: patch }, 'merge');
        return 'accepted';
      } catch (err) {
        return err instanceof KubeApiError ? err.message : String(err);
      }
    };
    expect(await change({ name: 'api' })).toContain('name is immutable');
    expect(await change({ type: 'AAAA', records: ['2001:db8::1'] })).toContain('type is immutable');
    expect(await change({ zoneName: 'example.org' })).toContain('zoneName is immutable');
    expect(await change({ zoneName: null, zoneId: 'Z1' })).toContain('cannot be added, removed or switched');
    expect(await change({ ttl: 60, records: ['192.0.2.11'] })).toBe('accepted');
    // Issue 14, item 2: adopting another record after create used to be admitted (and then leaked the first).
    expect(await change({ externalName: 'www.example.com/A' })).toContain(
      'spec.externalName cannot be set, changed or removed after create',
    );
  });
});
