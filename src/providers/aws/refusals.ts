// AWS's terminal refusals: the one AWS wrote, found under whatever steps wrapped it, and the row of
// a table of refusals it matches (by error code, API operation and AWS's own words). What a row
// says about a refusal is its owner's business: the kinds' tables name the spec field at fault
// (src/kinds/refusals.ts).
import { OwnershipConflictError, RequeueAfter, RetryableError, TerminalError } from '../../runtime/errors.ts';
import { AwsTerminalError } from './errors.ts';

/** What AWS answered, as a refusal row sees it. */
export interface RefusalFacts {
  /** The error code, Fault/Exception suffix aside (e.g. DBSnapshotNotFound). */
  readonly code: string;
  /** AWS's own message. */
  readonly message: string;
  /** The API operation refused, when known (e.g. CreateDBInstance). */
  readonly operation?: string;
}

/**
 * One row of a table of refusals: which refusals it is about, and what it says of one (`H`) given
 * its owner's context (`C`). Omitted matchers match anything.
 */
export interface RefusalRow<C, H> {
  /** AWS error codes, Fault/Exception suffix aside. */
  readonly codes: readonly string[];
  /** AWS's message must match; the match is handed to `hint`. */
  readonly message?: RegExp;
  /** The API operations the row is about. */
  readonly operations?: readonly string[];
  /** What the row says for `context`; undefined when it does not apply after all (the next is tried). */
  readonly hint: (context: C, facts: RefusalFacts, match: RegExpMatchArray | undefined) => H | undefined;
}

const baseCode = (code: string): string => code.replace(/(Fault|Exception)$/, '');

/**
 * What the first row of `table` that matches `facts` says for `context` (rows are tried in order;
 * codes compare with their Fault/Exception suffix aside); undefined when none does. Pure.
 */
export function matchRefusal<C, H>(
  table: { readonly entries: readonly RefusalRow<C, H>[] },
  context: C,
  facts: RefusalFacts,
): H | undefined {
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
    const hint = e.hint(context, { ...facts, code }, match ?? undefined);
    if (hint !== undefined) return hint;
  }
  return undefined;
}

/**
 * A refusal whose message was already rewritten through a table: {@link awsRefusalIn} never finds
 * it (or one it wraps) again, however often it is rethrown. Keeps the code, so it is as terminal.
 */
export class ExplainedRefusal extends AwsTerminalError {}

/** A terminal refusal AWS wrote, as {@link awsRefusalIn} found it. */
export interface FoundRefusal {
  /** The typed error toTypedAwsError made of AWS's answer. */
  readonly refusal: AwsTerminalError;
  /** Its code, AWS's words and the operation. */
  readonly facts: RefusalFacts;
  /** Skylift's steps in front of AWS's words: what wrapped it, then the refusal's own step. */
  readonly step: string;
}

/**
 * The terminal refusal AWS wrote (an AwsTerminalError carrying AWS's code and words) in `err` or its
 * causes. Undefined when there is none, when it was already explained, and when an error on the way
 * states its own retry intent (a RetryableError, RequeueAfter, OwnershipConflictError or a
 * TerminalError of Skylift's own): that decision stands. Pure.
 */
export function awsRefusalIn(err: unknown): FoundRefusal | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 8 && e instanceof Error; depth++) {
    if (e instanceof ExplainedRefusal) return undefined;
    // An error that already states its retry intent is Skylift's decision (a hosted zone gone from
    // under a record is looked up again, a Conflict is a Conflict): never a Terminal refusal.
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
      return {
        refusal: e,
        facts: {
          code: e.code,
          message: e.awsMessage,
          ...(e.operation !== undefined ? { operation: e.operation } : {}),
        },
        step: `${prefix}${e.step ?? ''}`,
      };
    }
    e = e.cause;
  }
  return undefined;
}
