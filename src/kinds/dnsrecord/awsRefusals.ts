// What Route 53's terminal refusals mean for a DNSRecord's spec: the field and
// a fix that works. InvalidChangeBatch carries many refusals; its message
// patterns tell them apart. Rows are tried in order (most specific first); a
// refusal no row matches keeps AWS's words with generic advice
// (src/kinds/refusals.ts).
import { accessDenied, type Refusal, type RefusalTable } from '../refusals.ts';
import type { DNSRecordSpec } from './api.ts';

type Row = Refusal<DNSRecordSpec>;

/** Name, type and setIdentifier are fixed at create (CEL): nothing was created, so the object is made again. */
const recreate = (field: string, what: string): string =>
  `${field} is fixed at create, so delete this DNSRecord and create it again with ${what} (Route 53 changed nothing)`;

const presentation: Readonly<Record<string, string>> = {
  A: 'an IPv4 address, e.g. 192.0.2.10',
  AAAA: 'an IPv6 address, e.g. 2001:db8::10',
  CNAME: 'one host name, e.g. app.example.com',
  NS: 'host names, e.g. ns-1.awsdns-01.org',
  PTR: 'host names, e.g. host.example.com',
  MX: "'<priority> <host>', e.g. '10 mail.example.com'",
  SRV: "'<priority> <weight> <port> <host>', e.g. '10 5 443 host.example.com'",
  CAA: '\'<flags> <tag> "<value>"\', e.g. \'0 issue "letsencrypt.org"\'',
  TXT: 'text; unquoted text is quoted and split into 255-character strings for you',
};

const changeBatch = ['InvalidChangeBatch', 'InvalidInput'];

const rows: readonly Row[] = [
  {
    codes: changeBatch,
    message: /TXTRDataTooLong|character string (?:is )?too long|Value is too long/i,
    hint: (s) => ({
      field: 'spec.records',
      value: s.records,
      fix: 'a TXT string holds at most 255 characters: write the value unquoted (Skylift splits it into 255-character strings) or as several quoted strings, e.g. "first part" "second part"',
    }),
  },
  {
    codes: changeBatch,
    message: /Invalid Resource Record|FATAL problem|rdata/i,
    hint: (s) => ({
      field: 'spec.records',
      value: s.records,
      fix: `write each value of spec.records as a ${s.type} record's presentation form: ${presentation[s.type] ?? 'see docs/dnsrecord.md'}`,
    }),
  },
  {
    codes: changeBatch,
    message: /alias target|alias that targets|AliasTarget/i,
    hint: (s) =>
      s.aliasTarget?.myIngressRef !== undefined
        ? {
            field: 'spec.aliasTarget.myIngressRef',
            value: s.aliasTarget.myIngressRef.name,
            fix: 'name a MyIngress whose load balancer is Ready in this account (its status.dnsName and status.canonicalHostedZoneId are what the alias uses), or give spec.aliasTarget.dnsName and hostedZoneId instead',
          }
        : {
            field: 'spec.aliasTarget',
            value: s.aliasTarget,
            fix: "set spec.aliasTarget.dnsName to the target's DNS name and spec.aliasTarget.hostedZoneId to its canonical hosted zone ID (a load balancer's: aws elbv2 describe-load-balancers --query 'LoadBalancers[].[DNSName,CanonicalHostedZoneId]'), or use spec.aliasTarget.myIngressRef",
          },
  },
  {
    codes: changeBatch,
    message: /non-weighted set|weighted set|SetIdentifier .*(?:cannot|not permitted)/i,
    hint: (s) => ({
      field: 'spec.setIdentifier',
      value: s.setIdentifier,
      fix: `record sets of one name and type are either one plain set or all weighted (each with setIdentifier and weight): delete the other kind in the zone, or ${recreate('spec.setIdentifier', s.setIdentifier === undefined ? 'spec.setIdentifier and spec.weight set' : 'neither spec.setIdentifier nor spec.weight')}`,
    }),
  },
  {
    codes: changeBatch,
    message: /conflicting RRSet|not permitted at apex/i,
    hint: (s) => ({
      field: 'spec.name',
      value: s.name,
      fix: `a CNAME cannot share its name with other record types (nor stand at the zone apex): delete the conflicting record set, or ${recreate('spec.name', 'another name (or an A/AAAA alias via spec.aliasTarget)')}`,
    }),
  },
  {
    codes: changeBatch,
    message: /not permitted in zone|is not a subdomain|DNS name .* not permitted/i,
    hint: (s) => ({
      field: 'spec.name',
      value: s.name,
      fix: recreate('spec.name', `a name inside the zone ${JSON.stringify(s.zoneName ?? s.zoneId ?? '')}`),
    }),
  },
  {
    codes: [...changeBatch, 'InvalidDomainName'],
    message: /\bTTL\b|tTL/,
    hint: (s) => ({
      field: 'spec.ttl',
      value: s.ttl,
      fix: "set spec.ttl between 0 and 2147483647 seconds (e.g. 300); aliases take their target's TTL, so leave it at the default there",
    }),
  },
  {
    codes: changeBatch,
    message: /weight/i,
    hint: (s) => ({
      field: 'spec.weight',
      value: s.weight,
      fix: 'set spec.weight between 0 and 255, together with spec.setIdentifier',
    }),
  },
  {
    codes: changeBatch,
    message: /setIdentifier/i,
    hint: (s) => ({
      field: 'spec.setIdentifier',
      value: s.setIdentifier,
      fix: recreate('spec.setIdentifier', 'a value of 1 to 128 printable characters'),
    }),
  },
  {
    codes: changeBatch,
    message: /limit.*(?:record|resource record set)s?.*zone|records? per hosted zone/i,
    hint: () => ({
      subject: 'the hosted zone\'s "Records per hosted zone" quota is used up',
      fix: 'raise it in Service Quotas (aws service-quotas list-service-quotas --service-code route53) or delete record sets you no longer need',
    }),
  },
  {
    codes: ['InvalidDomainName'],
    hint: (s, f) =>
      s.aliasTarget?.dnsName !== undefined && f.message.includes(s.aliasTarget.dnsName)
        ? {
            field: 'spec.aliasTarget.dnsName',
            value: s.aliasTarget.dnsName,
            fix: 'set spec.aliasTarget.dnsName to a valid DNS name of the alias target',
          }
        : {
            field: 'spec.name',
            value: s.name,
            fix: recreate(
              'spec.name',
              'a valid DNS name: labels of letters, digits, - and _, at most 63 characters each',
            ),
          },
  },
  accessDenied(() => 'route53'),
];

/** DNSRecord's refusal table. */
export const dnsrecordRefusals: RefusalTable<DNSRecordSpec> = { service: 'Route 53', entries: rows };
