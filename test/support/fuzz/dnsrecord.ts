// DNSRecord specs for the fuzz test: valid records of every type in one
// zone, and mutations of them at the fields a user writes.
import fc from 'fast-check';
import { hostileString, injectionSamples, unicodeSamples } from './hostile.ts';
import { fuzzCases, pinned, type FuzzCase, type Mutation } from './mutate.ts';
import { compact, dnsLabel, hostName, ipv4, ipv6, printable } from './values.ts';

/** A record type and values that Route 53 and the DNSRecord API accept for it. */
const typedRecords: fc.Arbitrary<{ type: string; records: string[] }> = fc.oneof(
  fc.array(ipv4, { minLength: 1, maxLength: 4 }).map((records) => ({ type: 'A', records })),
  fc.array(ipv6, { minLength: 1, maxLength: 3 }).map((records) => ({ type: 'AAAA', records })),
  hostName.map((h) => ({ type: 'CNAME', records: [h] })),
  fc
    .array(
      printable(600, 1).filter((t) => !t.startsWith('"') && t.trim() !== ''),
      { minLength: 1, maxLength: 3 },
    )
    .map((records) => ({ type: 'TXT', records })),
  fc
    .array(
      fc.tuple(fc.nat(65535), hostName).map(([p, h]) => `${p} ${h}`),
      { minLength: 1, maxLength: 3 },
    )
    .map((records) => ({ type: 'MX', records })),
  fc
    .tuple(fc.nat(65535), fc.nat(65535), fc.integer({ min: 1, max: 65535 }), hostName)
    .map(([p, w, port, h]) => ({ type: 'SRV', records: [`${p} ${w} ${port} ${h}`] })),
  fc
    .tuple(fc.constantFrom(0, 128), fc.constantFrom('issue', 'issuewild', 'iodef'), dnsLabel)
    .map(([f, tag, v]) => ({
      type: 'CAA',
      records: [`${f} ${tag} "${tag === 'iodef' ? `mailto:${v}@example.net` : `${v}.example.net`}"`],
    })),
  fc.array(hostName, { minLength: 1, maxLength: 4 }).map((records) => ({ type: 'NS', records })),
  hostName.map((h) => ({ type: 'PTR', records: [h] })),
);

/**
 * A valid DNSRecord spec in `zoneName`: a relative, wildcard or fully
 * qualified name (never the apex for CNAME/NS), any type with values in its
 * presentation format, or an alias to a load balancer; sometimes weighted.
 */
export function validDnsRecordSpec(zoneName: string): fc.Arbitrary<Record<string, unknown>> {
  const name = fc.oneof(
    dnsLabel,
    dnsLabel.map((l) => `*.${l}`),
    fc.tuple(dnsLabel, dnsLabel).map(([a, b]) => `${a}.${b}`),
    dnsLabel.map((l) => `${l}.${zoneName}`),
  );
  const alias = fc.tuple(dnsLabel, fc.boolean()).map(([l, eth]) => ({
    type: 'A',
    aliasTarget: {
      dnsName: `${l}-123.us-east-1.elb.amazonaws.com`,
      hostedZoneId: 'Z35SXDOTRQ7X7K',
      evaluateTargetHealth: eth,
    },
  }));
  const weighted = fc.option(
    fc.tuple(printable(20, 1), fc.nat(255)).map(([setIdentifier, weight]) => ({ setIdentifier, weight })),
    { nil: undefined, freq: 4 },
  );
  return fc
    .tuple(
      name,
      fc.oneof({ weight: 5, arbitrary: typedRecords }, { weight: 1, arbitrary: alias }),
      fc.option(fc.integer({ min: 0, max: 2147483647 }), { nil: undefined }),
      weighted,
    )
    .map(([n, body, ttl, w]) => compact({ zoneName, name: n, ...body, ttl, ...w, deletionPolicy: 'Delete' }));
}

/** The DNSRecord fields the mutations attack. */
const paths: readonly (readonly (string | number)[])[] = [
  ['name'],
  ['type'],
  ['ttl'],
  ['records'],
  ['records', 0],
  ['records', 1],
  ['zoneName'],
  ['zoneId'],
  ['setIdentifier'],
  ['weight'],
  ['externalName'],
  ['aliasTarget'],
  ['aliasTarget', 'dnsName'],
  ['aliasTarget', 'hostedZoneId'],
  ['aliasTarget', 'evaluateTargetHealth'],
  ['deletionPolicy'],
  ['managementPolicy'],
];

/** Values that pass the loose per-type checks and carry a hostile payload past admission. */
const targeted: fc.Arbitrary<Mutation[]> = fc.oneof(
  // TXT takes any text: control characters, quotes, huge and non-ASCII values go to Route 53.
  fc
    .array(
      hostileString.filter((s) => s.length > 0 && s.length <= 4000),
      { minLength: 1, maxLength: 3 },
    )
    .map((records): Mutation[] => [
      { op: 'set', path: ['type'], value: 'TXT' },
      { op: 'set', path: ['records'], value: records },
      { op: 'delete', path: ['aliasTarget'] },
    ]),
  // A CAA value's quoted part is free text.
  fc.constantFrom(...injectionSamples, ...unicodeSamples).map((v): Mutation[] => [
    { op: 'set', path: ['type'], value: 'CAA' },
    { op: 'set', path: ['records'], value: [`0 issue "${v.replace(/"/g, '')}"`] },
    { op: 'delete', path: ['aliasTarget'] },
  ]),
  // externalName is free text up to 2048 characters.
  hostileString
    .filter((s) => s.length > 0 && s.length <= 2048)
    .map((v): Mutation[] => [{ op: 'set', path: ['externalName'], value: v }]),
  // setIdentifier is free text up to 128 characters.
  hostileString
    .filter((s) => s.length > 0 && s.length <= 128)
    .map((v): Mutation[] => [
      { op: 'set', path: ['setIdentifier'], value: v },
      { op: 'set', path: ['weight'], value: 1 },
    ]),
  // Pattern-valid names and zones that do not exist, are outside the zone, or are absurdly deep.
  fc
    .constantFrom('other.example.org.', 'a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z', '_dmarc', '-')
    .map((v): Mutation[] => [{ op: 'set', path: ['name'], value: v }]),
  fc
    .constantFrom('no-such-zone.example', 'com', 'example.com.evil', '_')
    .map((v): Mutation[] => [{ op: 'set', path: ['zoneName'], value: v }]),
  fc.constantFrom('ZNOSUCHZONE', '/hostedzone/Z0000000000000000000', 'Z').map((v): Mutation[] => [
    { op: 'set', path: ['zoneId'], value: v },
    { op: 'delete', path: ['zoneName'] },
  ]),
);

/** DNSRecord cases (valid, mutated, targeted) for records in `zoneName`. */
export function dnsRecordCases(zoneName: string): fc.Arbitrary<FuzzCase> {
  return fuzzCases(validDnsRecordSpec(zoneName), paths, [], targeted);
}

/** DNSRecord inputs tried in every run: bugs the fuzzer found, and each injection category where the API takes free text. */
export function dnsRecordPinned(zoneName: string): FuzzCase[] {
  const base = (name: string): Record<string, unknown> => ({ zoneName, name, type: 'TXT', records: ['x'] });
  return [
    pinned(
      base('pinned-inj'),
      'injections in TXT values',
      [
        {
          op: 'set',
          path: ['records'],
          value: ["'; DROP TABLE users; --", '$(rm -rf /)', '{{7*7}}', '../../', '%00'],
        },
      ],
      'ready',
    ),
    pinned(
      base('pinned-ctl'),
      'CRLF and NUL in TXT values: Route 53 XML cannot carry them, and they once wedged the zone',
      [{ op: 'set', path: ['records'], value: ['a\r\nb', 'nul\u0000'] }],
      'rejected',
    ),
    pinned(base('pinned-quote'), 'an unbalanced quote in a TXT value', [
      { op: 'set', path: ['records'], value: ['"unbalanced'] },
    ]),
    pinned(
      base('pinned-ext'),
      'path traversal as externalName',
      [{ op: 'set', path: ['externalName'], value: '../../pinned-ext/TXT' }],
      'terminal',
    ),
    pinned(
      base('pinned-out'),
      'a record name outside the zone',
      [{ op: 'set', path: ['name'], value: 'evil.example.org.' }],
      'terminal',
    ),
  ];
}
