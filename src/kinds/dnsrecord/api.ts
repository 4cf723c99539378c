import type { ManagedObject, ManagedSpec, ManagedStatus } from '../../apis/managed.ts';
import type { ResourceType } from '../../apis/meta.ts';
import { managedSpecProperties, managedSpecRules, managedStatusProperties } from '../../apis/common.ts';
import { apiGroup, apiVersion, managedCrd, type CrdManifest } from '../../apis/crd.ts';
import { arr, bool, immutable, int, obj, str, type Schema } from '../../apis/schema.ts';
import { managedFieldContract, type FieldContract } from '../../apis/fieldContract.ts';

/** Record types Skylift manages. */
export const dnsRecordTypes = ['A', 'AAAA', 'CNAME', 'TXT', 'MX', 'SRV', 'CAA', 'NS', 'PTR'] as const;
export type DNSRecordType = (typeof dnsRecordTypes)[number];

/** An alias target: a load balancer (or any alias-capable target) given directly, or a MyIngress in the same namespace. */
export interface AliasTargetSpec {
  dnsName?: string;
  hostedZoneId?: string;
  evaluateTargetHealth?: boolean;
  myIngressRef?: { name: string };
}

export interface DNSRecordSpec extends ManagedSpec {
  zoneId?: string;
  zoneName?: string;
  name: string;
  type: DNSRecordType;
  ttl?: number;
  records?: string[];
  aliasTarget?: AliasTargetSpec;
  setIdentifier?: string;
  weight?: number;
}

/** What Skylift reports of a DNSRecord's record set (the status schema below lists the same fields). */
export interface DNSRecordStatus extends ManagedStatus {
  fqdn?: string | undefined;
  zoneId?: string | undefined;
  changeId?: string | undefined;
  /** PENDING or INSYNC. */
  changeStatus?: string | undefined;
  aliasDNSName?: string | undefined;
}

export type DNSRecord = ManagedObject<DNSRecordSpec, DNSRecordStatus>;

export const dnsRecordType: ResourceType = {
  group: apiGroup,
  version: apiVersion,
  plural: 'dnsrecords',
  kind: 'DNSRecord',
  namespaced: true,
};

const label = '[a-zA-Z0-9_]([a-zA-Z0-9_-]{0,61}[a-zA-Z0-9_])?';
/** A record name: `@` (apex), a relative name, or a fully qualified one; `*` only as the leftmost label. */
export const recordNamePattern = `^(@|\\*|(\\*\\.)?${label}(\\.${label})*\\.?)$`;
export const zoneNamePattern = `^${label}(\\.${label})*\\.?$`;
export const zoneIdPattern = '^(/hostedzone/)?[A-Z0-9]{1,32}$';
const hostnameRegex = `^${label}(\\\\.${label})*\\\\.?$`;

const ipFamily = (t: string, family: number): { rule: string; message: string } => ({
  rule: `self.type != '${t}' || !has(self.records) || self.records.all(r, isIP(r) && ip(r).family() == ${family})`,
  message: `${t} records must be IPv${family} addresses, e.g. ${family === 4 ? '192.0.2.10' : '2001:db8::10'}`,
});
const valueShape = (t: string, regex: string, message: string): { rule: string; message: string } => ({
  rule: `self.type != '${t}' || !has(self.records) || self.records.all(r, r.matches('${regex}'))`,
  message,
});

/**
 * Route 53 takes XML, which cannot carry control characters (nor U+FFFE/U+FFFF)
 * at all: such a value fails the whole zone's change batch, so refuse it here.
 */
const noControlCharacters = (what: string, hint = ''): { rule: string; message: string } => ({
  rule: "!self.matches('[\\\\x00-\\\\x1F\\\\x7F\\\\x{FFFE}\\\\x{FFFF}]')",
  message: `${what} cannot contain control characters (newline, tab, NUL, …)${hint}`,
});

const apexName =
  "self.name == '@' || (has(self.zoneName) && [self.name.lowerAscii(), self.name.lowerAscii() + '.'].exists(n, n == self.zoneName.lowerAscii() || n == self.zoneName.lowerAscii() + '.'))";

const spec: Schema = obj(
  'The desired Route 53 record set.',
  {
    zoneId: str(
      'Hosted zone ID, e.g. Z0123456789ABCDEFGHIJ. Set exactly one of zoneId and zoneName. Immutable.',
      {
        pattern: zoneIdPattern,
        'x-kubernetes-validations': [immutable('zoneId')],
      },
    ),
    zoneName: str(
      'Hosted zone name, e.g. example.com; Skylift looks the zone up (a name shared by a public and a private zone is an error: use zoneId). Immutable.',
      { pattern: zoneNamePattern, maxLength: 253, 'x-kubernetes-validations': [immutable('zoneName')] },
    ),
    name: str(
      'Record name: relative to the zone (www), fully qualified (www.example.com or www.example.com.), or @ for the zone apex. * is allowed as the leftmost label. Immutable.',
      { pattern: recordNamePattern, maxLength: 253, 'x-kubernetes-validations': [immutable('name')] },
    ),
    type: str('Record type. Immutable.', {
      enum: [...dnsRecordTypes],
      'x-kubernetes-validations': [immutable('type')],
    }),
    ttl: int('Time to live in seconds (ignored for aliases, whose TTL is the target’s).', {
      minimum: 0,
      maximum: 2147483647,
      default: 300,
    }),
    records: arr(
      'Record values, in the type’s presentation format: 192.0.2.1 (A), 2001:db8::1 (AAAA), host.example.com (CNAME, NS, PTR), "text" or text (TXT; quoted for you when unquoted), 10 mail.example.com (MX), 10 5 443 host.example.com (SRV), 0 issue "letsencrypt.org" (CAA). Set exactly one of records and aliasTarget.',
      str('One value.', {
        minLength: 1,
        maxLength: 4000,
        'x-kubernetes-validations': [
          noControlCharacters(
            'record values',
            '; in a TXT value write them as \\ddd octal escapes, e.g. \\012 for a newline',
          ),
        ],
      }),
      { minItems: 1, maxItems: 100 },
    ),
    aliasTarget: obj(
      'A Route 53 alias instead of records (A and AAAA only): either dnsName and hostedZoneId, or myIngressRef to follow a MyIngress’s load balancer.',
      {
        dnsName: str('DNS name of the alias target, e.g. my-lb-123.us-east-1.elb.amazonaws.com.', {
          pattern: zoneNamePattern,
          maxLength: 253,
        }),
        hostedZoneId: str(
          'Hosted zone ID of the alias target (for a load balancer: its canonical hosted zone ID).',
          { pattern: zoneIdPattern },
        ),
        evaluateTargetHealth: bool('Whether Route 53 checks the target’s health.', { default: false }),
        myIngressRef: obj(
          'A MyIngress in the same namespace; the alias follows its status.dnsName and status.canonicalHostedZoneId.',
          { name: str('Name of the MyIngress.', { minLength: 1, maxLength: 253 }) },
          { required: ['name'] },
        ),
      },
      {
        'x-kubernetes-validations': [
          {
            rule: 'has(self.myIngressRef) ? !has(self.dnsName) && !has(self.hostedZoneId) : has(self.dnsName) && has(self.hostedZoneId)',
            message: 'set either myIngressRef, or both dnsName and hostedZoneId',
          },
        ],
      },
    ),
    setIdentifier: str(
      'Identifies one of several weighted record sets with the same name and type. Set together with weight. Immutable.',
      {
        minLength: 1,
        maxLength: 128,
        'x-kubernetes-validations': [immutable('setIdentifier'), noControlCharacters('setIdentifier')],
      },
    ),
    weight: int(
      'Relative weight of this record set among those with the same name and type (0-255). Set together with setIdentifier.',
      {
        minimum: 0,
        maximum: 255,
      },
    ),
    ...managedSpecProperties,
  },
  {
    required: ['name', 'type'],
    'x-kubernetes-validations': [
      ...managedSpecRules,
      { rule: 'has(self.zoneId) != has(self.zoneName)', message: 'set exactly one of zoneId and zoneName' },
      {
        rule: 'has(self.records) != has(self.aliasTarget)',
        message: 'set exactly one of records and aliasTarget',
      },
      {
        rule: "!has(self.aliasTarget) || self.type in ['A', 'AAAA']",
        message: 'aliasTarget is only for A and AAAA records',
      },
      { rule: `!(self.type == 'CNAME' && (${apexName}))`, message: 'a CNAME cannot be at the zone apex' },
      {
        rule: 'has(self.setIdentifier) == has(self.weight)',
        message: 'set setIdentifier and weight together',
      },
      ipFamily('A', 4),
      ipFamily('AAAA', 6),
      {
        rule: "self.type != 'CNAME' || !has(self.records) || size(self.records) == 1",
        message: 'a CNAME has exactly one value',
      },
      valueShape('CNAME', hostnameRegex, 'CNAME values are host names, e.g. app.example.com'),
      valueShape('NS', hostnameRegex, 'NS values are host names, e.g. ns-1.awsdns-01.org'),
      valueShape('PTR', hostnameRegex, 'PTR values are host names, e.g. host.example.com'),
      valueShape(
        'MX',
        `^[0-9]{1,5} ${hostnameRegex.slice(1)}`,
        "MX values are '<priority> <host>', e.g. '10 mail.example.com'",
      ),
      valueShape(
        'SRV',
        `^[0-9]{1,5} [0-9]{1,5} [0-9]{1,5} ${hostnameRegex.slice(1)}`,
        "SRV values are '<priority> <weight> <port> <target>', e.g. '10 5 443 host.example.com'",
      ),
      valueShape(
        'CAA',
        '^[0-9]{1,3} (issue|issuewild|iodef|issuemail) \\"[^\\"]*\\"$',
        'CAA values are \'<flags> <tag> "<value>"\', e.g. \'0 issue "letsencrypt.org"\'',
      ),
      {
        rule: '(has(self.zoneId) == has(oldSelf.zoneId)) && (has(self.zoneName) == has(oldSelf.zoneName)) && (has(self.setIdentifier) == has(oldSelf.setIdentifier))',
        message: 'the zone and setIdentifier cannot be added, removed or switched after creation',
      },
    ],
  },
);

const status: Schema = obj('What Skylift observed in Route 53.', {
  fqdn: str('Fully qualified record name, with the trailing dot.'),
  zoneId: str('ID of the hosted zone holding the record.'),
  changeId: str('ID of the last Route 53 change that wrote this record.'),
  changeStatus: str(
    'PENDING until Route 53 has propagated the last change to its name servers, then INSYNC.',
  ),
  aliasDNSName: str('The alias target this record points at (resolved from myIngressRef when used).'),
  ...managedStatusProperties,
});

/** The dnsrecord CRD. Pure. */
export function dnsRecordCrd(): CrdManifest {
  return managedCrd({
    type: dnsRecordType,
    shortName: 'dnsr',
    description: 'A Route 53 record set managed by Skylift.',
    columns: [
      { name: 'Type', type: 'string', jsonPath: '.spec.type' },
      { name: 'FQDN', type: 'string', jsonPath: '.status.fqdn' },
    ],
    spec,
    status,
  });
}

const upsert = 'ChangeResourceRecordSets UPSERT of the record set (with its ownership record)';

/** What becomes of each DNSRecord spec field after create (src/apis/fieldContract.ts). */
export const dnsRecordFieldContract: FieldContract = {
  zoneId: { fixed: 'a record set lives in one hosted zone' },
  zoneName: { fixed: 'a record set lives in one hosted zone' },
  name: { fixed: 'the name identifies the record set; another name is another DNSRecord' },
  type: { fixed: 'the type identifies the record set; another type is another DNSRecord' },
  setIdentifier: { fixed: 'the set identifier identifies a weighted record set' },
  ttl: { applied: `${upsert}; an alias has no TTL of its own (it is the target's)` },
  records: { applied: upsert },
  aliasTarget: { applied: upsert },
  weight: { applied: upsert },
  ...managedFieldContract,
};
