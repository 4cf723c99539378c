// DNSRecord's part of a TeamPolicy: which hosted zones and which names a namespace may write.
import type { GuardrailSection, Permission, TeamPolicy } from '../../apis/teampolicy.ts';
import { permission } from '../../apis/teampolicy.ts';
import { arr, obj, str } from '../../apis/schema.ts';
import { bareZoneId, normalizeName } from '../../providers/route53/names.ts';
import type { HostedZone } from '../../providers/route53/zones.ts';
import {
  celSection,
  celFqdn,
  celNoDot,
  celString,
  forbidsMessage,
  type KindAdmission,
} from '../../tenancy/admission.ts';
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

/** CEL: the policy's dns section, as an optional. */
const DNS = celSection(dnsRecordGuardrailSection.key);

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

const zoneList = "variables.dnsZones.map(z, has(z.id) ? z.id : z.name).join(', ')";
const bareId = (id: string) => `(${id}.startsWith('/hostedzone/') ? ${id}.substring(12) : ${id})`;

/**
 * The DNS guardrails at admission, for what the object alone decides: the zone when the policy lists
 * zones the same way the object names its zone (by name, or by ID; a mix needs Route 53: pass), the
 * record name when its full name is knowable (fully qualified with a trailing dot, or with
 * spec.zoneName), and NS records below the apex (needs spec.zoneName). As {@link checkDnsRecord}.
 */
export const dnsRecordAdmission: KindAdmission = {
  variables: [
    { name: 'dnsZones', expression: `${DNS}.?zones.orValue([])` },
    { name: 'dnsNames', expression: `${DNS}.?names.orValue([])` },
    // The zone's canonical name when spec.zoneName gives it, else ''.
    {
      name: 'zone',
      expression: `has(object.spec.zoneName) ? ${celFqdn('object.spec.zoneName')} : ''`,
    },
    { name: 'recordName', expression: 'object.spec.name.trim().lowerAscii()' },
    // The record's full name as recordFqdn computes it, else '' (relative to a zone known by ID only).
    {
      name: 'fqdn',
      expression: [
        "variables.recordName == '@' ? variables.zone :",
        "variables.recordName.endsWith('.') ? variables.recordName :",
        "variables.zone == '' ? '' :",
        "variables.recordName + '.' == variables.zone || (variables.recordName + '.').endsWith('.' + variables.zone) ? variables.recordName + '.' :",
        "variables.recordName + '.' + variables.zone",
      ].join('\n'),
    },
    // Known, and inside the zone when the zone is known (outside, the reconcile refuses it anyway).
    {
      name: 'fqdnKnown',
      expression:
        "variables.fqdn != '' && (variables.zone == '' || variables.fqdn == variables.zone || variables.fqdn.endsWith('.' + variables.zone))",
    },
  ],
  validations: [
    {
      expression: [
        `!${DNS}.?zones.hasValue() || !has(object.spec.zoneName) ||`,
        'variables.dnsZones.exists(z, has(z.id)) ||',
        `variables.dnsZones.exists(z, has(z.name) && ${celFqdn('z.name')} == variables.zone)`,
      ].join('\n'),
      messageExpression: forbidsMessage(
        'spec.zoneName',
        `'hosted zone ' + ${celNoDot('variables.zone')} + ' is not among the zones this namespace may write (' + ${zoneList} + ')'`,
        celString(
          '; the zone is fixed at create: delete this DNSRecord and create it in an allowed zone, or ask the platform team to add the zone to spec.guardrails.dnsRecords.zones',
        ),
      ),
      message:
        'a TeamPolicy forbids spec.zoneName: the hosted zone is not among the zones this namespace may write',
    },
    {
      expression: [
        `!${DNS}.?zones.hasValue() || !has(object.spec.zoneId) ||`,
        'variables.dnsZones.exists(z, has(z.name)) ||',
        `variables.dnsZones.exists(z, has(z.id) && ${bareId('z.id')} == ${bareId('object.spec.zoneId')})`,
      ].join('\n'),
      messageExpression: forbidsMessage(
        'spec.zoneId',
        `'hosted zone ' + ${bareId('object.spec.zoneId')} + ' is not among the zones this namespace may write (' + ${zoneList} + ')'`,
        celString(
          '; the zone is fixed at create: delete this DNSRecord and create it in an allowed zone, or ask the platform team to add the zone to spec.guardrails.dnsRecords.zones',
        ),
      ),
      message:
        'a TeamPolicy forbids spec.zoneId: the hosted zone is not among the zones this namespace may write',
    },
    {
      expression: [
        `!${DNS}.?names.hasValue() || !variables.fqdnKnown ||`,
        `variables.dnsNames.exists(d, variables.fqdn == ${celFqdn('d')} || variables.fqdn.endsWith('.' + ${celFqdn('d')}))`,
      ].join('\n'),
      messageExpression: forbidsMessage(
        'spec.name',
        `${celNoDot('variables.fqdn')} + ' is not within the names this namespace may write (' + variables.dnsNames.join(', ') + ')'`,
        celString(
          '; the name is fixed at create: delete this DNSRecord and create one under an allowed name, or ask the platform team to add a domain to spec.guardrails.dnsRecords.names',
        ),
      ),
      message: 'a TeamPolicy forbids spec.name: the name is not within the names this namespace may write',
    },
    {
      expression: [
        `!${DNS}.hasValue() || object.spec.type != 'NS' || variables.zone == '' || !variables.fqdnKnown ||`,
        `variables.fqdn == variables.zone || ${DNS}.?delegations.orValue('Forbidden') == 'Allowed'`,
      ].join('\n'),
      messageExpression: forbidsMessage(
        'spec.type',
        `'an NS record at ' + ${celNoDot('variables.fqdn')}`,
        celString(
          ' delegates a subdomain to other name servers, which this namespace may not do (spec.guardrails.dnsRecords.delegations is not Allowed); delete this DNSRecord, or ask the platform team to set spec.guardrails.dnsRecords.delegations: Allowed',
        ),
      ),
      message:
        'a TeamPolicy forbids spec.type: an NS record below the zone apex delegates a subdomain (spec.guardrails.dnsRecords.delegations is not Allowed)',
    },
  ],
};
