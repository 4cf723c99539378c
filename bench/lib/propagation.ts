// Route 53 propagation as the bench plays it: every change stays PENDING for a while after it was
// submitted, as on real Route 53 (moto answers INSYNC at once), and the bench records when the
// proxy first answered INSYNC to a GetChange of each change, to measure how long after that
// answer each record was seen Ready (issue 16: Ready ≤ 2 s after Route 53 reports INSYNC).
import { performance } from 'node:perf_hooks';
import type { FaultRule } from '../../dev/awsFaultProxy.ts';
import type { AwsCall } from '../../dev/awsOperation.ts';
import { distribution, type Distribution } from './stats.ts';

/** What a scenario with propagation measured (ScenarioResult.propagation). */
export interface PropagationResult {
  /** How long each change stayed PENDING after it was submitted, ms. */
  readonly pendingMs: number;
  /** Change batches submitted. */
  readonly changes: number;
  /** GetChange calls the operator made. */
  readonly getChangeCalls: number;
  /** Per record: from the first GetChange answered INSYNC for its change to the record seen Ready, ms. */
  readonly readyAfterInsyncAnswerMs: Distribution;
  /**
   * Per record: from the moment its change became INSYNC (submitted + pendingMs) to Ready, ms; this
   * includes the operator's wait until its next GetChange.
   */
  readonly readyAfterInsyncMs: Distribution;
  /** Records seen Ready whose change the bench could not tell (should be 0). */
  readonly unmatched: number;
}

/** One change batch as the proxy saw it (performance.now() milliseconds). */
interface ChangeSeen {
  readonly submittedAt: number;
  /** Record names in the batch, lower case, without the trailing dot. */
  readonly names: readonly string[];
  insyncAnsweredAt?: number;
}

/** The change ID in a Route 53 answer or path: `C2682N5HXP0BZ4` from `/change/C2682N5HXP0BZ4`. Pure. */
export function changeIdIn(text: string): string | undefined {
  return /\/change\/([A-Za-z0-9]+)/.exec(text)?.[1];
}

/** The record names of a ChangeResourceRecordSets request body, lower case, no trailing dot. Pure. */
export function changedNames(body: string): string[] {
  return [...body.matchAll(/<Name>([^<]+)<\/Name>/g)].map((m) =>
    (m[1] ?? '').toLowerCase().replace(/\.$/, ''),
  );
}

/**
 * Plays Route 53's propagation delay through the bench's AWS proxy and records what it answered.
 * `rule()` is the proxy rule (install it once, for the whole scenario); `result()` matches the
 * records' Ready times to their changes. Not thread-safe in any sense that matters: the proxy runs
 * in the bench's process, on its event loop.
 */
export class Propagation {
  private readonly pendingMs: number;
  private readonly now: () => number;
  private readonly changes = new Map<string, ChangeSeen>();
  private getChangeCalls = 0;
  private submitted = 0;

  constructor(pendingMs: number, now: () => number = () => performance.now()) {
    this.pendingMs = pendingMs;
    this.now = now;
  }

  /** The proxy rule: a change answers PENDING until `pendingMs` after its submission. */
  rule(): FaultRule {
    return {
      service: 'route53',
      operation: /^(GetChange|ChangeResourceRecordSets)$/,
      fault: { kind: 'rewrite', rewrite: (body, call) => this.answer(body, call) },
    };
  }

  /** The answer to one call, rewritten to PENDING while its change is propagating. */
  answer(body: string, call: AwsCall): string {
    const at = this.now();
    if (call.operation === 'ChangeResourceRecordSets') {
      if (changeIdIn(body) === undefined) return body; // a refused batch: an error answer, no change
      // moto answers every change with the same ID (and GetChange with the ID it is asked for):
      // each change gets its own, as on Route 53.
      const id = `SKYBENCH${++this.submitted}`;
      this.changes.set(id, { submittedAt: at, names: changedNames(call.body) });
      return pending(body.replace(/\/change\/[A-Za-z0-9]+/, `/change/${id}`));
    }
    this.getChangeCalls++;
    const change = this.changes.get(changeIdIn(call.path) ?? '');
    if (change === undefined) return body;
    if (at < change.submittedAt + this.pendingMs) return pending(body);
    if (body.includes('<Status>INSYNC</Status>')) change.insyncAnsweredAt ??= at;
    return body;
  }

  /**
   * The figures of the scenario: `readyAt` is each record's FQDN (lower case, no trailing dot)
   * with the time it was first seen Ready. A record's change is the last one naming it that was
   * answered INSYNC before it was seen Ready.
   */
  result(readyAt: ReadonlyMap<string, number>): PropagationResult {
    const afterAnswer: number[] = [];
    const afterInsync: number[] = [];
    let unmatched = 0;
    for (const [name, ready] of readyAt) {
      let change: ChangeSeen | undefined;
      for (const c of this.changes.values()) {
        if (!c.names.includes(name) || c.insyncAnsweredAt === undefined || c.insyncAnsweredAt > ready)
          continue;
        if (change === undefined || c.submittedAt > change.submittedAt) change = c;
      }
      if (change?.insyncAnsweredAt === undefined) {
        unmatched++;
        continue;
      }
      afterAnswer.push(Math.round(ready - change.insyncAnsweredAt));
      afterInsync.push(Math.round(ready - (change.submittedAt + this.pendingMs)));
    }
    return {
      pendingMs: this.pendingMs,
      changes: this.changes.size,
      getChangeCalls: this.getChangeCalls,
      readyAfterInsyncAnswerMs: distribution(afterAnswer),
      readyAfterInsyncMs: distribution(afterInsync),
      unmatched,
    };
  }
}

/** A Route 53 answer with its change status PENDING. Pure. */
function pending(body: string): string {
  return body.replace(/<Status>INSYNC<\/Status>/g, '<Status>PENDING</Status>');
}
