import { ChangeResourceRecordSetsCommand, type Change, type Route53Client } from '@aws-sdk/client-route-53';
import { backoffDelay, type BackoffPolicy } from '../../runtime/backoff.ts';
import type { Clock, TimerHandle } from '../../runtime/clock.ts';
import type { Logger } from '../../runtime/logger.ts';
import { OwnershipConflictError, TerminalError } from '../../runtime/errors.ts';
import {
  AwsRetryableError,
  AwsTerminalError,
  awsErrorCode,
  awsErrorOperation,
  classifyAwsError,
  retryAdvice,
  retryReasonOf,
} from '../aws/errors.ts';
import { isAlreadyExists, isNoSuchHostedZone, isNotFoundOnDelete, route53ErrorTable } from './errors.ts';
import { recordKey } from './names.ts';
import type { ZoneRecordCache } from './zoneRecords.ts';
import type { OwnershipTags } from '../../apis/managed.ts';

/**
 * A change refused before it was sent because another owner has a change to the same record set
 * waiting or in flight. Carries the facts (the record set, the other owner's ownership marks when
 * it gave them); the kind words the message for its object ({@link ownerAsSeenBy}).
 */
export class RecordSetBusyError extends OwnershipConflictError {
  /** The record set, as `recordKey` names it. */
  readonly recordSet: string;
  /** The other owner's ownership marks, if its submit gave them. */
  readonly other: OwnershipTags | undefined;
  constructor(recordSet: string, zoneId: string, other: OwnershipTags | undefined) {
    super(
      `another object is writing the same record set (${recordSet}) in zone ${zoneId}; Skylift will not let two objects own one record`,
    );
    this.recordSet = recordSet;
    this.other = other;
  }
}

/** A terminal refusal of a change, keeping AWS's words for the owner's refusal table. Pure. */
function refusal(err: unknown, message: string): AwsTerminalError {
  const code = awsErrorCode(err);
  const operation = awsErrorOperation(err);
  return new AwsTerminalError(`Route 53 rejected the change: ${code ?? 'error'}: ${message}`, code, {
    cause: err,
    awsMessage: message,
    step: 'change record sets',
    ...(operation !== undefined ? { operation } : {}),
  });
}

/** Route 53's per-request limits. */
export const route53Limits = { maxRecords: 1000, maxValueChars: 32_000 } as const;

/**
 * One owner's changes that exceed Route 53's per-request limits ({@link route53Limits}, UPSERT
 * counted twice) on their own: no batch can carry them.
 */
export class ChangeTooLargeError extends TerminalError {
  /** Their weight in records. */
  readonly records: number;
  /** Their weight in value characters. */
  readonly chars: number;
  constructor(weight: { readonly records: number; readonly chars: number }) {
    super(
      `the changes are too large for one Route 53 change (${weight.records} records, ${weight.chars} value characters; the limits are ${route53Limits.maxRecords} and ${route53Limits.maxValueChars}, UPSERT counted twice)`,
    );
    this.records = weight.records;
    this.chars = weight.chars;
  }
}

/** Where a submitted change stands; `withdrawn`: taken out of the queue before it was sent. */
export type TicketState = 'queued' | 'submitted' | 'applied' | 'failed' | 'withdrawn';

/** One object's changes (applied atomically, never split across batches) and their fate. */
export interface ChangeTicket {
  readonly id: number;
  readonly zoneId: string;
  /** The owning object's uid. */
  readonly owner: string;
  /** The owning object's ownership marks, when its submit gave them (for another owner's conflict). */
  readonly ownership?: OwnershipTags;
  /** Whom the change is for (the object's namespace): batches are shared fairly between tenants. */
  readonly tenant: string;
  readonly changes: readonly Change[];
  state: TicketState;
  /** The Route 53 change ID once applied. */
  changeId?: string;
  /** Why it failed (typed: TerminalError, OwnershipConflictError, AwsRetryableError). */
  error?: Error;
  /** Why it is still waiting, e.g. throttling. */
  note?: string;
  /**
   * Set while the zone's last attempt failed (throttled, with reason Throttled, or
   * otherwise) and the batch waits to be retried: the reconcile reports it as a
   * failure, not progress.
   */
  failing?: { readonly reason: string; readonly message: string };
  /** Bisection group after a failed batch; tickets of different groups never share a batch. */
  group?: number;
}

/** Who a submitted change is for and who signs it ({@link ChangeBatcher.submit}). */
export interface SubmitOptions {
  /** The owning object's ownership marks: another owner's conflict can say whose the change is. */
  readonly ownership?: OwnershipTags;
  /** Whom the change is for (the object's namespace). Default "". */
  readonly tenant?: string;
  /**
   * The client, that is the IAM identity, that must sign this change. Default the batcher's own
   * `route53`. A call only ever carries one signer's changes.
   */
  readonly via?: Route53Client;
}

/** Options for {@link ChangeBatcher}. */
export interface ChangeBatcherOptions {
  /** The client that signs a change whose submit names none. */
  readonly route53: Route53Client;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly records: ZoneRecordCache;
  /** How long a zone collects changes before sending them. Default 200 ms. */
  readonly windowMs?: number;
  readonly backoff?: BackoffPolicy;
  /** Give up on non-throttling transient errors after this many attempts (throttling retries forever). Default 8. */
  readonly maxTransientAttempts?: number;
  readonly random?: () => number;
  /** Told about every ChangeResourceRecordSets call: tickets and changes it carried, and how it ended. */
  readonly onBatch?: (
    zoneId: string,
    tickets: number,
    changes: number,
    outcome: 'applied' | 'throttled' | 'error' | 'split',
  ) => void;
}

/** A change's weight against Route 53's limits. */
interface Weight {
  readonly records: number;
  readonly chars: number;
}

/** A ticket as its zone's queue holds it: with its signer and its weight. */
interface QueuedTicket extends ChangeTicket {
  readonly via: Route53Client;
  readonly weight: Weight;
}

interface ZoneQueue {
  /** In submission order: the first queued ticket of a signer, group or tenant is its oldest. */
  queue: QueuedTicket[];
  /**
   * When each signer with queued tickets last had a call, on the count ticket ids come from: a
   * signer's turn is the later of this and its oldest queued ticket.
   */
  served: Map<Route53Client, number>;
  timer: TimerHandle | undefined;
  sending: boolean;
  /** Failed calls in a row, whoever signed them: the zone's backoff. */
  failures: number;
  /**
   * Failed calls in a row per signer: what gives up on a transient error, so another signer's
   * successes cannot keep a signer that always fails (a team's role it cannot use) retrying.
   */
  attempts: Map<Route53Client, number>;
}

/** Weight of a ticket against the limits (UPSERT counts twice, as Route 53 counts it). Pure. */
export function ticketWeight(changes: readonly Change[]): Weight {
  let records = 0;
  let chars = 0;
  for (const c of changes) {
    const factor = c.Action === 'UPSERT' ? 2 : 1;
    const values = c.ResourceRecordSet?.ResourceRecords ?? [];
    records += Math.max(1, values.length) * factor;
    chars += values.reduce((n, v) => n + (v.Value?.length ?? 0), 0) * factor;
  }
  return { records, chars };
}

/**
 * Coalesces record changes from many objects into few ChangeResourceRecordSets
 * calls per zone: submissions wait up to a short window, then go out in
 * batches within Route 53's limits (1,000 records, 32,000 value characters,
 * UPSERT counted twice), each object's changes kept together. One batcher can
 * serve several tenants (namespaces) and signers (IAM identities of one
 * account): a call carries one signer's changes and is signed by it, the
 * signer with the oldest waiting change goes next, and its batch is filled
 * round robin across tenants, first fit, so neither a tenant with many large
 * changes nor a busy signer holds the others back. `submit()` never blocks:
 * callers keep the ticket and look at it on their next reconcile. Throttling
 * backs off per zone and retries (never a terminal outcome); a batch Route 53
 * rejects is bisected until the faulty object's changes fail alone, so one bad
 * record cannot fail the others.
 */
export class ChangeBatcher {
  private readonly o: ChangeBatcherOptions;
  private readonly zones = new Map<string, ZoneQueue>();
  /** Ticket ids and signers' served marks ({@link ZoneQueue.served}): one count, so they compare. */
  private nextId = 1;
  private nextGroup = 1;
  private stopped = false;

  constructor(opts: ChangeBatcherOptions) {
    this.o = opts;
  }

  /**
   * Queues `changes` for `zoneId` on behalf of `owner` (a uid), to be signed by `opts.via` for
   * `opts.tenant` ({@link SubmitOptions}). Throws RecordSetBusyError (an OwnershipConflictError)
   * when another owner, of any tenant or signer, has a pending change to the same record set, and
   * ChangeTooLargeError (a TerminalError) when the changes alone exceed Route 53's limits.
   */
  submit(zoneId: string, owner: string, changes: readonly Change[], opts: SubmitOptions = {}): ChangeTicket {
    const zq = this.zone(zoneId);
    const keys = new Set(changes.map((c) => keyOf(c)));
    for (const t of zq.queue) {
      if (t.owner === owner) continue;
      const shared = t.changes.map((c) => keyOf(c)).find((k) => keys.has(k));
      if (shared !== undefined) throw new RecordSetBusyError(shared, zoneId, t.ownership);
    }
    const weight = ticketWeight(changes);
    if (!fits(weight, { records: route53Limits.maxRecords, chars: route53Limits.maxValueChars }))
      throw new ChangeTooLargeError(weight);
    const ticket: QueuedTicket = {
      id: this.nextId++,
      zoneId,
      owner,
      tenant: opts.tenant ?? '',
      changes,
      state: 'queued',
      via: opts.via ?? this.o.route53,
      weight,
      ...(opts.ownership !== undefined ? { ownership: opts.ownership } : {}),
    };
    zq.queue.push(ticket);
    this.schedule(zoneId, this.o.windowMs ?? 200);
    return ticket;
  }

  /**
   * Takes `owner`'s changes that are still waiting out of every zone's queue, so they are never
   * sent (their tickets become `withdrawn`), and returns how many of its changes are in flight:
   * sent, not answered yet. Those cannot be called back; a caller that must not let go while
   * Route 53 may still act for the owner (deletionPolicy Orphan) asks again until this is 0.
   */
  withdraw(owner: string): { withdrawn: number; inFlight: number } {
    let withdrawn = 0;
    let inFlight = 0;
    for (const zq of this.zones.values()) {
      for (const t of [...zq.queue]) {
        if (t.owner !== owner) continue;
        if (t.state === 'submitted') {
          inFlight++;
          continue;
        }
        t.state = 'withdrawn';
        delete t.note;
        delete t.failing;
        zq.queue.splice(zq.queue.indexOf(t), 1);
        withdrawn++;
      }
      if (!zq.sending && !zq.queue.some((t) => t.state === 'queued')) {
        zq.timer?.cancel();
        zq.timer = undefined;
      }
    }
    return { withdrawn, inFlight };
  }

  /** Tickets waiting or in flight, per zone (for metrics and tests). */
  pending(zoneId: string): number {
    return this.zones.get(zoneId)?.queue.length ?? 0;
  }

  /** Stops sending; queued tickets stay queued. */
  stop(): void {
    this.stopped = true;
    for (const zq of this.zones.values()) zq.timer?.cancel();
  }

  private zone(zoneId: string): ZoneQueue {
    let zq = this.zones.get(zoneId);
    if (zq === undefined) {
      zq = {
        queue: [],
        served: new Map(),
        timer: undefined,
        sending: false,
        failures: 0,
        attempts: new Map(),
      };
      this.zones.set(zoneId, zq);
    }
    return zq;
  }

  private schedule(zoneId: string, delayMs: number): void {
    const zq = this.zone(zoneId);
    if (zq.sending || zq.timer !== undefined || this.stopped) return;
    zq.timer = this.o.clock.setTimer(delayMs, () => {
      zq.timer = undefined;
      void this.flush(zoneId);
    });
  }

  /**
   * The next batch: queued tickets of one signer and one bisection group (halves never meet again).
   * The signer whose turn is oldest goes next: its turn is its oldest queued ticket's age, or its
   * last call's when that is later, so a signer just served waits behind those already waiting and
   * none starves. Within its oldest group, the tickets fill the batch round robin across tenants
   * (in the order of each tenant's oldest ticket), each turn taking the tenant's oldest ticket that
   * still fits: one that does not is passed over, not a stop (first fit).
   */
  private pack(zq: ZoneQueue): QueuedTicket[] {
    let first: QueuedTicket | undefined;
    let firstTurn = Infinity;
    const waiting = new Set<Route53Client>();
    for (const t of zq.queue) {
      if (t.state !== 'queued') continue;
      waiting.add(t.via);
      const turn = Math.max(t.id, zq.served.get(t.via) ?? 0);
      if (turn < firstTurn) [first, firstTurn] = [t, turn];
    }
    // A signer with nothing queued needs no mark (its next ticket's id is later than any) and no
    // count of failures (it has nothing left to give up on).
    for (const via of zq.served.keys()) if (!waiting.has(via)) zq.served.delete(via);
    for (const via of zq.attempts.keys()) if (!waiting.has(via)) zq.attempts.delete(via);
    if (first === undefined) return [];
    const byTenant = new Map<string, QueuedTicket[]>();
    for (const t of zq.queue) {
      if (t.state !== 'queued' || t.via !== first.via || t.group !== first.group) continue;
      const mine = byTenant.get(t.tenant);
      if (mine === undefined) byTenant.set(t.tenant, [t]);
      else mine.push(t);
    }
    const batch: QueuedTicket[] = [];
    let room: Weight = { records: route53Limits.maxRecords, chars: route53Limits.maxValueChars };
    // Room only shrinks, so a ticket that does not fit now never will: each is looked at once.
    let turns = [...byTenant.values()].map((tickets) => ({ tickets, next: 0 }));
    while (turns.length > 0) {
      const stillFitting: typeof turns = [];
      for (const turn of turns) {
        let taken: QueuedTicket | undefined;
        while (taken === undefined && turn.next < turn.tickets.length) {
          const t = turn.tickets[turn.next++];
          if (t !== undefined && fits(t.weight, room)) taken = t;
        }
        if (taken === undefined) continue;
        batch.push(taken);
        room = { records: room.records - taken.weight.records, chars: room.chars - taken.weight.chars };
        stillFitting.push(turn);
      }
      turns = stillFitting;
    }
    return batch;
  }

  /**
   * Whether one signer and bisection group has queued a full batch or more, by records or by
   * value characters: waiting a window would not fill its next batch any further.
   */
  private fullBatchWaiting(zq: ZoneQueue): boolean {
    const waiting = new Map<Route53Client, Map<number | undefined, Weight>>();
    for (const t of zq.queue) {
      if (t.state !== 'queued') continue;
      const groups = waiting.get(t.via) ?? new Map<number | undefined, Weight>();
      waiting.set(t.via, groups);
      const sum = groups.get(t.group) ?? { records: 0, chars: 0 };
      const total = { records: sum.records + t.weight.records, chars: sum.chars + t.weight.chars };
      if (total.records >= route53Limits.maxRecords || total.chars >= route53Limits.maxValueChars)
        return true;
      groups.set(t.group, total);
    }
    return false;
  }

  private async flush(zoneId: string): Promise<void> {
    const zq = this.zone(zoneId);
    if (zq.sending || this.stopped) return;
    const batch = this.pack(zq);
    const signer = batch[0]?.via;
    if (signer === undefined) return;
    zq.sending = true;
    zq.served.set(signer, this.nextId++);
    for (const t of batch) t.state = 'submitted';
    const changes = batch.flatMap((t) => t.changes);
    this.o.logger.debug(
      {
        zoneId,
        tickets: batch.length,
        tenants: new Set(batch.map((t) => t.tenant)).size,
        changes: changes.map(
          (c) => `${c.Action ?? ''} ${c.ResourceRecordSet?.Type ?? ''} ${c.ResourceRecordSet?.Name ?? ''}`,
        ),
      },
      'sending Route 53 change batch',
    );
    // After a send, wait a window again so that the next batch fills up too,
    // unless a full batch is already waiting.
    let again = this.fullBatchWaiting(zq) ? 0 : (this.o.windowMs ?? 200);
    try {
      // Signed by the identity its changes were submitted for: one team's role never writes another's.
      const out = await signer.send(
        new ChangeResourceRecordSetsCommand({ HostedZoneId: zoneId, ChangeBatch: { Changes: [...changes] } }),
      );
      const changeId = (out.ChangeInfo?.Id ?? '').replace(/^\/?change\//, '');
      for (const t of batch) this.finish(zq, t, { state: 'applied', changeId });
      this.o.records.applyChanges(zoneId, changes);
      zq.failures = 0;
      zq.attempts.delete(signer);
      this.o.onBatch?.(zoneId, batch.length, changes.length, 'applied');
    } catch (err) {
      again = this.handleFailure(zoneId, zq, signer, batch, err);
    } finally {
      zq.sending = false;
    }
    if (zq.queue.some((t) => t.state === 'queued')) this.schedule(zoneId, again);
  }

  /** Decides what a failed batch means; returns the delay before the next attempt. */
  private handleFailure(
    zoneId: string,
    zq: ZoneQueue,
    signer: Route53Client,
    batch: QueuedTicket[],
    err: unknown,
  ): number {
    const cls = classifyAwsError(err, route53ErrorTable);
    const log = this.o.logger;
    if (isNoSuchHostedZone(err)) {
      // The zone is gone: every change to it fails alike, so bisecting would only repeat the call.
      // Each ticket fails with the code kept, so its owner can tell the zone (not its record) is gone.
      const message = err instanceof Error ? err.message : String(err);
      const failed = [...batch, ...zq.queue.filter((t) => t.state === 'queued' && !batch.includes(t))];
      this.o.records.invalidate(zoneId);
      this.o.onBatch?.(
        zoneId,
        batch.length,
        batch.reduce((n, t) => n + t.changes.length, 0),
        'error',
      );
      for (const t of failed) {
        this.finish(zq, t, {
          state: 'failed',
          error: new AwsTerminalError(
            `Route 53 rejected the change: NoSuchHostedZone: ${message}`,
            'NoSuchHostedZone',
            { cause: err },
          ),
        });
      }
      log.warn({ zoneId, tickets: failed.length }, 'Route 53 says the hosted zone does not exist');
      zq.failures = 0;
      zq.attempts.clear();
      return 0;
    }
    if (cls === 'terminal') {
      this.o.records.invalidate(zoneId);
      if (batch.length > 1) {
        // Bisect: the halves go out separately, so only the faulty object's changes fail in the end.
        const mid = Math.ceil(batch.length / 2);
        const [a, b] = [this.nextGroup++, this.nextGroup++];
        batch.forEach((t, i) => {
          t.state = 'queued';
          t.group = i < mid ? a : b;
        });
        this.o.onBatch?.(
          zoneId,
          batch.length,
          batch.reduce((n, t) => n + t.changes.length, 0),
          'split',
        );
        log.info(
          { zoneId, tickets: batch.length },
          'Route 53 rejected a change batch; splitting it to find the faulty change',
        );
        return 0;
      }
      const t = batch[0];
      if (t === undefined) return 0;
      this.o.onBatch?.(zoneId, 1, t.changes.length, 'error');
      if (t.changes.every((c) => c.Action === 'DELETE') && isNotFoundOnDelete(err)) {
        this.finish(zq, t, { state: 'applied', changeId: '' });
        return 0;
      }
      const message = err instanceof Error ? err.message : String(err);
      const error = isAlreadyExists(err)
        ? new OwnershipConflictError(
            `Route 53 already has this record set and it is not managed by Skylift: ${message}`,
          )
        : refusal(err, message);
      this.finish(zq, t, { state: 'failed', error });
      return 0;
    }
    zq.failures++;
    const attempts = (zq.attempts.get(signer) ?? 0) + 1;
    zq.attempts.set(signer, attempts);
    const delay = backoffDelay(
      this.o.backoff ?? { baseMs: 500, capMs: 30_000, jitter: 0.2 },
      zq.failures,
      this.o.random,
    );
    const throttled = cls === 'throttling';
    const reason = retryReasonOf(cls);
    this.o.onBatch?.(
      zoneId,
      batch.length,
      batch.reduce((n, t) => n + t.changes.length, 0),
      throttled ? 'throttled' : 'error',
    );
    const message = err instanceof Error ? err.message : String(err);
    if (!throttled && attempts >= (this.o.maxTransientAttempts ?? 8)) {
      for (const t of batch) {
        this.finish(zq, t, {
          state: 'failed',
          error: new AwsRetryableError(reason, `Route 53 change failed: ${message}`, awsErrorCode(err)),
        });
      }
      zq.failures = 0;
      zq.attempts.delete(signer);
      return 0;
    }
    // Stable text (no countdown): an unchanged note writes no status.
    const advice = retryAdvice[cls];
    const note = `${throttled ? 'Route 53 is throttling' : 'Route 53 failed'} (${awsErrorCode(err) ?? message}${advice !== undefined ? `: ${advice}` : ''}); the zone's batch is retried with backoff`;
    for (const t of batch) {
      t.state = 'queued';
      t.note = note;
      t.failing = { reason, message: note };
    }
    log.warn(
      { zoneId, tickets: batch.length, err: message, delayMs: delay },
      throttled ? 'Route 53 throttled a change batch' : 'Route 53 change batch failed',
    );
    return delay;
  }

  private finish(
    zq: ZoneQueue,
    t: QueuedTicket,
    result: { state: 'applied'; changeId: string } | { state: 'failed'; error: Error },
  ): void {
    t.state = result.state;
    if (result.state === 'applied') t.changeId = result.changeId;
    else t.error = result.error;
    delete t.note;
    delete t.failing;
    const i = zq.queue.indexOf(t);
    if (i >= 0) zq.queue.splice(i, 1);
  }
}

/** Whether `w` fits in `room`. Pure. */
function fits(w: Weight, room: Weight): boolean {
  return w.records <= room.records && w.chars <= room.chars;
}

function keyOf(c: Change): string {
  const rr = c.ResourceRecordSet;
  return recordKey(rr?.Name ?? '', rr?.Type ?? '', rr?.SetIdentifier);
}
