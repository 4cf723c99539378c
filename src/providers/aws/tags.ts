// AWS tag lists (`[{ Key, Value }]`) and the maps the code reasons with.
import { ownershipTagMap, type OwnershipTags } from '../../apis/managed.ts';

/** An AWS tag, as every SDK client spells it. */
export interface AwsTag {
  Key?: string | undefined;
  Value?: string | undefined;
}

/** A tag list as a map (missing keys and values as ''). Pure. */
export function tagMap(tags: readonly AwsTag[] | undefined): Record<string, string> {
  return Object.fromEntries((tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));
}

/** A map as a tag list. Pure. */
export function tagList(tags: Readonly<Record<string, string>>): { Key: string; Value: string }[] {
  return Object.entries(tags).map(([Key, Value]) => ({ Key, Value }));
}

/**
 * The user's tags with the record of their keys and the ownership tags on top
 * (they cannot be overridden), as a tag list: what a create or an adoption
 * puts on a resource. Pure.
 */
export function ownedTagList(
  userTags: Readonly<Record<string, string>> | undefined,
  ownership: OwnershipTags,
): { Key: string; Value: string }[] {
  const user = userTags ?? {};
  return tagList({ ...user, ...userTagRecord(Object.keys(user)), ...ownershipTagMap(ownership) });
}

/**
 * The tag recording which of the user's tag keys Skylift applied (comma-separated: AWS tag keys
 * cannot contain commas), so a key removed from the spec is removed from AWS while tags others put
 * on the resource are left alone. Long lists continue in `<key>-2`, `<key>-3`, … (a value holds 256
 * characters).
 */
export const userTagKeysTag = 'skylift.dev/user-tags';
const recordValueMax = 256;

/** Whether a tag key is one of the records of the user's tag keys. Pure. */
function isUserTagRecord(key: string): boolean {
  return key === userTagKeysTag || /^skylift\.dev\/user-tags-[0-9]+$/.test(key);
}

/** Whether a key may be a user's tag: Skylift's own (skylift.dev/) and AWS's (aws:) never are. Pure. */
function isUserTagKey(key: string): boolean {
  return key !== '' && !key.startsWith('skylift.dev/') && !key.startsWith('aws:');
}

/** The record tags for a set of user tag keys (none for none; reserved keys are left out). Pure. */
export function userTagRecord(keys: Iterable<string>): Record<string, string> {
  const chunks: string[] = [];
  for (const key of [...keys].filter(isUserTagKey).sort()) {
    const last = chunks.length - 1;
    if (last >= 0 && (chunks[last] ?? '').length + 1 + key.length <= recordValueMax)
      chunks[last] = `${chunks[last] ?? ''},${key}`;
    else chunks.push(key);
  }
  return Object.fromEntries(
    chunks.map((c, i) => [i === 0 ? userTagKeysTag : `${userTagKeysTag}-${i + 1}`, c]),
  );
}

/** The user tag keys Skylift recorded as applied on a resource with these tags. Pure. */
export function appliedUserTagKeys(have: Readonly<Record<string, string>>): string[] {
  return Object.entries(have)
    .filter(([k]) => isUserTagRecord(k))
    .flatMap(([, v]) => v.split(','))
    .filter(isUserTagKey);
}

/** The calls that bring a resource's user tags to the spec's: tags to add or change, then keys to remove. */
export interface UserTagChanges {
  /** Keys to remove first: user tags Skylift applied that the spec no longer has. */
  readonly remove: string[];
  /** Tags to add or change next, with the new record of the user's keys. */
  readonly add: Record<string, string>;
  /** Keys to remove last: record tags no longer needed (a shorter record). */
  readonly removeAfter: string[];
}

/**
 * What to change so the resource carries the spec's user tags, and no longer
 * those Skylift applied before that the spec dropped; tags Skylift did not
 * apply are never removed. Removing first and recording last means a crash
 * between the calls leaves a record that still names every key to remove.
 * Pure.
 */
export function userTagChanges(
  want: Readonly<Record<string, string>> | undefined,
  have: Readonly<Record<string, string>>,
): UserTagChanges {
  const wanted = Object.fromEntries(Object.entries(want ?? {}).filter(([k]) => isUserTagKey(k)));
  const record = userTagRecord(Object.keys(wanted));
  const remove = appliedUserTagKeys(have).filter((k) => !(k in wanted) && k in have);
  const add = Object.fromEntries(Object.entries({ ...wanted, ...record }).filter(([k, v]) => have[k] !== v));
  const removeAfter = Object.keys(have).filter((k) => isUserTagRecord(k) && !(k in record));
  return { remove: [...new Set(remove)], add, removeAfter };
}

/** Whether user tag changes have anything to send. Pure. */
export function hasUserTagChanges(c: UserTagChanges): boolean {
  return c.remove.length > 0 || Object.keys(c.add).length > 0 || c.removeAfter.length > 0;
}
