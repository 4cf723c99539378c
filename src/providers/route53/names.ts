import { createHash } from 'node:crypto';
import { TerminalError } from '../../runtime/errors.ts';
import type { OwnershipTags } from '../../apis/managed.ts';

/**
 * Canonical form of a DNS name for comparisons and keys: lower case, one
 * trailing dot, Route 53's octal escapes (`\052` for `*`) decoded. Pure.
 */
export function normalizeName(name: string): string {
  const decoded = name.replace(/\\(\d{3})/g, (_m, oct: string) => String.fromCharCode(parseInt(oct, 8)));
  const lower = decoded.toLowerCase();
  return lower.endsWith('.') ? lower : `${lower}.`;
}

/** A record name that is not inside the hosted zone it is meant for: Route 53 would refuse it. */
export class NameOutsideZoneError extends TerminalError {
  /** The name as given. */
  readonly recordName: string;
  /** The zone's name, normalised. */
  readonly zoneName: string;
  constructor(recordName: string, zoneName: string) {
    super(`${JSON.stringify(recordName)} is not inside zone ${zoneName}`);
    this.recordName = recordName;
    this.zoneName = zoneName;
  }
}

/**
 * The fully qualified name (with trailing dot) of a record named `name` in
 * `zone`: `@` is the apex; a name ending in a dot, or equal to or ending in
 * the zone name, is already qualified; anything else is relative. Throws
 * NameOutsideZoneError (a TerminalError) when the result is outside the zone. Pure.
 */
export function recordFqdn(name: string, zone: string): string {
  const z = normalizeName(zone);
  const n = name.trim();
  let fqdn: string;
  if (n === '@' || n === '') fqdn = z;
  else if (n.endsWith('.')) fqdn = normalizeName(n);
  else {
    const lower = `${n.toLowerCase()}.`;
    fqdn = lower === z || lower.endsWith(`.${z}`) ? lower : normalizeName(`${n}.${z}`);
  }
  if (fqdn !== z && !fqdn.endsWith(`.${z}`)) throw new NameOutsideZoneError(name, z);
  return fqdn;
}

/** Host names compare without case or trailing dot. */
function host(v: string): string {
  return v.toLowerCase().replace(/\.$/, '');
}

/** Splits text into DNS character-strings of at most 255 bytes, quoted. Pure. */
export function quoteTxt(text: string): string {
  // Code points, not UTF-16 units: a character is never split across two strings.
  const escaped = Array.from(text).map((c) => (c === '"' || c === '\\' ? `\\${c}` : c));
  const chunks: string[] = [];
  let current = '';
  for (const c of escaped) {
    if (Buffer.byteLength(current + c) > 255) {
      chunks.push(current);
      current = '';
    }
    current += c;
  }
  chunks.push(current);
  return chunks.map((c) => `"${c}"`).join(' ');
}

/**
 * The value Skylift sends to Route 53 for a record value as a user wrote it:
 * TXT values are quoted (already quoted ones are kept), the rest as given. Pure.
 */
export function wireValue(type: string, value: string): string {
  const v = value.trim();
  if (type === 'TXT') return v.startsWith('"') ? v : quoteTxt(v);
  return v;
}

/**
 * Canonical form of a record value for comparisons, so that case, trailing
 * dots, quoting and IPv6 spelling never cause a perpetual update. Pure.
 */
export function normalizeValue(type: string, value: string): string {
  const v = wireValue(type, value);
  switch (type) {
    case 'A':
      return v;
    case 'AAAA':
      return canonicalIPv6(v);
    case 'CNAME':
    case 'NS':
    case 'PTR':
      return host(v);
    case 'MX': {
      const [prio, h = ''] = v.split(/\s+/, 2);
      return `${Number(prio)} ${host(h)}`;
    }
    case 'SRV': {
      const [p, w, port, h = ''] = v.split(/\s+/, 4);
      return `${Number(p)} ${Number(w)} ${Number(port)} ${host(h)}`;
    }
    case 'CAA': {
      const m = /^(\d+)\s+(\S+)\s+(.*)$/.exec(v);
      return m === null ? v : `${Number(m[1])} ${(m[2] ?? '').toLowerCase()} ${m[3] ?? ''}`;
    }
    default:
      return v;
  }
}

function canonicalIPv6(v: string): string {
  try {
    return new URL(`http://[${v}]/`).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return v.toLowerCase();
  }
}

/**
 * The ownership TXT record's name for a record: `<prefix>.<type>[-<set>][-wildcard].<name>`, where
 * a wildcard `*.<rest>` puts `-wildcard` in the type label and keeps `<rest>` as the name. Injective
 * over every name, type and set identifier Route 53 accepts (two set identifiers aside whose
 * SHA-256 share their first 40 bits): the type label holds letters, then an optional `-` and ten
 * hex digits, then an optional `-wildcard`, so it is read back unambiguously, and the rest is the
 * name itself. A literal `_wildcard.<rest>` keeps `_wildcard` in its name, so it never meets the
 * wildcard's mark (it did before issue 27: see {@link legacyWildcardOwnerName}). Pure.
 */
export function ownerRecordName(
  fqdn: string,
  type: string,
  setIdentifier: string | undefined,
  prefix: string,
): string {
  const name = normalizeName(fqdn);
  const wildcard = name.startsWith('*.');
  return `${prefix}.${typeLabel(type, setIdentifier)}${wildcard ? '-wildcard' : ''}.${wildcard ? name.slice(2) : name}`;
}

/** What an ownership TXT record's name says of the record it guards. */
export interface MarkedRecord {
  /** The record's name, normalised (`*.` for a wildcard). */
  readonly fqdn: string;
  /** Its type, upper case. */
  readonly type: string;
  /** `-<10 hex digits>` of its set identifier's SHA-256, or '' for none. */
  readonly setHash: string;
}

/**
 * The record an ownership TXT name (as {@link ownerRecordName} makes it) guards, or undefined for
 * a name that is not one: the left inverse of ownerRecordName, so a tool reading a zone (an
 * inventory, a leak check) sees the same record Skylift marked. Pure.
 */
export function markedRecord(ownerName: string, prefix: string): MarkedRecord | undefined {
  const name = normalizeName(ownerName);
  const head = `${prefix.toLowerCase()}.`;
  if (!name.startsWith(head)) return undefined;
  const m = /^([a-z0-9]+)(-[0-9a-f]{10})?(-wildcard)?\.(.+)$/.exec(name.slice(head.length));
  if (m === null) return undefined;
  return {
    fqdn: `${m[3] !== undefined ? '*.' : ''}${m[4] ?? ''}`,
    type: (m[1] ?? '').toUpperCase(),
    setHash: m[2] ?? '',
  };
}

/**
 * Where Skylift before issue 27 put a wildcard record's ownership TXT: `*.` became `_wildcard.`,
 * the very name of the literal `_wildcard.<rest>` record's mark. Undefined for a name that is not a
 * wildcard. Read only to carry a record's own old mark over to {@link ownerRecordName}. Pure.
 */
export function legacyWildcardOwnerName(
  fqdn: string,
  type: string,
  setIdentifier: string | undefined,
  prefix: string,
): string | undefined {
  const name = normalizeName(fqdn);
  if (!name.startsWith('*.')) return undefined;
  return `${prefix}.${typeLabel(type, setIdentifier)}._wildcard.${name.slice(2)}`;
}

/** `<type>[-<10 hex digits of the set identifier's SHA-256>]`, lower case. Pure. */
function typeLabel(type: string, setIdentifier: string | undefined): string {
  const set =
    setIdentifier !== undefined && setIdentifier !== ''
      ? `-${createHash('sha256').update(setIdentifier).digest('hex').slice(0, 10)}`
      : '';
  return `${type.toLowerCase()}${set}`;
}

/** The ownership TXT value: heritage, cluster, owner and uid, as one or more quoted strings. Pure. */
export function ownerRecordValue(o: OwnershipTags): string {
  return quoteTxt(
    `heritage=skylift,skylift/cluster=${o.cluster},skylift/owner=${o.owner},skylift/uid=${o.uid}`,
  );
}

/** Reads an ownership TXT value back; undefined when it is not Skylift's. Pure. */
export function parseOwnerValue(value: string): OwnershipTags | undefined {
  const text = [...value.matchAll(/"((?:[^"\\]|\\.)*)"/g)]
    .map((m) => (m[1] ?? '').replace(/\\(.)/g, '$1'))
    .join('');
  if (!text.startsWith('heritage=skylift,')) return undefined;
  const fields = new Map(
    text
      .split(',')
      .map((kv) => kv.split('=', 2) as [string, string | undefined])
      .map(([k, v]) => [k, v ?? '']),
  );
  const uid = fields.get('skylift/uid');
  if (uid === undefined || uid === '') return undefined;
  return { uid, owner: fields.get('skylift/owner') ?? '', cluster: fields.get('skylift/cluster') ?? '' };
}

/** Key of a record set within a zone: name, type and set identifier. Pure. */
export function recordKey(name: string, type: string, setIdentifier?: string): string {
  return `${normalizeName(name)}|${type}|${setIdentifier ?? ''}`;
}

/** A hosted zone ID without the `/hostedzone/` prefix. Pure. */
export function bareZoneId(id: string): string {
  return id.replace(/^\/?hostedzone\//, '');
}
