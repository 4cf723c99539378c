// DNSRecord's part of a TeamPolicy: which hosted zones and which names a namespace may write.
import type { GuardrailSection, Permission, TeamPolicy } from '../../apis/teampolicy.ts';
import { permission } from '../../apis/teampolicy.ts';
import { arr, obj, str } from '../../apis/schema.ts';
import { bareZoneId, normalizeName } from '../../providers/route53/names.ts';
import type { HostedZone } from '../../providers/route53/zones.ts';
import { forbidden } from '../../tenancy/connector.ts';
import { zoneIdPattern, zoneNamePattern, type DNSRecordSpec } from './api.ts';

/** spec.guardrails.dnsRecords. */
export interface DnsRecordGuardrails {
  zones?: { id?: string; name?: string }[];
  names?: string[];
  delegations?: Permission;
}

export const dnsRecordGuardrailSection: GuardrailSection = {
  key: 'dnsRecords',
  schema: obj('What DNSRecords in the selected namespaces may write.', {
    zones: arr(
      'The hosted zones they may write to, by ID or by name (absent: any zone the identity reaches).',
      obj(
        'A hosted zone: set id or name.',
        {
          id: str('Hosted zone ID, e.g. Z0123456789ABCDEFGHIJ.', { pattern: zoneIdPattern }),
          name: str('Hosted zone name, e.g. example.com (every zone of that name).', {
            pattern: zoneNamePattern,
            maxLength: 255,
          }),
        },
        {
          'x-kubernetes-validations': [
            { rule: 'has(self.id) != has(self.name)', message: 'set exactly one of id and name' },
          ],
        },
      ),
      { maxItems: 64 },
    ),
    names: arr(
      'The record names they may write: each entry is a domain, and a name is allowed when it is that domain or under it (payments.example.com allows payments.example.com, api.payments.example.com, *.payments.example.com and _acme-challenge.payments.example.com, not admin.example.com). Absent: any name in the allowed zones.',
      str('A domain, e.g. payments.example.com.', { pattern: zoneNamePattern, maxLength: 255 }),
      { maxItems: 64 },
    ),
    delegations: permission(
      'Whether NS records below a zone apex (delegating a subdomain to other name servers) may be written.',
    ),
  }),
};

/** The guardrails section of a policy, or undefined. Pure. */
export function dnsGuardrailsOf(policy: TeamPolicy): DnsRecordGuardrails | undefined {
  return policy.spec.guardrails?.[dnsRecordGuardrailSection.key] as DnsRecordGuardrails | undefined;
}

/** True when `fqdn` is `domain` or under it (label boundary; case and trailing dot ignored). Pure. */
export function nameWithin(fqdn: string, domain: string): boolean {
  const n = normalizeName(fqdn);
  const d = normalizeName(domain);
  return n === d || n.endsWith(`.${d}`);
}

/**
 * Checks a record against the policy's DNS guardrails, once its zone and full name are known.
 * Throws ForbiddenError naming the policy and the field. Pure.
 */
export function checkDnsRecord(
  policy: TeamPolicy,
  spec: DNSRecordSpec,
  zone: HostedZone,
  fqdn: string,
): void {
  const g = dnsGuardrailsOf(policy);
  if (g === undefined) return;
  const zones = g.zones;
  if (zones !== undefined) {
    const allowed = zones.some((z) =>
      z.id !== undefined
        ? bareZoneId(z.id) === bareZoneId(zone.id)
        : normalizeName(z.name ?? '') === zone.name,
    );
    if (!allowed) {
      const list = zones.map((z) => z.id ?? z.name ?? '').join(', ');
      throw forbidden(
        policy,
        spec.zoneId !== undefined ? 'spec.zoneId' : 'spec.zoneName',
        `hosted zone ${zone.name.replace(/\.$/, '')} (${bareZoneId(zone.id)}) is not among the zones this namespace may write (${list})`,
        'the zone is fixed at create: delete this DNSRecord and create it in an allowed zone, or ask the platform team to add the zone to spec.guardrails.dnsRecords.zones',
      );
    }
  }
  const names = g.names;
  if (names !== undefined && !names.some((d) => nameWithin(fqdn, d))) {
    throw forbidden(
      policy,
      'spec.name',
      `${fqdn.replace(/\.$/, '')} is not within the names this namespace may write (${names.join(', ')})`,
      'the name is fixed at create: delete this DNSRecord and create one under an allowed name, or ask the platform team to add a domain to spec.guardrails.dnsRecords.names',
    );
  }
  if (spec.type === 'NS' && fqdn !== zone.name && g.delegations !== 'Allowed') {
    throw forbidden(
      policy,
      'spec.type',
      `an NS record at ${fqdn.replace(/\.$/, '')} delegates a subdomain to other name servers, which this namespace may not do (spec.guardrails.dnsRecords.delegations is not Allowed)`,
      'delete this DNSRecord, or ask the platform team to set spec.guardrails.dnsRecords.delegations: Allowed',
    );
  }
}
