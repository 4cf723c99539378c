// The user tags (spec.tags) of MyIngress's load balancer and target groups after create: added,
// changed and removed with the record of Skylift's keys. Loaded with the adapter (it brings the
// ELBv2 SDK); elbv2.ts stays free of it, as the TeamPolicy check imports that at start.
import {
  AddTagsCommand,
  RemoveTagsCommand,
  type ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { tagList, userTagChanges } from '../../providers/aws/tags.ts';
import { elbv2Call } from './elbv2.ts';

/** What {@link syncUserTags} changed on a resource. */
export interface UserTagsSynced {
  readonly removed: readonly string[];
  readonly added: readonly { Key: string; Value: string }[];
}

/**
 * Brings a resource's user tags (a load balancer's, a target group's) to `want`: removes the keys
 * Skylift applied that `want` dropped, adds and changes the rest with the record of their keys,
 * then drops record tags no longer needed (providers/aws/tags.ts). Tags others put on the
 * resource are left alone; nothing is sent when nothing differs. Idempotent.
 */
export async function syncUserTags(
  elbv2: ElasticLoadBalancingV2Client,
  what: string,
  arn: string,
  want: Readonly<Record<string, string>> | undefined,
  have: Readonly<Record<string, string>>,
): Promise<UserTagsSynced> {
  const c = userTagChanges(want, have);
  const removed: string[] = [];
  const remove = async (keys: string[]): Promise<void> => {
    if (keys.length === 0) return;
    await elbv2Call(`untag ${what}`, () =>
      elbv2.send(new RemoveTagsCommand({ ResourceArns: [arn], TagKeys: keys })),
    );
    removed.push(...keys);
  };
  await remove(c.remove);
  const added = tagList(c.add);
  if (added.length > 0)
    await elbv2Call(`tag ${what}`, () =>
      elbv2.send(new AddTagsCommand({ ResourceArns: [arn], Tags: added })),
    );
  await remove(c.removeAfter);
  return { removed, added };
}

/** A resource's tags once {@link syncUserTags} has made its changes. Pure. */
export function tagsAfter(
  have: Readonly<Record<string, string>>,
  synced: UserTagsSynced,
): Record<string, string> {
  const gone = new Set(synced.removed);
  return {
    ...Object.fromEntries(Object.entries(have).filter(([k]) => !gone.has(k))),
    ...Object.fromEntries(synced.added.map((t) => [t.Key, t.Value])),
  };
}
