// What to do in ACM for a TLS Secret a consumer (a Gateway, …) serves, from the certificates that
// carry its tags: the tags an import carries, which certificate is the Secret's, whether to import,
// re-import into the same ARN (rotation), only re-tag, or nothing; and which of the consumer's
// imports to delete. Pure.
import { createHash } from 'node:crypto';
import {
  ownershipFromTags,
  ownershipTagKeys,
  ownershipTagMap,
  type OwnershipTags,
} from '../../apis/managed.ts';
import type { TlsMaterial } from './tlsSecret.ts';

/** The tags Skylift puts on a certificate it imported from a Secret (beside the consumer's ownership tags). */
export const importTagKeys = {
  /** `namespace/name` of the Secret (shortened with a hash when longer than a tag value: {@link secretTagValue}). */
  secret: 'skylift.dev/secret',
  /** The Secret's metadata.uid when last imported. */
  secretUid: 'skylift.dev/secret-uid',
  /** {@link tlsFingerprint} of what was last imported: leaf and chain. */
  fingerprint: 'skylift.dev/tls-sha256',
  /** ACM's name of the key algorithm last imported (a re-import cannot change it). */
  keyAlgorithm: 'skylift.dev/key-algorithm',
} as const;

/** The longest AWS tag value. */
const tagValueMax = 256;

/**
 * The value of the `skylift.dev/secret` tag for a Secret: `namespace/name`, or, when longer than a
 * tag value (a namespace of 63 and a name of 253 characters make 317), its first 239 characters,
 * `+` and 16 hex digits of the SHA-256 of the whole (characters ACM's tag values allow). The same
 * Secret always gives the same value. Pure.
 */
export function secretTagValue(secret: string): string {
  if (secret.length <= tagValueMax) return secret;
  const hash = createHash('sha256').update(secret).digest('hex').slice(0, 16);
  return `${secret.slice(0, tagValueMax - 17)}+${hash}`;
}

/** Every tag a certificate imported from `m` for `owner` carries. Pure. */
export function importTags(owner: OwnershipTags, m: TlsMaterial): Record<string, string> {
  return {
    ...ownershipTagMap(owner),
    [importTagKeys.secret]: secretTagValue(m.secret),
    [importTagKeys.secretUid]: m.secretUid,
    [importTagKeys.fingerprint]: m.fingerprint,
    [importTagKeys.keyAlgorithm]: m.keyAlgorithm,
  };
}

/** The tags that find every certificate `owner` imported from `secret` (when given) or from any Secret. Pure. */
export function ownerQueryTags(owner: OwnershipTags, secret?: string): Record<string, string> {
  return {
    [ownershipTagKeys.uid]: owner.uid,
    [ownershipTagKeys.cluster]: owner.cluster,
    ...(secret !== undefined ? { [importTagKeys.secret]: secretTagValue(secret) } : {}),
  };
}

/** A certificate in ACM with its tags. */
export interface TaggedCertificate {
  readonly arn: string;
  readonly tags: Readonly<Record<string, string>>;
}

/**
 * Whether a certificate is one `owner` imported from a Secret: it carries the owner's uid and
 * cluster and a `skylift.dev/secret` tag (and `secret`'s value, when given). The only
 * certificates ensure and release ever change. Pure.
 */
export function isOwnImport(c: TaggedCertificate, owner: OwnershipTags, secret?: string): boolean {
  const o = ownershipFromTags(c.tags);
  if (o === undefined || o.uid !== owner.uid || o.cluster !== owner.cluster) return false;
  const s = c.tags[importTagKeys.secret];
  if (s === undefined || s === '') return false;
  return secret === undefined || s === secretTagValue(secret);
}

/** What ensure does for one Secret. */
export type EnsureStep =
  /** No certificate of this owner for this Secret: import one, with `tags` in the same call. */
  | { readonly kind: 'import'; readonly tags: Readonly<Record<string, string>> }
  /**
   * The certificate `arn` serves something else (the Secret rotated): import into that ARN (what
   * serves it keeps serving, now the new certificate), then add `tags` (a re-import takes none):
   * those that changed, and the cluster tag the IAM policy asks of every AddTagsToCertificate.
   */
  | { readonly kind: 'reimport'; readonly arn: string; readonly tags: Readonly<Record<string, string>> }
  /** `arn` serves the Secret's certificate but some tags are not the Secret's now: add `tags` (those, and the cluster tag). */
  | { readonly kind: 'retag'; readonly arn: string; readonly tags: Readonly<Record<string, string>> }
  /** `arn` is the Secret's certificate with its tags: nothing to do. */
  | { readonly kind: 'current'; readonly arn: string };

/**
 * The step that makes ACM hold `m` for `owner`, from the certificates found with the owner's and
 * the Secret's tags (others in `found` are ignored). The Secret's certificate is the one whose
 * fingerprint tag is `m`'s (a re-import whose tagging was lost is re-imported again: the same
 * body, harmless); else one whose key algorithm is `m`'s, which is re-imported (ACM refuses a
 * re-import that changes the key type or size); else a new import, and the old certificate is left
 * for {@link planRelease} once the consumer no longer serves it. Ties go to the smallest ARN, so
 * every pass picks the same. Pure.
 */
export function planEnsure(
  found: readonly TaggedCertificate[],
  owner: OwnershipTags,
  m: TlsMaterial,
): EnsureStep {
  const tags = importTags(owner, m);
  const ours = found.filter((c) => isOwnImport(c, owner, m.secret)).sort((a, b) => (a.arn < b.arn ? -1 : 1));
  const same = ours.find((c) => c.tags[importTagKeys.fingerprint] === m.fingerprint);
  if (same !== undefined) {
    const changed = tagsToAdd(same.tags, tags);
    return Object.keys(changed).length === 0
      ? { kind: 'current', arn: same.arn }
      : { kind: 'retag', arn: same.arn, tags: withClusterTag(changed, owner) };
  }
  const reusable = ours.find((c) => c.tags[importTagKeys.keyAlgorithm] === m.keyAlgorithm);
  if (reusable !== undefined)
    return {
      kind: 'reimport',
      arn: reusable.arn,
      tags: withClusterTag(tagsToAdd(reusable.tags, tags), owner),
    };
  return { kind: 'import', tags };
}

/**
 * Tags to add, with the cluster tag among them: the IAM policy allows AddTagsToCertificate only
 * with `skylift.dev/cluster` in the request (deploy/iam/policy.json). Pure.
 */
function withClusterTag(tags: Record<string, string>, owner: OwnershipTags): Record<string, string> {
  return { ...tags, [ownershipTagKeys.cluster]: owner.cluster };
}

/** The tags of `want` that `have` lacks or holds another value for. Pure. */
export function tagsToAdd(
  have: Readonly<Record<string, string>>,
  want: Readonly<Record<string, string>>,
): Record<string, string> {
  return Object.fromEntries(Object.entries(want).filter(([k, v]) => have[k] !== v));
}

/**
 * The certificates to delete: those of `found` that `owner` imported from a Secret
 * ({@link isOwnImport}) and whose ARN is not in `keep`, sorted. Never another owner's, another
 * cluster's, or an untagged one. Pure.
 */
export function planRelease(
  found: readonly TaggedCertificate[],
  owner: OwnershipTags,
  keep: ReadonlySet<string>,
): string[] {
  return [
    ...new Set(found.filter((c) => isOwnImport(c, owner) && !keep.has(c.arn)).map((c) => c.arn)),
  ].sort();
}
