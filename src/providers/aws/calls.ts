// AWS call idioms every kind uses: a call whose failure becomes a typed error
// named after its step, a lookup where "not found" is an answer, and a
// create that finds its own resource when the first answer was lost.
import type { OwnershipTags } from '../../apis/managed.ts';
import { ownerAsSeenBy, ownershipFromTags } from '../../apis/managed.ts';
import { OwnershipConflictError } from '../../runtime/errors.ts';
import { toTypedAwsError, type classifyAwsError } from './errors.ts';

/** A service's error table, as classifyAwsError takes it. */
export type ErrorTable = Parameters<typeof classifyAwsError>[1];

/**
 * Runs one AWS call; a failure becomes the engine's typed error ("what:
 * cause"), classified with the service's table. May block on the client's
 * rate limiter; as idempotent as the call itself.
 */
export async function awsCall<T>(what: string, table: ErrorTable, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toTypedAwsError(what, err, table);
  }
}

/**
 * Runs a lookup; resolves undefined when it fails because the thing is not
 * there (`isAbsent`), a typed error for any other failure. Read-only.
 */
export async function lookup<T>(
  what: string,
  table: ErrorTable,
  isAbsent: (err: unknown) => boolean,
  fn: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await fn();
  } catch (err) {
    if (isAbsent(err)) return undefined;
    throw toTypedAwsError(what, err, table);
  }
}

/** A resource found under a name that is taken, with its tags. */
export interface Found<T> {
  readonly value: T;
  readonly tags: Readonly<Record<string, string>>;
}

/** How {@link createOrFind} creates, and finds what stands under the name it wanted. */
export interface CreateOrFind<T> {
  /** The step, for messages ("create load balancer sky-…"). */
  readonly what: string;
  readonly table: ErrorTable;
  /** True for "the name is taken". */
  readonly isDuplicate: (err: unknown) => boolean;
  readonly create: () => Promise<T>;
  /** What has the name, with its tags; undefined when nothing has it after all. */
  readonly find: () => Promise<Found<T> | undefined>;
  /** Whose resource may be taken as the created one. */
  readonly ownership: OwnershipTags;
}

/**
 * Runs a create; when AWS says the deterministic name is taken (a retried
 * create whose first answer was lost, or someone else's resource), returns
 * the existing one if it carries this object's ownership tags, and throws
 * OwnershipConflictError naming its owner otherwise. Safe to repeat.
 */
export async function createOrFind<T>(c: CreateOrFind<T>): Promise<T> {
  try {
    return await c.create();
  } catch (err) {
    if (!c.isDuplicate(err)) throw toTypedAwsError(c.what, err, c.table);
    const existing = await c.find();
    if (existing === undefined) throw toTypedAwsError(c.what, err, c.table);
    const owner = ownershipFromTags(existing.tags);
    if (owner?.uid !== c.ownership.uid) {
      throw new OwnershipConflictError(
        `${c.what}: the name is taken by ${owner !== undefined ? `a resource owned by ${ownerAsSeenBy(owner, c.ownership)}` : 'a resource Skylift does not manage'}`,
      );
    }
    return existing.value;
  }
}
