// Small valid building blocks the per-kind generators share: DNS labels,
// host names, IP addresses, tag maps.
import fc from 'fast-check';

const lower = Array.from('abcdefghijklmnopqrstuvwxyz');
const alnum = [...lower, ...Array.from('0123456789')];

/** A DNS label of lower-case letters and digits (1-12 characters, starting with a letter). */
export const dnsLabel: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom(...lower), fc.string({ unit: fc.constantFrom(...alnum), maxLength: 11 }))
  .map(([a, b]) => a + b);

/** A host name outside any test zone, e.g. `mail3.a.example.net`. */
export const hostName: fc.Arbitrary<string> = fc
  .array(dnsLabel, { minLength: 1, maxLength: 3 })
  .map((labels) => `${labels.join('.')}.example.net`);

/** An IPv4 address in dotted-quad form. */
export const ipv4: fc.Arbitrary<string> = fc
  .tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255))
  .map((p) => p.join('.'));

/** An IPv6 address in 2001:db8::/32, fully written out (no `::`, no IPv4-mapped forms). */
export const ipv6: fc.Arbitrary<string> = fc
  .array(fc.nat(0xffff), { minLength: 6, maxLength: 6 })
  .map((groups) => ['2001', 'db8', ...groups.map((g) => g.toString(16))].join(':'));

/** A printable ASCII string (space to tilde). */
export function printable(maxLength: number, minLength = 0): fc.Arbitrary<string> {
  return fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    minLength,
    maxLength,
  });
}

/** A tag map with plain keys and values (none reserved). */
export const plainTags: fc.Arbitrary<Record<string, string>> = fc.dictionary(
  dnsLabel.map((l) => `team-${l}`),
  printable(40).filter((v) => v.trim() === v),
  { maxKeys: 3 },
);

/** Drops the keys whose value is undefined, so optional fields are absent rather than null. Pure. */
export function compact(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
