// AWS's terminal refusals in a spec's terms: each kind owns a table of rows (code, message
// pattern, operation → the spec field and a fix; src/kinds/<kind>/awsRefusals.ts); this module
// composes the Terminal message from the row that matches, purely. A kind's adapterFor.ts runs its
// adapter through the engine's explainErrors with explainRefusal and its table, so every Terminal
// message the adapter ends with goes through the table.
import {
  awsRefusalIn,
  ExplainedRefusal,
  matchRefusal,
  type RefusalFacts,
  type RefusalRow,
} from '../providers/aws/refusals.ts';

/** Where the generic advice for an unmapped refusal points. */
export const refusalDocs = 'docs/troubleshooting.md#reading-a-terminal-message';

/** Where the advice for a refused IAM action points. */
export const iamPolicyDocs = 'deploy/iam/policy.json, docs/install.md#1-the-iam-role-eks-with-irsa';

/**
 * What a matched entry says: the spec field (as in the CRD, e.g.
 * `spec.engineVersion`) and its value, or — for refusals no field explains
 * (quotas, IAM) — a `subject` saying what is short; and always the fix.
 */
export type RefusalHint =
  | { readonly field: string; readonly value?: unknown; readonly fix: string }
  | { readonly subject: string; readonly fix: string };

/** One row of a kind's table: the refusals it is about, and the field and fix for a spec `S`. */
export type Refusal<S> = RefusalRow<S, RefusalHint>;

/** A kind's refusal table: the service's name for messages and the rows, most specific first. */
export interface RefusalTable<S> {
  /** How messages name the service, e.g. "RDS". */
  readonly service: string;
  readonly entries: readonly Refusal<S>[];
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

/**
 * `err` with its message rewritten through `table` when it is (or wraps) a
 * terminal refusal AWS wrote (see awsRefusalIn); any other error unchanged.
 * The result is an AwsTerminalError with the same code, so retry intent does
 * not change, and it is never explained again. Pure.
 */
export function explainRefusal<S>(err: unknown, table: RefusalTable<S>, spec: S): unknown {
  const found = awsRefusalIn(err);
  if (found === undefined) return err;
  const { refusal, facts, step } = found;
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
