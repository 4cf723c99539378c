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

/** The user's tags with the ownership tags on top (they cannot be overridden), as a tag list. Pure. */
export function ownedTagList(
  userTags: Readonly<Record<string, string>> | undefined,
  ownership: OwnershipTags,
): { Key: string; Value: string }[] {
  return tagList({ ...(userTags ?? {}), ...ownershipTagMap(ownership) });
}
