import { describe, expect, it } from 'vitest';
import { compareRecordSets, desiredRecordSet } from '../../src/kinds/dnsrecord/desired.ts';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import {
  legacyWildcardOwnerName,
  NameOutsideZoneError,
  normalizeName,
  normalizeValue,
  ownerRecordName,
  ownerRecordValue,
  markedRecord,
  parseOwnerValue,
  quoteTxt,
  recordFqdn,
  recordKey,
  wireValue,
} from '../../src/providers/route53/names.ts';
import { TerminalError } from '../../src/runtime/errors.ts';

describe('names', () => {
  it.each([
    { reason: 'adds the trailing dot and lowers case', name: 'WWW.Example.COM', want: 'www.example.com.' },
    { reason: 'keeps one trailing dot', name: 'www.example.com.', want: 'www.example.com.' },
    { reason: 'decodes Route 53 octal escapes', name: '\\052.example.com.', want: '*.example.com.' },
  ])('normalizeName $reason', ({ name, want }) => {
    expect(normalizeName(name)).toBe(want);
  });

  it.each([
    { reason: 'relative', name: 'www', want: 'www.example.com.' },
    { reason: 'apex', name: '@', want: 'example.com.' },
    { reason: 'fully qualified without dot', name: 'www.Example.com', want: 'www.example.com.' },
    { reason: 'fully qualified with dot', name: 'api.example.com.', want: 'api.example.com.' },
    { reason: 'the zone name itself', name: 'example.com', want: 'example.com.' },
    { reason: 'a wildcard', name: '*.apps', want: '*.apps.example.com.' },
    {
      reason: 'a name that merely ends like the zone',
      name: 'myexample.com',
      want: 'myexample.com.example.com.',
    },
  ])('recordFqdn: $reason', ({ name, want }) => {
    expect(recordFqdn(name, 'example.com')).toBe(want);
  });

  it('refuses a fully qualified name outside the zone', () => {
    expect(() => recordFqdn('www.other.org.', 'example.com.')).toThrow(TerminalError);
  });

  it('says which name and which zone when it refuses one', () => {
    const err: unknown = (() => {
      try {
        return recordFqdn('www.other.org.', 'Example.com');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(NameOutsideZoneError);
    expect(err).toMatchObject({ recordName: 'www.other.org.', zoneName: 'example.com.' });
    expect((err as Error).message).toBe('"www.other.org." is not inside zone example.com.');
  });

  it.each([
    { type: 'TXT', a: 'hello world', b: '"hello world"' },
    { type: 'CNAME', a: 'App.Example.com', b: 'app.example.com.' },
    { type: 'MX', a: '10 Mail.Example.com', b: '10 mail.example.com.' },
    { type: 'SRV', a: '10 5 443 Host.Example.com.', b: '10 5 443 host.example.com' },
    { type: 'AAAA', a: '2001:DB8:0:0::10', b: '2001:db8::10' },
    { type: 'CAA', a: '0 ISSUE "letsencrypt.org"', b: '0 issue "letsencrypt.org"' },
    { type: 'NS', a: 'NS-1.awsdns-01.org.', b: 'ns-1.awsdns-01.org' },
  ])('$type values that mean the same compare equal ($a ≡ $b)', ({ type, a, b }) => {
    expect(normalizeValue(type, a)).toBe(normalizeValue(type, b));
  });

  it('keeps different values different', () => {
    expect(normalizeValue('A', '192.0.2.1')).not.toBe(normalizeValue('A', '192.0.2.2'));
    expect(normalizeValue('TXT', 'a')).not.toBe(normalizeValue('TXT', 'A'));
  });

  it('quotes TXT values, escapes quotes and splits long text into 255-byte strings', () => {
    expect(wireValue('TXT', 'say "hi"')).toBe('"say \\"hi\\""');
    expect(wireValue('TXT', '"already"')).toBe('"already"');
    const long = quoteTxt('x'.repeat(600));
    expect(long.split('" "').length).toBe(3);
    expect(long.replace(/" "/g, '').replace(/"/g, '')).toBe('x'.repeat(600));
  });

  it('names ownership records per type and set, a leading wildcard in the type label', () => {
    expect(ownerRecordName('www.example.com.', 'A', undefined, '_skylift-owner')).toBe(
      '_skylift-owner.a.www.example.com.',
    );
    expect(ownerRecordName('*.example.com', 'CNAME', undefined, 'p')).toBe('p.cname-wildcard.example.com.');
    // Issue 27, item 1: the literal `_wildcard` name had the wildcard's mark (p.cname._wildcard.example.com.).
    expect(ownerRecordName('_wildcard.example.com', 'CNAME', undefined, 'p')).toBe(
      'p.cname._wildcard.example.com.',
    );
    expect(ownerRecordName('\\052.example.com', 'CNAME', 'blue', 'p')).toMatch(
      /^p\.cname-[0-9a-f]{10}-wildcard\.example\.com\.$/,
    );
    expect(legacyWildcardOwnerName('*.example.com', 'CNAME', undefined, 'p')).toBe(
      'p.cname._wildcard.example.com.',
    );
    expect(legacyWildcardOwnerName('_wildcard.example.com', 'CNAME', undefined, 'p')).toBeUndefined();
    const blue = ownerRecordName('w.example.com.', 'A', 'blue', 'p');
    const green = ownerRecordName('w.example.com.', 'A', 'green', 'p');
    expect(blue).not.toBe(green);
    expect(blue).toMatch(/^p\.a-[0-9a-f]{10}\.w\.example\.com\.$/);
  });

  it('round-trips ownership through the TXT value, even past 255 characters', () => {
    const o = {
      cluster: 'prod',
      owner: `ns/${'n'.repeat(250)}`,
      uid: '1b4e28ba-2fa1-11d2-883f-0016d3cca427',
    };
    expect(parseOwnerValue(ownerRecordValue(o))).toEqual(o);
    expect(parseOwnerValue('"heritage=external-dns,external-dns/owner=default"')).toBeUndefined();
    expect(parseOwnerValue('"v=spf1 -all"')).toBeUndefined();
  });

  it('keys record sets by normalised name, type and set identifier', () => {
    expect(recordKey('WWW.example.com', 'A')).toBe(recordKey('www.example.com.', 'A'));
    expect(recordKey('w.example.com', 'A', 'blue')).not.toBe(recordKey('w.example.com', 'A'));
  });
});

describe('desired record sets', () => {
  const spec = {
    name: 'www',
    type: 'TXT' as const,
    zoneName: 'example.com',
    ttl: 60,
    records: ['b text', 'a text'],
  };

  it('is equal to what Route 53 returns for it (order, quoting, case, dots)', () => {
    const desired = desiredRecordSet(spec, 'www.example.com.', undefined);
    expect(desired.ResourceRecords).toEqual([{ Value: '"b text"' }, { Value: '"a text"' }]);
    const observed = {
      Name: 'www.example.com.',
      Type: 'TXT' as const,
      TTL: 60,
      ResourceRecords: [{ Value: '"a text"' }, { Value: '"b text"' }],
    };
    expect(compareRecordSets(observed, desired)).toEqual({ equal: true });
  });

  it('explains what differs', () => {
    const desired = desiredRecordSet(spec, 'www.example.com.', undefined);
    const observed = {
      Name: 'www.example.com.',
      Type: 'TXT' as const,
      TTL: 300,
      ResourceRecords: [{ Value: '"a text"' }],
    };
    expect(compareRecordSets(observed, desired)).toEqual({
      equal: false,
      diff: 'ttl 300 → 60; records ["a text"] → ["a text", "b text"]',
    });
  });

  it('compares aliases by normalised name and zone', () => {
    const alias = {
      dnsName: 'My-LB.us-east-1.elb.amazonaws.com',
      hostedZoneId: 'Z35SXDOTRQ7X7K',
      evaluateTargetHealth: false,
    };
    const desired = desiredRecordSet(
      { name: 'www', type: 'A', zoneName: 'example.com' },
      'www.example.com.',
      alias,
    );
    expect(desired.TTL).toBeUndefined();
    const same = {
      Name: 'www.example.com.',
      Type: 'A' as const,
      AliasTarget: {
        DNSName: 'my-lb.us-east-1.elb.amazonaws.com.',
        HostedZoneId: 'Z35SXDOTRQ7X7K',
        EvaluateTargetHealth: false,
      },
    };
    expect(compareRecordSets(same, desired).equal).toBe(true);
    const moved = { ...same, AliasTarget: { ...same.AliasTarget, DNSName: 'other-lb.elb.amazonaws.com.' } };
    expect(compareRecordSets(moved, desired).diff).toContain('alias other-lb.elb.amazonaws.com. → My-LB');
  });

  it('carries weighted routing', () => {
    const d = desiredRecordSet(
      {
        name: 'w',
        type: 'A',
        zoneName: 'example.com',
        records: ['192.0.2.1'],
        setIdentifier: 'blue',
        weight: 10,
      },
      'w.example.com.',
      undefined,
    );
    expect(d).toMatchObject({ SetIdentifier: 'blue', Weight: 10, TTL: 300 });
    expect(compareRecordSets({ ...d, Weight: 20 }, d).diff).toBe('weight 20 → 10');
  });
});

describe('ownership record names', () => {
  /** A label Route 53 accepts, biased towards the ones that collided: `*`, `_wildcard`, hex, `-wildcard`. */
  const label = fc.oneof(
    fc.constantFrom(
      '*',
      '_wildcard',
      'wildcard',
      'a-wildcard',
      'a',
      'A',
      '_skylift-owner',
      'a-0123456789',
      '0123456789',
    ),
    fc.stringMatching(/^[a-z0-9_*-]{1,12}$/),
  );
  const record = fc.record({
    labels: fc.array(label, { minLength: 1, maxLength: 4 }),
    type: fc.constantFrom('A', 'AAAA', 'CNAME', 'TXT', 'MX', 'NS', 'SRV', 'CAA'),
    set: fc.option(fc.constantFrom('blue', 'green', 'a', 'wildcard', '0123456789'), { nil: undefined }),
  });
  const fqdn = (labels: readonly string[]): string => `${labels.join('.')}.example.com.`;

  it('are injective: the name, type and set identifier are read back from every ownership name', () => {
    // A left inverse: whatever two records have the same mark, they read back the same.
    const readBack = (owner: string) => {
      const m = markedRecord(owner, '_skylift-owner');
      return m === undefined ? undefined : { type: m.type.toLowerCase(), set: m.setHash, name: m.fqdn };
    };
    fc.assert(
      fc.property(record, ({ labels, type, set }) => {
        const owner = ownerRecordName(fqdn(labels), type, set, '_skylift-owner');
        const setHash =
          set === undefined ? '' : `-${createHash('sha256').update(set).digest('hex').slice(0, 10)}`;
        expect(readBack(owner)).toEqual({
          type: type.toLowerCase(),
          set: setHash,
          name: normalizeName(fqdn(labels)),
        });
        // The twin that collided before: the same name with `*` and `_wildcard` swapped in front.
        const [first, ...rest] = labels;
        const twin = [first === '*' ? '_wildcard' : '*', ...rest];
        expect(ownerRecordName(fqdn(twin), type, set, '_skylift-owner')).not.toBe(owner);
      }),
      { numRuns: 2000, seed: 27 },
    );
  });

  it('the old scheme was not: a wildcard and its literal _wildcard twin shared the old name', () => {
    expect(legacyWildcardOwnerName('*.x.example.com', 'A', undefined, 'p')).toBe(
      ownerRecordName('_wildcard.x.example.com', 'A', undefined, 'p'),
    );
  });
});
