// The ELBv2 call idioms of MyIngress's AWS side: a call whose failure becomes
// a typed error named after its step, a delete where "not found" is success,
// and resources' tags by ARN.
import {
  AddTagsCommand,
  RemoveTagsCommand,
  type ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { awsCall, lookup, type Found } from '../../providers/aws/calls.ts';
import { tagList, userTagChanges } from '../../providers/aws/tags.ts';
import type { TagDescriber } from '../../providers/elbv2/describeBatcher.ts';
import { elbv2ErrorTable, isElbv2NotFound } from '../../providers/elbv2/errors.ts';

/**
 * Runs one ELBv2 call; a failure becomes the engine's typed error ("what:
 * cause"). May block on the client's rate limiter; as idempotent as the call.
 */
export function elbv2Call<T>(what: string, fn: () => Promise<T>): Promise<T> {
  return awsCall(what, elbv2ErrorTable, fn);
}

/**
 * Runs an ELBv2 delete for which "not found" is success; any other failure
 * becomes a typed error ("what: cause"). Idempotent.
 */
export async function ignoreNotFound(what: string, fn: () => Promise<unknown>): Promise<void> {
  await lookup(what, elbv2ErrorTable, isElbv2NotFound, fn);
}

/**
 * Tags of each ARN that exists (batched with other objects' lookups); an ARN
 * that does not exist has no entry. Read-only.
 */
export async function tagsOf(
  describer: TagDescriber,
  arns: string[],
): Promise<Map<string, Record<string, string>>> {
  const tags = await Promise.all(arns.map((a) => describer.tags(a)));
  return new Map(arns.flatMap((a, i) => (tags[i] !== undefined ? [[a, tags[i]] as const] : [])));
}

/**
 * A resource found under a taken name, with its tags (for createOrFind's
 * `find`); undefined when there is no resource or no ARN. Read-only.
 */
export async function withTags<T>(
  describer: TagDescriber,
  value: T | undefined,
  arn: string | undefined,
): Promise<Found<T> | undefined> {
  if (value === undefined || arn === undefined) return undefined;
  return { value, tags: (await tagsOf(describer, [arn])).get(arn) ?? {} };
}

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
