// The Route 53 change batcher alone, with the SDK client mocked and time faked.
import { ChangeResourceRecordSetsCommand, Route53Client, type Change } from '@aws-sdk/client-route-53';
import { mockClient } from 'aws-sdk-client-mock';
import { pino } from 'pino';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  ChangeBatcher,
  ChangeTooLargeError,
  RecordSetBusyError,
  route53Limits,
  ticketWeight,
} from '../../src/providers/route53/changeBatcher.ts';
import { recordSetBusyError } from '../../src/kinds/dnsrecord/adapter.ts';
import { isNoSuchHostedZone } from '../../src/providers/route53/errors.ts';
import { ZoneRecordCache } from '../../src/providers/route53/zoneRecords.ts';
import { OwnershipConflictError, TerminalError } from '../../src/runtime/errors.ts';
import { FakeClock } from '../support/fakeClock.ts';

const r53 = mockClient(Route53Client);

function aRecord(name: string, value = '192.0.2.1', action: Change['Action'] = 'CREATE'): Change {
  return {
    Action: action,
    ResourceRecordSet: {
      Name: `${name}.example.com.`,
      Type: 'A',
      TTL: 60,
      ResourceRecords: [{ Value: value }],
    },
  };
}

/** A TXT record with `values` values of `chars` characters each (quotes included). */
function txtRecord(name: string, values: number, chars: number, action: Change['Action'] = 'CREATE'): Change {
  return {
    Action: action,
    ResourceRecordSet: {
      Name: `${name}.example.com.`,
      Type: 'TXT',
      TTL: 60,
      ResourceRecords: Array.from({ length: values }, () => ({ Value: `"${'x'.repeat(chars - 2)}"` })),
    },
  };
}

/** An A record with `values` addresses: `values` records of weight, few characters. */
function wideRecord(name: string, values: number): Change {
  return {
    Action: 'CREATE',
    ResourceRecordSet: {
      Name: `${name}.example.com.`,
      Type: 'A',
      TTL: 60,
      ResourceRecords: Array.from({ length: values }, (_, i) => ({ Value: `10.0.${i >> 8}.${i & 255}` })),
    },
  };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
}

/** Moves time a window at a time until `done` (at most `max` windows). */
async function drain(clock: FakeClock, done: () => boolean, max = 400): Promise<void> {
  for (let i = 0; i < max && !done(); i++) {
    clock.advance(100);
    await settle();
  }
}

function setup(): { batcher: ChangeBatcher; clock: FakeClock; outcomes: string[]; client: Route53Client } {
  const clock = new FakeClock();
  const client = new Route53Client({ region: 'us-east-1' });
  const outcomes: string[] = [];
  const batcher = new ChangeBatcher({
    route53: client,
    clock,
    logger: pino({ level: 'silent' }),
    records: new ZoneRecordCache(client, clock, 30_000),
    windowMs: 100,
    random: () => 0.5,
    onBatch: (_z, tickets, _c, outcome) => outcomes.push(`${outcome}:${tickets}`),
  });
  return { batcher, clock, outcomes, client };
}

function sentBatches(): string[][] {
  return r53
    .commandCalls(ChangeResourceRecordSetsCommand)
    .map((c) => (c.args[0].input.ChangeBatch?.Changes ?? []).map((ch) => ch.ResourceRecordSet?.Name ?? ''));
}

/** Each call's changes and the client that sent it. */
function sentCalls(): { changes: Change[]; via: unknown }[] {
  return r53.commandCalls(ChangeResourceRecordSetsCommand).map((c) => {
    const via: unknown = c.thisValue;
    return { changes: c.args[0].input.ChangeBatch?.Changes ?? [], via };
  });
}

function accepting(): void {
  r53
    .on(ChangeResourceRecordSetsCommand)
    .resolves({ ChangeInfo: { Id: '/change/OK', Status: 'PENDING', SubmittedAt: new Date() } });
}

/** Every call stays within Route 53's limits. */
function expectWithinLimits(): void {
  for (const { changes } of sentCalls()) {
    const w = ticketWeight(changes);
    expect(w.records).toBeLessThanOrEqual(route53Limits.maxRecords);
    expect(w.chars).toBeLessThanOrEqual(route53Limits.maxValueChars);
  }
}

beforeEach(() => {
  r53.reset();
});

describe('ChangeBatcher', () => {
  it('coalesces changes from many owners within the window into one call', async () => {
    r53
      .on(ChangeResourceRecordSetsCommand)
      .resolves({ ChangeInfo: { Id: '/change/C1', Status: 'PENDING', SubmittedAt: new Date() } });
    const { batcher, clock } = setup();
    const tickets = Array.from({ length: 50 }, (_, i) =>
      batcher.submit('Z1', `uid-${i}`, [aRecord(`r${i}`)]),
    );
    expect(tickets.every((t) => t.state === 'queued')).toBe(true);
    clock.advance(100);
    await settle();
    expect(sentBatches()).toHaveLength(1);
    expect(sentBatches()[0]).toHaveLength(50);
    expect(tickets.every((t) => t.state === 'applied' && t.changeId === 'C1')).toBe(true);
  });

  it('splits by Route 53 limits, UPSERT counting twice, never splitting one owner’s changes', async () => {
    r53
      .on(ChangeResourceRecordSetsCommand)
      .resolves({ ChangeInfo: { Id: '/change/C2', Status: 'PENDING', SubmittedAt: new Date() } });
    const { batcher, clock } = setup();
    // 300 owners × (UPSERT A + UPSERT TXT) = 1,200 weighted records: more than one call's 1,000.
    for (let i = 0; i < 300; i++) {
      batcher.submit('Z1', `uid-${i}`, [
        aRecord(`r${i}`, '192.0.2.1', 'UPSERT'),
        aRecord(`_o.r${i}`, '192.0.2.2', 'UPSERT'),
      ]);
    }
    expect(ticketWeight([aRecord('x', '1', 'UPSERT')]).records).toBe(2);
    clock.advance(100);
    await settle();
    clock.advance(100); // the rest (not a full batch) waits one more window
    await settle();
    const batches = sentBatches();
    expect(batches.map((b) => b.length)).toEqual([500, 100]);
    for (const b of batches) for (let i = 0; i < b.length; i += 2) expect(b[i + 1]).toBe(`_o.${b[i] ?? ''}`);
  });

  it('bisects a rejected batch so that only the faulty owner fails', async () => {
    r53.on(ChangeResourceRecordSetsCommand).callsFake((input: { ChangeBatch?: { Changes?: Change[] } }) => {
      if ((input.ChangeBatch?.Changes ?? []).some((c) => c.ResourceRecordSet?.Name?.startsWith('poison'))) {
        throw Object.assign(new Error('Invalid Resource Record: poison'), {
          name: 'InvalidChangeBatch',
          $metadata: { httpStatusCode: 400 },
        });
      }
      return { ChangeInfo: { Id: '/change/OK', Status: 'PENDING', SubmittedAt: new Date() } };
    });
    const { batcher, clock, outcomes } = setup();
    const good = Array.from({ length: 7 }, (_, i) => batcher.submit('Z1', `g${i}`, [aRecord(`good${i}`)]));
    const bad = batcher.submit('Z1', 'bad', [aRecord('poison')]);
    clock.advance(100);
    for (let i = 0; i < 10; i++) {
      await settle();
      clock.advance(100);
    }
    expect(good.every((t) => t.state === 'applied')).toBe(true);
    expect(bad.state).toBe('failed');
    expect(bad.error).toBeInstanceOf(TerminalError);
    expect(bad.error?.message).toContain('Invalid Resource Record: poison');
    expect(outcomes.filter((o) => o.startsWith('split')).length).toBeGreaterThanOrEqual(1);
    expect(sentBatches().length).toBeLessThanOrEqual(8);
  });

  it('fails every ticket of a zone that no longer exists with one call, keeping NoSuchHostedZone', async () => {
    r53.on(ChangeResourceRecordSetsCommand).rejects(
      Object.assign(new Error('No hosted zone found with ID: Z1'), {
        name: 'NoSuchHostedZone',
        $metadata: { httpStatusCode: 404 },
      }),
    );
    const { batcher, clock, outcomes } = setup();
    const sent = Array.from({ length: 4 }, (_, i) => batcher.submit('Z1', `u${i}`, [aRecord(`r${i}`)]));
    clock.advance(100);
    // Submitted while the batch is in flight: it would fail the same way, so it fails with it.
    const late = batcher.submit('Z1', 'late', [aRecord('late')]);
    for (let i = 0; i < 5; i++) {
      await settle();
      clock.advance(100);
    }
    expect(sentBatches()).toHaveLength(1);
    expect(outcomes).toEqual(['error:4']);
    for (const t of [...sent, late]) {
      expect(t.state).toBe('failed');
      expect(t.error).toBeInstanceOf(TerminalError);
      expect(isNoSuchHostedZone(t.error)).toBe(true);
    }
    expect(batcher.pending('Z1')).toBe(0);
  });

  it('backs off per zone on throttling and retries the same batch, never failing it', async () => {
    let calls = 0;
    r53.on(ChangeResourceRecordSetsCommand).callsFake(() => {
      calls++;
      if (calls <= 3)
        throw Object.assign(new Error('Rate exceeded'), {
          name: 'Throttling',
          $metadata: { httpStatusCode: 400 },
        });
      return { ChangeInfo: { Id: '/change/C3', Status: 'PENDING', SubmittedAt: new Date() } };
    });
    const { batcher, clock } = setup();
    const t = batcher.submit('Z1', 'u', [aRecord('www')]);
    clock.advance(100);
    await settle();
    expect(t.state).toBe('queued');
    expect(t.note).toContain('Route 53 is throttling');
    // 500 ms, 1 s, 2 s of backoff (jitter pinned to the middle).
    clock.advance(499);
    await settle();
    expect(calls).toBe(1);
    clock.advance(1);
    await settle();
    expect(calls).toBe(2);
    clock.advance(1000);
    await settle();
    clock.advance(2000);
    await settle();
    expect(calls).toBe(4);
    expect(t.state).toBe('applied');
  });

  it('refuses a second owner for a record set with a pending change', () => {
    const { batcher } = setup();
    batcher.submit('Z1', 'first', [aRecord('www')]);
    expect(() => batcher.submit('Z1', 'second', [aRecord('www', '192.0.2.9', 'UPSERT')])).toThrow(
      OwnershipConflictError,
    );
    expect(() => batcher.submit('Z2', 'second', [aRecord('www')])).not.toThrow();
    expect(() => batcher.submit('Z1', 'first', [aRecord('www', '192.0.2.9', 'UPSERT')])).not.toThrow();
    // One queue per zone: another namespace, signing with another role, is refused alike.
    const other = new Route53Client({ region: 'us-east-1' });
    expect(() =>
      batcher.submit('Z1', 'third', [aRecord('www', '192.0.2.7', 'UPSERT')], { tenant: 'bank', via: other }),
    ).toThrow(RecordSetBusyError);
  });

  // Issue 27, item 18: the Conflict did not say whose the pending change was.
  it.each([
    {
      reason: 'an object of the same namespace and cluster is named',
      other: { cluster: 'c1', owner: 'shop/one', uid: 'u1' },
      want: 'shop/one (uid u1) is writing the record set www.example.com/A',
    },
    {
      reason: "another namespace's object is not named",
      other: { cluster: 'c1', owner: 'bank/one', uid: 'u1' },
      want: 'a Skylift object in another namespace is writing the record set www.example.com/A',
    },
  ])('says whose pending change refuses a second owner: $reason', ({ other, want }) => {
    const { batcher } = setup();
    batcher.submit('Z1', other.uid, [aRecord('www')], { ownership: other });
    let refused: unknown;
    try {
      batcher.submit('Z1', 'u2', [aRecord('www')], {
        ownership: { cluster: 'c1', owner: 'shop/two', uid: 'u2' },
      });
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(RecordSetBusyError);
    if (!(refused instanceof RecordSetBusyError)) return;
    expect(refused.other).toEqual(other);
    const ours = { cluster: 'c1', owner: 'shop/two', uid: 'u2' };
    const zone = { id: 'Z1', name: 'example.com.', private: false };
    const message = recordSetBusyError(refused, { identity: 'www.example.com/A', zone }, ours).message;
    expect(message).toContain(want);
    if (other.owner.startsWith('bank/')) expect(message).not.toContain('bank');
  });

  it('refuses a change too large for one call', () => {
    const { batcher } = setup();
    const huge: Change = {
      Action: 'UPSERT',
      ResourceRecordSet: {
        Name: 'big.example.com.',
        Type: 'TXT',
        TTL: 60,
        ResourceRecords: Array.from({ length: 100 }, () => ({ Value: `"${'x'.repeat(200)}"` })),
      },
    };
    expect(() => batcher.submit('Z1', 'u', [huge])).toThrow(/too large/);
    // Typed, carrying its weight: the owner words the message.
    const err: unknown = (() => {
      try {
        batcher.submit('Z1', 'u', [huge]);
        return undefined;
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ChangeTooLargeError);
    expect(err).toBeInstanceOf(TerminalError);
    expect(err).toMatchObject(ticketWeight([huge]));
  });

  it('treats deleting a record that is already gone as done', async () => {
    r53
      .on(ChangeResourceRecordSetsCommand)
      .rejects(
        Object.assign(
          new Error(
            "Tried to delete resource record set [name='x.example.com.', type='A'] but it was not found",
          ),
          { name: 'InvalidChangeBatch', $metadata: { httpStatusCode: 400 } },
        ),
      );
    const { batcher, clock } = setup();
    const t = batcher.submit('Z1', 'u', [aRecord('x', '192.0.2.1', 'DELETE')]);
    clock.advance(100);
    await settle();
    expect(t.state).toBe('applied');
  });

  it('withdraws an owner’s waiting changes so they are never sent, and reports one in flight', async () => {
    let answer: (() => void) | undefined;
    r53.on(ChangeResourceRecordSetsCommand).callsFake(
      () =>
        new Promise((resolve) => {
          answer = () => {
            resolve({ ChangeInfo: { Id: '/change/C9', Status: 'PENDING', SubmittedAt: new Date() } });
          };
        }),
    );
    const { batcher, clock } = setup();
    const waiting = batcher.submit('Z1', 'orphan', [aRecord('kept')]);
    const other = batcher.submit('Z1', 'other', [aRecord('stays')]);
    expect(batcher.withdraw('orphan')).toEqual({ withdrawn: 1, inFlight: 0 });
    expect(waiting.state).toBe('withdrawn');
    clock.advance(100);
    await settle();
    expect(sentBatches()).toEqual([['stays.example.com.']]);

    // Sent and not answered: it cannot be called back, so it is reported until it is answered.
    const sent = batcher.submit('Z1', 'orphan', [aRecord('kept', '192.0.2.2', 'UPSERT')]);
    answer?.();
    await settle();
    expect(other.state).toBe('applied');
    clock.advance(100);
    await settle();
    expect(sent.state).toBe('submitted');
    expect(batcher.withdraw('orphan')).toEqual({ withdrawn: 0, inFlight: 1 });
    answer?.();
    await settle();
    expect(sent.state).toBe('applied');
    expect(batcher.withdraw('orphan')).toEqual({ withdrawn: 0, inFlight: 0 });
    expect(batcher.pending('Z1')).toBe(0);
  });

  it('sends nothing once the only waiting change is withdrawn', async () => {
    const { batcher, clock } = setup();
    batcher.submit('Z1', 'orphan', [aRecord('kept')]);
    batcher.withdraw('orphan');
    clock.advance(1000);
    await settle();
    expect(sentBatches()).toEqual([]);
  });
});

// Issue 28: one batcher serves a whole account and region, shared by namespaces and IAM roles.
describe('ChangeBatcher shared by tenants and signers', () => {
  it.each([
    { reason: 'both signed by one role: in the first call', ownRole: false, call: 0, calls: 150 },
    { reason: 'each team with its own role: in the second call', ownRole: true, call: 1, calls: 151 },
  ])(
    'serves a quiet namespace at once while another floods the zone with large records: $reason',
    async ({ ownRole, call, calls }) => {
      accepting();
      const { batcher, clock } = setup();
      // 150 × 19,500 value characters: one such ticket per call (two would exceed 32,000).
      const flood = Array.from({ length: 150 }, (_, i) =>
        batcher.submit('Z1', `flood-${i}`, [txtRecord(`flood${i}`, 5, 3900)], { tenant: 'flood' }),
      );
      expect(ticketWeight(flood[0]?.changes ?? []).chars).toBe(19_500);
      const quiet = batcher.submit('Z1', 'quiet', [aRecord('quiet')], {
        tenant: 'quiet',
        ...(ownRole ? { via: new Route53Client({ region: 'us-east-1' }) } : {}),
      });
      await drain(clock, () => quiet.state !== 'queued');
      expect(quiet.state).toBe('applied');
      expect(sentBatches().findIndex((b) => b.includes('quiet.example.com.'))).toBe(call);
      await drain(clock, () => batcher.pending('Z1') === 0);
      expect(flood.every((t) => t.state === 'applied')).toBe(true);
      expect(sentBatches()).toHaveLength(calls);
      expectWithinLimits();
    },
  );

  it('sends back to back while more than a batch of value characters waits', async () => {
    accepting();
    const { batcher, clock } = setup();
    // Few records (5 each), many characters: a full batch by characters alone.
    for (let i = 0; i < 10; i++) batcher.submit('Z1', `u${i}`, [txtRecord(`big${i}`, 5, 3900)]);
    clock.advance(100);
    for (let i = 0; i < 20; i++) {
      await settle();
      clock.advance(0);
    }
    // Nine calls without waiting a window; the last ticket alone cannot fill one, so it waits.
    expect(sentBatches()).toHaveLength(9);
    clock.advance(100);
    await settle();
    expect(sentBatches()).toHaveLength(10);
  });

  it.each([
    {
      reason: 'value characters: a 19,500-character ticket leaves room for twelve of 1,000',
      large: (name: string) => txtRecord(name, 5, 3900),
      small: (name: string) => txtRecord(name, 1, 1000),
      sizes: [13, 9],
    },
    {
      reason: 'records: a 600-record ticket leaves room for eight of 50',
      large: (name: string) => wideRecord(name, 600),
      small: (name: string) => wideRecord(name, 50),
      sizes: [9, 9, 4],
    },
  ])(
    'fills the room a large ticket leaves with smaller ones (first fit): $reason',
    async ({ large, small, sizes }) => {
      accepting();
      const { batcher, clock } = setup();
      const opts = { tenant: 'team' };
      batcher.submit('Z1', 'large-1', [large('large1')], opts);
      batcher.submit('Z1', 'large-2', [large('large2')], opts); // does not fit beside large-1: skipped, not a stop
      for (let i = 0; i < 20; i++) batcher.submit('Z1', `small-${i}`, [small(`small${i}`)], opts);
      await drain(clock, () => batcher.pending('Z1') === 0);
      const batches = sentBatches();
      expect(batches.map((b) => b.length)).toEqual(sizes);
      expect(batches[0]?.[0]).toBe('large1.example.com.');
      expect(batches[1]?.[0]).toBe('large2.example.com.');
      expectWithinLimits();
    },
  );

  it('never mixes signers in a call and sends each batch with its signer’s client', async () => {
    accepting();
    const { batcher, clock, client } = setup();
    const teamA = new Route53Client({ region: 'us-east-1' });
    const teamB = new Route53Client({ region: 'us-east-1' });
    const signers = new Map<unknown, string>([
      [teamA, 'a'],
      [teamB, 'b'],
      [client, 'own'],
    ]);
    for (let i = 0; i < 5; i++) {
      batcher.submit('Z1', `a${i}`, [aRecord(`a${i}`)], { tenant: 'team-a', via: teamA });
      batcher.submit('Z1', `b${i}`, [aRecord(`b${i}`)], { tenant: 'team-b', via: teamB });
      batcher.submit('Z1', `own${i}`, [aRecord(`own${i}`)], { tenant: 'team-c' });
    }
    await drain(clock, () => batcher.pending('Z1') === 0);
    const calls = sentCalls();
    // In the order of each signer's oldest ticket; each call signed by the one its changes belong to.
    expect(calls.map((c) => signers.get(c.via))).toEqual(['a', 'b', 'own']);
    for (const c of calls) {
      const who = signers.get(c.via) ?? '?';
      expect(c.changes).toHaveLength(5);
      for (const ch of c.changes) expect(ch.ResourceRecordSet?.Name).toMatch(new RegExp(`^${who}\\d`));
    }
  });

  it('serves two signers alternately by the age of their oldest ticket', async () => {
    accepting();
    const { batcher, clock } = setup();
    const teamA = new Route53Client({ region: 'us-east-1' });
    const teamB = new Route53Client({ region: 'us-east-1' });
    // A submits all of its large tickets first: once served, A waits behind B, which was waiting.
    for (let i = 0; i < 3; i++)
      batcher.submit('Z1', `a${i}`, [txtRecord(`a${i}`, 5, 3900)], { tenant: 'team-a', via: teamA });
    for (let i = 0; i < 3; i++)
      batcher.submit('Z1', `b${i}`, [txtRecord(`b${i}`, 5, 3900)], { tenant: 'team-b', via: teamB });
    await drain(clock, () => batcher.pending('Z1') === 0);
    const calls = sentCalls();
    const signer = (via: unknown) => (via === teamA ? 'a' : via === teamB ? 'b' : '?');
    expect(calls.map((c) => signer(c.via))).toEqual(['a', 'b', 'a', 'b', 'a', 'b']);
    expect(calls.map((c) => c.changes[0]?.ResourceRecordSet?.Name)).toEqual(
      ['a0', 'b0', 'a1', 'b1', 'a2', 'b2'].map((n) => `${n}.example.com.`),
    );
  });

  it.each([
    { reason: 'value characters', changes: [txtRecord('big', 9, 3600)] },
    { reason: 'records', changes: [wideRecord('wide', 1001)] },
    { reason: 'UPSERT counted twice', changes: [txtRecord('up', 5, 3300, 'UPSERT')] },
  ])('refuses a ticket that alone exceeds the limits, whoever signs it: $reason', ({ changes }) => {
    const { batcher } = setup();
    const via = new Route53Client({ region: 'us-east-1' });
    expect(() => batcher.submit('Z1', 'u', changes, { tenant: 't', via })).toThrow(ChangeTooLargeError);
    expect(batcher.pending('Z1')).toBe(0);
  });

  it('sends a ticket exactly at the limits alone, the others in the next call', async () => {
    accepting();
    const { batcher, clock } = setup();
    batcher.submit('Z1', 'small', [aRecord('small')], { tenant: 'a' });
    // 1,000 records of 32 characters: 1,000 records and 32,000 characters.
    const full = txtRecord('full', 1000, 32);
    expect(ticketWeight([full])).toEqual({ records: 1000, chars: 32_000 });
    batcher.submit('Z1', 'full', [full], { tenant: 'b' });
    await drain(clock, () => batcher.pending('Z1') === 0);
    expect(sentBatches().map((b) => b.length)).toEqual([1, 1]);
  });

  it('interleaves tenants in a batch that cannot hold them all', async () => {
    accepting();
    const { batcher, clock } = setup();
    // 3 tenants × 10 tickets of 100 records; a call holds 10 of them.
    for (const tenant of ['a', 'b', 'c'])
      for (let i = 0; i < 10; i++)
        batcher.submit('Z1', `${tenant}${i}`, [wideRecord(`${tenant}${i}`, 100)], { tenant });
    await drain(clock, () => batcher.pending('Z1') === 0);
    const batches = sentBatches();
    expect(batches[0]).toEqual(
      ['a0', 'b0', 'c0', 'a1', 'b1', 'c1', 'a2', 'b2', 'c2', 'a3'].map((n) => `${n}.example.com.`),
    );
    expect(batches.map((b) => b.length)).toEqual([10, 10, 10]);
    expectWithinLimits();
  });

  it('gives up on a signer whose calls keep failing even while another signer’s succeed', async () => {
    const broken = new Route53Client({ region: 'us-east-1' });
    r53.on(ChangeResourceRecordSetsCommand).callsFake((_input, getClient) => {
      if (getClient() === broken)
        throw Object.assign(new Error('Service Unavailable'), {
          name: 'ServiceUnavailable',
          $metadata: { httpStatusCode: 503 },
        });
      return { ChangeInfo: { Id: '/change/OK', Status: 'PENDING', SubmittedAt: new Date() } };
    });
    const { batcher, clock } = setup();
    const stuck = batcher.submit('Z1', 'stuck', [aRecord('stuck')], { tenant: 'a', via: broken });
    // The other team keeps writing: its successes must not restart the broken role's count.
    for (let i = 0; i < 40 && stuck.state === 'queued'; i++) {
      batcher.submit('Z1', `b${i}`, [aRecord(`b${i}`)], { tenant: 'b' });
      await drain(clock, () => batcher.pending('Z1') <= 1, 400);
    }
    expect(stuck.state).toBe('failed');
    expect(stuck.error?.message).toContain('Service Unavailable');
    const viaBroken = sentCalls().filter((c) => c.via === broken);
    expect(viaBroken).toHaveLength(8); // maxTransientAttempts, the default
  });

  it('bisects a rejected batch of many tenants within its signer', async () => {
    r53.on(ChangeResourceRecordSetsCommand).callsFake((input: { ChangeBatch?: { Changes?: Change[] } }) => {
      if ((input.ChangeBatch?.Changes ?? []).some((c) => c.ResourceRecordSet?.Name?.startsWith('poison'))) {
        throw Object.assign(new Error('Invalid Resource Record: poison'), {
          name: 'InvalidChangeBatch',
          $metadata: { httpStatusCode: 400 },
        });
      }
      return { ChangeInfo: { Id: '/change/OK', Status: 'PENDING', SubmittedAt: new Date() } };
    });
    const { batcher, clock, client } = setup();
    const teamA = new Route53Client({ region: 'us-east-1' });
    const good = Array.from({ length: 9 }, (_, i) =>
      batcher.submit('Z1', `g${i}`, [aRecord(`good${i}`)], {
        tenant: ['a', 'b', 'c'][i % 3] ?? '',
        ...(i % 2 === 0 ? { via: teamA } : {}),
      }),
    );
    const bad = batcher.submit('Z1', 'bad', [aRecord('poison')], { tenant: 'b', via: teamA });
    await drain(clock, () => batcher.pending('Z1') === 0, 50);
    expect(good.every((t) => t.state === 'applied')).toBe(true);
    expect(bad.state).toBe('failed');
    expect(bad.error?.message).toContain('Invalid Resource Record: poison');
    for (const c of sentCalls()) {
      const viaA = c.changes.map((ch) => {
        const name = ch.ResourceRecordSet?.Name ?? '';
        return name.startsWith('poison') || Number(/^good(\d)/.exec(name)?.[1]) % 2 === 0;
      });
      expect(new Set(viaA).size).toBe(1);
      expect(c.via).toBe(viaA[0] === true ? teamA : client);
    }
  });
});
