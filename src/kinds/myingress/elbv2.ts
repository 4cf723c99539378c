// The ELBv2 call idioms of MyIngress's AWS side: a call whose failure becomes
// a typed error named after its step, a delete where "not found" is success,
// and resources' tags by ARN.
import { awsCall, lookup, type Found } from '../../providers/aws/calls.ts';
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
