import { describe, expect, it } from 'vitest';
import type { TeamPolicy } from '../../src/apis/teampolicy.ts';
import type { DNSRecordSpec } from '../../src/kinds/dnsrecord/api.ts';
import {
  checkDnsRecord,
  nameWithin,
  type DnsRecordGuardrails,
} from '../../src/kinds/dnsrecord/guardrails.ts';
import { ForbiddenError } from '../../src/runtime/errors.ts';

const zone = { id: 'Z111', name: 'example.com.', private: false };
const policy = (dnsRecords: DnsRecordGuardrails): TeamPolicy => ({
  metadata: { name: 'payments' },
  spec: { namespaces: { names: ['payments'] }, guardrails: { dnsRecords } },
});
const spec = (name: string, type: DNSRecordSpec['type'] = 'A'): DNSRecordSpec => ({
  zoneName: 'example.com',
  name,
  type,
  records: ['192.0.2.1'],
});
const check = (p: TeamPolicy, s: DNSRecordSpec, fqdn: string): string | undefined => {
  try {
    checkDnsRecord(p, s, zone, fqdn);
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(ForbiddenError);
    return (err as Error).message;
  }
};

describe('nameWithin', () => {
  it('respects label boundaries, case and the trailing dot', () => {
    expect(nameWithin('api.payments.example.com.', 'payments.example.com')).toBe(true);
    expect(nameWithin('PAYMENTS.example.com', 'payments.example.com.')).toBe(true);
    expect(nameWithin('evilpayments.example.com.', 'payments.example.com')).toBe(false);
    expect(nameWithin('example.com.', 'payments.example.com')).toBe(false);
  });
});

describe('checkDnsRecord', () => {
  const p = policy({ names: ['payments.example.com'] });
  it('allows names within the suffixes, wildcards and challenges of the team’s own names included', () => {
    expect(check(p, spec('api.payments'), 'api.payments.example.com.')).toBeUndefined();
    expect(check(p, spec('*.payments'), '*.payments.example.com.')).toBeUndefined();
    expect(
      check(p, spec('_acme-challenge.payments', 'TXT'), '_acme-challenge.payments.example.com.'),
    ).toBeUndefined();
  });
  it('refuses another team’s names, their wildcards and DNS-01 challenges', () => {
    const want =
      'TeamPolicy payments forbids spec.name: login.admin.example.com is not within the names this namespace may write (payments.example.com); the name is fixed at create: delete this DNSRecord and create one under an allowed name, or ask the platform team to add a domain to spec.guardrails.dnsRecords.names';
    expect(check(p, spec('login.admin'), 'login.admin.example.com.')).toBe(want);
    expect(check(p, spec('*.admin'), '*.admin.example.com.')).toMatch(
      /forbids spec.name: \*\.admin\.example\.com/,
    );
    expect(check(p, spec('_acme-challenge.admin', 'TXT'), '_acme-challenge.admin.example.com.')).toMatch(
      /forbids spec.name: _acme-challenge\.admin\.example\.com is not within/,
    );
  });
  it('refuses a zone not in the list, by id or by name', () => {
    expect(check(policy({ zones: [{ id: 'Z999' }] }), spec('www'), 'www.example.com.')).toBe(
      'TeamPolicy payments forbids spec.zoneName: hosted zone example.com (Z111) is not among the zones this namespace may write (Z999); the zone is fixed at create: delete this DNSRecord and create it in an allowed zone, or ask the platform team to add the zone to spec.guardrails.dnsRecords.zones',
    );
    expect(
      check(policy({ zones: [{ id: '/hostedzone/Z111' }] }), spec('www'), 'www.example.com.'),
    ).toBeUndefined();
    expect(
      check(policy({ zones: [{ name: 'Example.com.' }] }), spec('www'), 'www.example.com.'),
    ).toBeUndefined();
  });
  it('refuses an NS delegation unless the policy allows delegations', () => {
    expect(check(p, spec('sub.payments', 'NS'), 'sub.payments.example.com.')).toMatch(
      /^TeamPolicy payments forbids spec.type: an NS record at sub.payments.example.com delegates a subdomain/,
    );
    expect(
      check(
        policy({ names: ['payments.example.com'], delegations: 'Allowed' }),
        spec('sub.payments', 'NS'),
        'sub.payments.example.com.',
      ),
    ).toBeUndefined();
  });
  it('limits nothing without a dnsRecords section', () => {
    const none: TeamPolicy = { metadata: { name: 'x' }, spec: { namespaces: { names: ['x'] } } };
    expect(check(none, spec('sub', 'NS'), 'sub.example.com.')).toBeUndefined();
  });
});
