// A kind's ExternalClient whose failures are rewritten before the engine sees them: the engine
// turns a failure's message into the Synced condition and a Warning Event, so this is where a kind
// makes it name the spec field at fault (its AWS refusal tables, src/kinds/refusals.ts).
import type { ManagedObject } from '../apis/managed.ts';
import type { ExternalClient } from './adapter.ts';

/**
 * What a client's failure becomes, given the object it was working on. Returns the error to throw
 * instead (a replacement should keep the original's retry intent: its type and reason), or `err`
 * itself to leave it as it is. Must not throw. Pure.
 */
export type ErrorExplainer<T extends ManagedObject> = (err: unknown, mr: T) => unknown;

/**
 * `client` with every error its methods throw passed through `explain` (with the object the call
 * was about) and the result thrown instead. Answers, `location` and which optional methods exist
 * are the client's own; nothing is called that the engine did not call.
 */
export function explainErrors<T extends ManagedObject, D, F extends string>(
  client: ExternalClient<T, D, F>,
  explain: ErrorExplainer<T>,
): ExternalClient<T, D, F> {
  const guard = async <R>(mr: T, fn: () => Promise<R>): Promise<R> => {
    try {
      return await fn();
    } catch (err) {
      throw explain(err, mr);
    }
  };
  const authorize = client.authorize?.bind(client);
  const prepare = client.prepareCreate?.bind(client);
  const release = client.release?.bind(client);
  return {
    ...(client.location !== undefined ? { location: client.location } : {}),
    ...(authorize !== undefined ? { authorize: (mr, ctx) => guard(mr, () => authorize(mr, ctx)) } : {}),
    observe: (mr, ctx) => guard(mr, () => client.observe(mr, ctx)),
    ...(prepare !== undefined ? { prepareCreate: (mr, ctx) => guard(mr, () => prepare(mr, ctx)) } : {}),
    create: (mr, ctx) => guard(mr, () => client.create(mr, ctx)),
    update: (mr, observed, ctx) => guard(mr, () => client.update(mr, observed, ctx)),
    ...(release !== undefined
      ? { release: (mr, ctx, cause) => guard(mr, () => release(mr, ctx, cause)) }
      : {}),
    delete: (mr, observed, ctx) => guard(mr, () => client.delete(mr, observed, ctx)),
  };
}
