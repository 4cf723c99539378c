// Turning AWS's terminal refusals into messages that name the spec field and a
// fix: each kind owns a table of entries (code, message pattern, operation →
// field and fix); this module matches and composes, purely, and wraps a kind's
// ExternalClient so every Terminal message it ends with goes through its table.
import type { ManagedObject } from '../../apis/managed.ts';
import type { ExternalClient } from '../../runtime/adapter.ts';
import { OwnershipConflictError, RequeueAfter, RetryableError, TerminalError } from '../../runtime/errors.ts';
import { AwsTerminalError } from './errors.ts';

/** Where the generic advice for an unmapped refusal points. */
export const refusalDocs = 'docs/troubleshooting.md#reading-a-terminal-message';

/** Where the advice for a refused IAM action points. */
export const iamPolicyDocs = 'deploy/iam/policy.json, docs/install.md#1-the-iam-role-eks-with-irsa';

/** What AWS answered, as a refusal entry sees it. */
export interface RefusalFacts {
  /** The error code, Fault/Exception suffix aside (e.g. DBSnapshotNotFound). */
  readonly code: string;
  /** AWS's own message. */
  readonly message: string;
  /** The API operation refused, when known (e.g. CreateDBInstance). */
  readonly operation?: string;
}

/**
 * What a matched entry says: the spec field (as in the CRD, e.g.
 * `spec.engineVersion`) and its value, or — for refusals no field explains
 * (quotas, IAM) — a `subject` saying what is short; and always the fix.
 */
export type RefusalHint =
  | { readonly field: string; readonly value?: unknown; readonly fix: string }
  | { readonly subject: string; readonly fix: string };

/** One row of a kind's table. Omitted matchers match anything. */
export interface Refusal<S> {
  /** AWS error codes, Fault/Exception suffix aside. */
  readonly codes: readonly string[];
  /** AWS's message must match; the match is handed to `hint`. */
  readonly message?: RegExp;
  /** The API operations the row is about. */
  readonly operations?: readonly string[];
  /** The field and fix for this spec; undefined when the row does not apply after all (the next is tried). */
  readonly hint: (
    spec: S,
    facts: RefusalFacts,
    match: RegExpMatchArray | undefined,
  ) => RefusalHint | undefined;
}

/** A kind's refusal table: the service's name for messages and the rows, most specific first. */
export interface RefusalTable<S> {
  /** How messages name the service, e.g. "RDS". */
  readonly service: string;
  readonly entries: readonly Refusal<S>[];
}

const baseCode = (code: string): string => code.replace(/(Fault|Exception)$/, '');

/** The first row of `table` that matches, with its hint for `spec`. Pure. */
export function matchRefusal<S>(
  table: RefusalTable<S>,
  spec: S,
  facts: RefusalFacts,
): RefusalHint | undefined {
  const code = baseCode(facts.code);
  for (const e of table.entries) {
    if (!e.codes.some((c) => baseCode(c) === code)) continue;
    if (
      e.operations !== undefined &&
      (facts.operation === undefined || !e.operations.includes(facts.operation))
    )
      continue;
    const match = e.message !== undefined ? facts.message.match(e.message) : undefined;
    if (e.message !== undefined && match === null) continue;
    const hint = e.hint(spec, { ...facts, code }, match ?? undefined);
    if (hint !== undefined) return hint;
  }
  return undefined;
}

/** A spec value as messages show it: strings and lists as JSON, numbers as they are. Pure. */
export function showValue(value: unknown): string {
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
}

/**
 * The Terminal message: the field (and its value) or what is short first,
 * then AWS's words, quoted, with the step and code, then the fix. Without a
 * hint, `fallback` (today's text) with generic advice that claims no field. Pure.
 */
export function composeRefusal(
  service: string,
  step: string,
  facts: RefusalFacts,
  hint: RefusalHint | undefined,
  fallback: string,
): string {
  if (hint === undefined)
    return `${fallback} (${service} refused the request and the words above are AWS's: correct the spec field they name, or see ${refusalDocs})`;
  const said = `${step !== '' ? `in ${step} ` : ''}(${facts.code}: ${JSON.stringify(facts.message)})`;
  if ('field' in hint) {
    const value = hint.value !== undefined ? ` ${showValue(hint.value)}` : '';
    return `${hint.field}${value}: ${service} refused it ${said}: ${hint.fix}`;
  }
  return `${hint.subject}: ${service} refused the request ${said}: ${hint.fix}`;
}

/** A refusal already explained through a table: explained once, however often it is rethrown. */
export class ExplainedRefusal extends AwsTerminalError {}

/**
 * The AwsTerminalError AWS wrote, found in `err` or its causes (a step may
 * have wrapped it), with the steps in front of it. Pure.
 */
function awsRefusalIn(err: unknown): { refusal: AwsTerminalError; step: string } | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 8 && e instanceof Error; depth++) {
    if (e instanceof ExplainedRefusal) return undefined;
    // An error that already states its retry intent is Skylift's decision (a zone gone from under a
    // DNSRecord is retried, a Conflict is a Conflict): never turned into a Terminal refusal.
    if (
      e instanceof RetryableError ||
      e instanceof RequeueAfter ||
      e instanceof OwnershipConflictError ||
      (e instanceof TerminalError && !(e instanceof AwsTerminalError))
    )
      return undefined;
    if (e instanceof AwsTerminalError && e.awsMessage !== undefined && e.code !== undefined) {
      const outer = err instanceof Error ? err.message : '';
      const prefix = outer.endsWith(e.message) ? outer.slice(0, outer.length - e.message.length) : '';
      return { refusal: e, step: `${prefix}${e.step ?? ''}` };
    }
    e = e.cause;
  }
  return undefined;
}

/**
 * `err` with its message rewritten through `table` when it is (or wraps) a
 * terminal refusal AWS wrote; any other error unchanged. The result is an
 * AwsTerminalError with the same code, so retry intent does not change. Pure.
 */
export function explainRefusal<S>(err: unknown, table: RefusalTable<S>, spec: S): unknown {
  const found = awsRefusalIn(err);
  if (found === undefined) return err;
  const { refusal, step } = found;
  const facts: RefusalFacts = {
    code: refusal.code ?? '',
    message: refusal.awsMessage ?? '',
    ...(refusal.operation !== undefined ? { operation: refusal.operation } : {}),
  };
  const hint = matchRefusal(table, spec, facts);
  const message = composeRefusal(
    table.service,
    step,
    facts,
    hint,
    err instanceof Error ? err.message : String(err),
  );
  return new ExplainedRefusal(message, refusal.code, {
    cause: err,
    ...(refusal.operation !== undefined ? { operation: refusal.operation } : {}),
  });
}

/**
 * A kind's ExternalClient whose terminal AWS refusals are explained through
 * its table (the engine's Terminal condition and Warning Event carry the
 * result). Every other error, and every answer, passes through unchanged.
 */
export function explainRefusals<T extends ManagedObject, D, F extends string>(
  client: ExternalClient<T, D, F>,
  table: RefusalTable<T['spec']>,
): ExternalClient<T, D, F> {
  const guard = async <R>(mr: T, fn: () => Promise<R>): Promise<R> => {
    try {
      return await fn();
    } catch (err) {
      throw explainRefusal(err, table, mr.spec);
    }
  };
  const prepare = client.prepareCreate?.bind(client);
  const release = client.release?.bind(client);
  return {
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

/**
 * The row every kind ends its table with: AccessDenied names the IAM action
 * the operator's role lacks (from AWS's message, else `prefix:operation`)
 * and points to the chart's IAM policy.
 */
export function accessDenied<S>(iamPrefix: (operation: string | undefined) => string): Refusal<S> {
  return {
    codes: ['AccessDenied', 'UnauthorizedOperation', 'AuthorizationError'],
    hint: (_spec, facts) => {
      const action =
        /not authorized to perform:? ([\w-]+:\w+)/i.exec(facts.message)?.[1] ??
        (facts.operation !== undefined ? `${iamPrefix(facts.operation)}:${facts.operation}` : undefined);
      return {
        subject: `the operator's IAM role is not allowed ${action ?? 'this call'}`,
        fix: `allow ${action ?? 'the action AWS names'} in the role's policy (the chart's IAM policy: ${iamPolicyDocs}); no spec change is needed, and Skylift tries again at the resync period or when the spec changes`,
      };
    },
  };
}
