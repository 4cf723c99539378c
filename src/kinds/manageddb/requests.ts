// On-demand operations users ask of a ManagedDB through an annotation
// (`skylift db snapshot|reboot|failover`), and their record.
import { requestAnnotation } from '../../apis/managed.ts';
import type { ManagedDB } from './api.ts';

/** The request annotation (`<snapshot|reboot|failover> <id>`), set by users or `skylift db`. */
export { requestAnnotation };
/** Annotation Skylift sets once it has carried a request out: `<id> <result>`. */
export const requestDoneAnnotation = 'aws.skylift.dev/request-done';

export type OnDemandAction = 'snapshot' | 'reboot' | 'failover';

/** The request not carried out yet, if any. Pure. */
export function pendingRequest(mr: ManagedDB): { action: OnDemandAction; id: string } | undefined {
  const raw = mr.metadata.annotations?.[requestAnnotation];
  const m = raw === undefined ? null : /^(snapshot|reboot|failover) (\S+)$/.exec(raw.trim());
  if (m === null) return undefined;
  const id = m[2] ?? '';
  const done = mr.metadata.annotations?.[requestDoneAnnotation]?.split(' ')[0];
  return done === id ? undefined : { action: m[1] as OnDemandAction, id };
}

/** `status.lastRequest` from the done annotation. Pure. */
export function lastRequestStatus(mr: ManagedDB): Record<string, unknown> {
  const done = mr.metadata.annotations?.[requestDoneAnnotation];
  if (done === undefined) return {};
  const i = done.indexOf(' ');
  return { lastRequest: { id: i < 0 ? done : done.slice(0, i), result: i < 0 ? '' : done.slice(i + 1) } };
}
