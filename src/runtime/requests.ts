// The request annotation (aws.skylift.dev/request) through which users ask a kind for a one-off
// operation: "<action> <id>". Each kind says which actions it accepts (none, for most); the engine
// says so when the annotation holds anything else, rather than ignoring it.
import { requestAnnotation } from '../apis/managed.ts';

/** A well-formed request: one of the kind's actions, and the id that makes it happen once. */
export interface Request {
  readonly action: string;
  readonly id: string;
}

/** The request `raw` holds when it is `<action> <id>` for one of `actions`; else undefined. Pure. */
export function parseRequest(raw: string | undefined, actions: readonly string[]): Request | undefined {
  const m = raw === undefined ? null : /^(\S+) (\S+)$/.exec(raw.trim());
  if (m === null) return undefined;
  const [, action = '', id = ''] = m;
  return actions.includes(action) ? { action, id } : undefined;
}

/**
 * Why the request annotation of an object of `kind` is not a request it accepts, naming the
 * annotation, its value and the accepted values; undefined when it is absent or accepted. Pure.
 */
export function requestRefusal(
  raw: string | undefined,
  actions: readonly string[],
  kind: string,
): string | undefined {
  if (raw === undefined || parseRequest(raw, actions) !== undefined) return undefined;
  const accepted =
    actions.length === 0
      ? `${kind} accepts no requests`
      : `${kind} accepts ${actions.map((a) => `"${a} <id>"`).join(', ')} (the id makes a request happen once)`;
  return `annotation ${requestAnnotation} is ${JSON.stringify(raw)}, which is not a request: ${accepted}; nothing was done for it. Remove the annotation${actions.length > 0 ? ' or set it to one of these' : ''}`;
}
