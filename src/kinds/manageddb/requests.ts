// On-demand operations users ask of a ManagedDB through an annotation
// (`skylift db snapshot|reboot|failover`), and their record.
import { requestAnnotation } from '../../apis/managed.ts';
import type { ManagedDB, ManagedDBStatus } from './api.ts';
import { parseRequest } from '../../runtime/requests.ts';

/** The request annotation (`<snapshot|reboot|failover> <id>`), set by users or `skylift db`. */
export { requestAnnotation };
/** Annotation Skylift sets once it has carried a request out: `<id> <result>`. */
export const requestDoneAnnotation = 'aws.skylift.dev/request-done';

/** The actions a ManagedDB accepts in the request annotation. */
export const onDemandActions = ['snapshot', 'reboot', 'failover'] as const;

export type OnDemandAction = (typeof onDemandActions)[number];

function isOnDemandAction(action: string): action is OnDemandAction {
  return (onDemandActions as readonly string[]).includes(action);
}

/** The request the annotation holds, carried out or not, if it is well-formed. Pure. */
export function requestedOperation(mr: ManagedDB): { action: OnDemandAction; id: string } | undefined {
  const request = parseRequest(mr.metadata.annotations?.[requestAnnotation], onDemandActions);
  return request !== undefined && isOnDemandAction(request.action)
    ? { action: request.action, id: request.id }
    : undefined;
}

/** The request not carried out yet, if any. Pure. */
export function pendingRequest(mr: ManagedDB): { action: OnDemandAction; id: string } | undefined {
  const request = requestedOperation(mr);
  if (request === undefined) return undefined;
  const done = mr.metadata.annotations?.[requestDoneAnnotation]?.split(' ')[0];
  return done === request.id ? undefined : request;
}

/** The last request Skylift carried out, from the done annotation: its id and result. Pure. */
export function lastRequest(mr: ManagedDB): { id: string; result: string } | undefined {
  const done = mr.metadata.annotations?.[requestDoneAnnotation];
  if (done === undefined) return undefined;
  const i = done.indexOf(' ');
  return { id: i < 0 ? done : done.slice(0, i), result: i < 0 ? '' : done.slice(i + 1) };
}

/** `status.lastRequest` from the done annotation. Pure. */
export function lastRequestStatus(mr: ManagedDB): Pick<ManagedDBStatus, 'lastRequest'> {
  const last = lastRequest(mr);
  return last === undefined ? {} : { lastRequest: last };
}

/** The result Skylift records for a request it will not carry out: `<action> refused: <why>`. Pure. */
export function refusedResult(action: OnDemandAction, why: string): string {
  return `${action} refused: ${why}`;
}

/** Whether a recorded result is a refusal ({@link refusedResult}). Pure. */
export function isRefusal(result: string): boolean {
  return /^(snapshot|reboot|failover) refused: /.test(result);
}

/**
 * Where request `id` stands on the object: `done` once Skylift recorded it
 * (with its result), `replaced` when the request annotation no longer holds
 * it (a later request, or removed) and it was never recorded, else
 * `pending`. Pure.
 */
export function requestState(
  mr: ManagedDB,
  id: string,
): { state: 'done'; result: string } | { state: 'pending' } | { state: 'replaced'; by: string } {
  const last = lastRequest(mr);
  if (last?.id === id) return { state: 'done', result: last.result };
  const current = requestedOperation(mr);
  if (current?.id !== id)
    return { state: 'replaced', by: mr.metadata.annotations?.[requestAnnotation] ?? '' };
  return { state: 'pending' };
}
