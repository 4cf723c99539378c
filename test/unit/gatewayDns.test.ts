// The pure planning of a Gateway's DNSRecords (src/kinds/myingress/gateway/dns.ts): which zone a
// Gateway opts into, which hostnames are in it, one record per distinct hostname with a stable
// object name, the DNSRecord applied, which records are the Gateway's own, and the condition.
import { describe, expect, it } from 'vitest';
import type { Gateway } from '../../src/apis/gatewayApi.ts';
import { dnsRecordType, type DNSRecord } from '../../src/kinds/dnsrecord/api.ts';
import {
  DnsReason,
  dnsRecordResource,
  dnsVerdict,
  dnsZoneAnnotation,
  gatewayDnsRecord,
  gatewayDnsZone,
  gatewayLabelValue,
  gatewayRecordLabel,
  gatewayRecordName,
  hostnameInZone,
  madeByGateway,
  planGatewayDns,
  recordHostname,
  recordState,
  type RecordState,
} from '../../src/kinds/myingress/gateway/dns.ts';

function gateway(annotations?: Record<string, string>, name = 'shared'): Gateway {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { namespace: 'infra', name, uid: 'uid-1', ...(annotations ? { annotations } : {}) },
    spec: { gatewayClassName: 'skylift', listeners: [] },
  };
}

/** A DNSRecord of the kind's own type (so every function here is shown to take the kind's objects). */
function record(
  meta: Partial<DNSRecord['metadata']>,
  spec: Partial<DNSRecord['spec']> = {},
  zoneId?: string,
): DNSRecord {
  const r: DNSRecord = {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'DNSRecord',
    metadata: { namespace: 'infra', name: 'r', ...meta },
    spec: { name: 'www', type: 'A', zoneName: 'example.com', ...spec },
  };
  if (zoneId !== undefined) {
    delete r.spec.zoneName;
    r.spec.zoneId = zoneId;
  }
  return r;
}

const ownerRef = (name: string, uid: string, controller = true) => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  name,
  uid,
  controller,
});

it('the DNSRecord resource the Gateway controller writes is the DNSRecord kind’s', () => {
  expect(dnsRecordResource).toEqual(dnsRecordType);
});

describe('gatewayDnsZone', () => {
  it.each([
    { reason: 'no annotation: no records', annotations: undefined, want: undefined },
    { reason: 'empty annotation: no records', annotations: { [dnsZoneAnnotation]: ' ' }, want: undefined },
    { reason: 'a zone name', annotations: { [dnsZoneAnnotation]: 'example.com' }, want: 'example.com' },
    {
      reason: 'case and trailing dot aside',
      annotations: { [dnsZoneAnnotation]: 'Example.COM.' },
      want: 'example.com',
    },
  ])('$reason', ({ annotations, want }) => {
    expect(gatewayDnsZone(gateway(annotations))).toBe(want);
  });
});

describe('hostnameInZone', () => {
  it.each([
    { reason: 'a name under the zone', host: 'shop.example.com', want: true },
    { reason: 'the apex', host: 'example.com', want: true },
    { reason: 'a deeper name', host: 'a.b.example.com', want: true },
    { reason: 'a wildcard under the zone', host: '*.example.com', want: true },
    { reason: 'case and trailing dot aside', host: 'SHOP.Example.com.', want: true },
    { reason: 'another zone', host: 'shop.example.org', want: false },
    { reason: 'a suffix that is not a label boundary', host: 'notexample.com', want: false },
    { reason: 'a wildcard covering the zone’s parent', host: '*.com', want: false },
  ])('$reason', ({ host, want }) => {
    expect(hostnameInZone(host, 'example.com')).toBe(want);
  });
});

describe('gatewayRecordName and gatewayLabelValue', () => {
  it.each([
    { reason: 'gateway and hostname', host: 'shop.example.com', want: 'shared.shop.example.com' },
    { reason: 'a wildcard spelled out', host: '*.example.com', want: 'shared.wildcard.example.com' },
    { reason: 'lower case, no trailing dot', host: 'Shop.Example.com.', want: 'shared.shop.example.com' },
  ])('$reason', ({ host, want }) => {
    expect(gatewayRecordName('shared', host)).toBe(want);
  });

  it('shortens a name past 253 characters with a hash, deterministically and validly', () => {
    const host = `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.example.com`;
    const n = gatewayRecordName('shared', host);
    expect(n.length).toBeLessThanOrEqual(253);
    expect(n).toBe(gatewayRecordName('shared', host));
    expect(n).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
    expect(gatewayRecordName('shared', 'x.example.com', true)).toMatch(
      /^shared\.x\.example\.com-[0-9a-f]{10}$/,
    );
  });

  it('a Gateway name past 63 characters is shortened as a label value with a hash', () => {
    expect(gatewayLabelValue('shared')).toBe('shared');
    const long = `g${'x'.repeat(80)}`;
    const v = gatewayLabelValue(long);
    expect(v.length).toBeLessThanOrEqual(63);
    expect(v).not.toBe(gatewayLabelValue(`${long}y`));
  });
});

describe('planGatewayDns', () => {
  it.each([
    {
      reason: 'one record per distinct hostname, the routes serving it gathered and sorted',
      served: [
        { route: 'team-b/b', hostname: 'shop.example.com' },
        { route: 'team-a/a', hostname: 'shop.example.com' },
        { route: 'team-a/a', hostname: 'api.example.com' },
      ],
      records: [
        { hostname: 'api.example.com', routes: ['team-a/a'], objectName: 'shared.api.example.com' },
        {
          hostname: 'shop.example.com',
          routes: ['team-a/a', 'team-b/b'],
          objectName: 'shared.shop.example.com',
        },
      ],
      outside: [],
    },
    {
      reason: 'hostnames outside the zone reported, not planned',
      served: [
        { route: 'a/a', hostname: 'shop.example.com' },
        { route: 'c/c', hostname: 'shop.example.org' },
      ],
      records: [{ hostname: 'shop.example.com', routes: ['a/a'], objectName: 'shared.shop.example.com' }],
      outside: [{ hostname: 'shop.example.org', routes: ['c/c'] }],
    },
    {
      reason: 'the same hostname in another case is one record',
      served: [
        { route: 'a/a', hostname: 'Shop.example.com' },
        { route: 'a/a', hostname: 'shop.example.com' },
      ],
      records: [{ hostname: 'shop.example.com', routes: ['a/a'], objectName: 'shared.shop.example.com' }],
      outside: [],
    },
    {
      reason: 'a wildcard is its own record',
      served: [{ route: 'a/a', hostname: '*.example.com' }],
      records: [{ hostname: '*.example.com', routes: ['a/a'], objectName: 'shared.wildcard.example.com' }],
      outside: [],
    },
    {
      reason: 'no served hostname: no record',
      served: [],
      records: [],
      outside: [],
    },
  ])('$reason', ({ served, records, outside }) => {
    const plan = planGatewayDns('shared', 'Example.com.', served);
    expect(plan.zone).toBe('example.com');
    expect(plan.records).toEqual(records);
    expect(plan.outside).toEqual(outside);
  });

  it('a wildcard whose name a plain hostname has is the one renamed, so the plain one keeps its name', () => {
    const plan = planGatewayDns('shared', 'example.com', [
      { route: 'a/a', hostname: '*.example.com' },
      { route: 'a/a', hostname: 'wildcard.example.com' },
    ]);
    const names = new Map(plan.records.map((r) => [r.hostname, r.objectName]));
    expect(names.get('wildcard.example.com')).toBe('shared.wildcard.example.com');
    expect(names.get('*.example.com')).toMatch(/^shared\.wildcard\.example\.com-[0-9a-f]{10}$/);
  });
});

describe('gatewayDnsRecord', () => {
  it('an alias A record by FQDN in the zone by name, labelled and owned by the Gateway', () => {
    const gw = gateway({ [dnsZoneAnnotation]: 'example.com' });
    const body = gatewayDnsRecord(
      gw,
      'example.com',
      { hostname: 'shop.example.com', routes: ['a/a'], objectName: 'shared.shop.example.com' },
      { dnsName: 'lb-1.us-east-1.elb.amazonaws.com', hostedZoneId: 'Z35SXDOTRQ7X7K' },
    );
    expect(body).toEqual({
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'DNSRecord',
      metadata: {
        name: 'shared.shop.example.com',
        namespace: 'infra',
        labels: { [gatewayRecordLabel]: 'shared' },
        ownerReferences: [ownerRef('shared', 'uid-1')],
      },
      spec: {
        zoneName: 'example.com',
        name: 'shop.example.com.',
        type: 'A',
        aliasTarget: {
          dnsName: 'lb-1.us-east-1.elb.amazonaws.com',
          hostedZoneId: 'Z35SXDOTRQ7X7K',
          evaluateTargetHealth: false,
        },
      },
    });
  });
});

describe('madeByGateway', () => {
  const label = { [gatewayRecordLabel]: 'shared' };
  it.each([
    {
      reason: 'label and controller reference of the Gateway’s uid',
      meta: { labels: label, ownerReferences: [ownerRef('shared', 'uid-1')] },
      uid: 'uid-1',
      want: true,
    },
    {
      reason: 'the label alone is not enough',
      meta: { labels: label },
      uid: 'uid-1',
      want: false,
    },
    {
      reason: 'the reference alone is not enough',
      meta: { ownerReferences: [ownerRef('shared', 'uid-1')] },
      uid: 'uid-1',
      want: false,
    },
    {
      reason: 'another uid: a Gateway of the same name before this one',
      meta: { labels: label, ownerReferences: [ownerRef('shared', 'uid-0')] },
      uid: 'uid-1',
      want: false,
    },
    {
      reason: 'a Gateway that is gone: any uid of that name',
      meta: { labels: label, ownerReferences: [ownerRef('shared', 'uid-0')] },
      uid: undefined,
      want: true,
    },
    {
      reason: 'a reference that is not the controller',
      meta: { labels: label, ownerReferences: [ownerRef('shared', 'uid-1', false)] },
      uid: 'uid-1',
      want: false,
    },
    {
      reason: 'a label naming another Gateway',
      meta: { labels: { [gatewayRecordLabel]: 'other' }, ownerReferences: [ownerRef('shared', 'uid-1')] },
      uid: 'uid-1',
      want: false,
    },
  ])('$reason', ({ meta, uid, want }) => {
    expect(madeByGateway(record(meta), 'infra', 'shared', uid)).toBe(want);
  });

  it('another namespace is not the Gateway’s', () => {
    const r = record({
      namespace: 'other',
      labels: { [gatewayRecordLabel]: 'shared' },
      ownerReferences: [ownerRef('shared', 'uid-1')],
    });
    expect(madeByGateway(r, 'infra', 'shared', 'uid-1')).toBe(false);
  });
});

describe('recordHostname', () => {
  it.each([
    { reason: 'relative name in a zone by name', spec: { name: 'shop' }, want: 'shop.example.com' },
    { reason: 'fully qualified', spec: { name: 'Shop.example.com.' }, want: 'shop.example.com' },
    { reason: 'fully qualified without dot', spec: { name: 'shop.example.com' }, want: 'shop.example.com' },
    { reason: 'the apex', spec: { name: '@' }, want: 'example.com' },
    {
      reason: 'a zone by ID and a relative name: unknown until looked at',
      spec: { name: 'shop' },
      zoneId: 'Z1',
      want: undefined,
    },
  ])('$reason', ({ spec, zoneId, want }) => {
    expect(recordHostname(record({}, spec, zoneId))).toBe(want);
  });

  it('the status fqdn when there', () => {
    const r = record({}, { name: 'shop' }, 'Z1');
    r.status = { fqdn: 'shop.example.net.' };
    expect(recordHostname(r)).toBe('shop.example.net');
  });
});

describe('recordState', () => {
  const at = (type: string, status: 'True' | 'False', reason: string, message = '', gen = 1) => ({
    type,
    status,
    reason,
    message,
    lastTransitionTime: '2026-01-01T00:00:00Z',
    observedGeneration: gen,
  });
  it.each([
    {
      reason: 'Ready at its generation',
      conditions: [at('Ready', 'True', 'Available'), at('Synced', 'True', 'ReconcileSuccess')],
      want: { state: 'ready' },
    },
    {
      reason: 'Ready of an older generation is pending',
      conditions: [at('Ready', 'True', 'Available', '', 0)],
      want: { state: 'pending', message: 'Available: ' },
    },
    {
      reason: 'a TeamPolicy refusal is failed, with its reason and message',
      conditions: [
        at('Ready', 'False', 'Pending'),
        at('Synced', 'False', 'GuardrailViolation', 'zone example.com is not allowed'),
      ],
      want: { state: 'failed', message: 'GuardrailViolation: zone example.com is not allowed' },
    },
    {
      reason: 'not looked at yet',
      conditions: [],
      want: { state: 'pending', message: 'not looked at yet' },
    },
  ])('$reason', ({ conditions, want }) => {
    const r = record({ generation: 1 });
    r.status = { conditions };
    expect(recordState(r)).toEqual(want);
  });
});

describe('dnsVerdict', () => {
  const plan = planGatewayDns('shared', 'example.com', [
    { route: 'HTTPRoute a/a', hostname: 'a.example.com' },
    { route: 'HTTPRoute b/b', hostname: 'b.example.com' },
    { route: 'HTTPRoute c/c', hostname: 'c.example.org' },
    { route: 'GRPCRoute c/g', hostname: 'c.example.org' },
  ]);
  const inZone = planGatewayDns('shared', 'example.com', [
    { route: 'a/a', hostname: 'a.example.com' },
    { route: 'b/b', hostname: 'b.example.com' },
  ]);
  const ready: RecordState = { state: 'ready' };
  it.each([
    {
      reason: 'every hostname in the zone and Ready',
      p: inZone,
      states: [
        ['a.example.com', ready],
        ['b.example.com', ready],
      ] as [string, RecordState][],
      want: { status: 'True', reason: DnsReason.Ready },
      mentions: ['2 record(s) in zone example.com'],
    },
    {
      reason: 'a hostname outside the zone is named with its route',
      p: plan,
      states: [
        ['a.example.com', ready],
        ['b.example.com', ready],
      ] as [string, RecordState][],
      want: { status: 'False', reason: DnsReason.HostnamesOutsideZone },
      mentions: ['c.example.org (GRPCRoute c/g, HTTPRoute c/c)'],
    },
    {
      reason: 'a refused or conflicting record comes first, and the rest is still said',
      p: plan,
      states: [['a.example.com', { state: 'failed', message: 'Conflict: owned by x/y' }]] as [
        string,
        RecordState,
      ][],
      want: { status: 'False', reason: DnsReason.RecordsNotSynced },
      mentions: ['a.example.com: Conflict: owned by x/y', 'c.example.org', 'b.example.com (not made yet)'],
    },
    {
      reason: 'records not made yet are pending',
      p: inZone,
      states: [] as [string, RecordState][],
      want: { status: 'False', reason: DnsReason.Pending },
      mentions: ['a.example.com (not made yet)'],
    },
    {
      reason: 'no hostname to publish is Ready',
      p: planGatewayDns('shared', 'example.com', []),
      states: [] as [string, RecordState][],
      want: { status: 'True', reason: DnsReason.Ready },
      mentions: ['no route hostname'],
    },
  ])('$reason', ({ p, states, want, mentions }) => {
    const v = dnsVerdict(p, new Map(states));
    expect(v).toMatchObject(want);
    for (const m of mentions) expect(v.message).toContain(m);
  });
});
