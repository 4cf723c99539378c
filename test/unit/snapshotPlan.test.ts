// ManagedDB's scheduled snapshots (src/kinds/manageddb/snapshots.ts): which
// run is due, which old snapshots go, and what status says — all from a
// snapshot listing and a time.
import type { DBSnapshot } from '@aws-sdk/client-rds';
import { describe, expect, it } from 'vitest';
import type { ManagedDB, ManagedDBSpec } from '../../src/kinds/manageddb/api.ts';
import { planSnapshots, scheduledPrefix, snapshotSchedule } from '../../src/kinds/manageddb/snapshots.ts';
import { parseCron } from '../../src/runtime/cron.ts';
import { TerminalError } from '../../src/runtime/errors.ts';

const instanceId = 'db-1';
const created = '2026-11-20T10:00:00Z';
/** Every day at 03:00 UTC. */
const daily = parseCron('0 3 * * *');

function db(backup?: ManagedDBSpec['backup']): ManagedDB {
  return {
    apiVersion: 'aws.skylift.dev/v1alpha1',
    kind: 'ManagedDB',
    metadata: { name: 'orders', namespace: 'shop', uid: 'uid-1', creationTimestamp: created },
    spec: {
      engine: 'postgres',
      instanceClass: 'db.t4g.micro',
      allocatedStorage: 20,
      masterUsername: 'app',
      ...(backup !== undefined ? { backup } : {}),
    },
  };
}

/** A scheduled snapshot of db-1 for the run at `stamp` (YYYYMMDDHHmm). */
function sched(stamp: string, status = 'available'): DBSnapshot {
  return { DBSnapshotIdentifier: `${scheduledPrefix(instanceId)}${stamp}`, Status: status };
}

const at = (iso: string): number => Date.parse(iso);

describe('planSnapshots', () => {
  it('has nothing due right after creation, and says when the first run is', () => {
    const plan = planSnapshots(db(), daily, instanceId, [], at('2026-11-20T10:01:00Z'));
    expect(plan).toEqual({ status: { nextSnapshot: '2026-11-21T03:00:00.000Z' }, prune: [] });
  });

  it.each([
    {
      reason: 'the first run after creation, on time',
      manual: [],
      now: '2026-11-21T03:00:00Z',
      due: 'db-1-sched-202611210300',
      next: '2026-11-22T03:00:00.000Z',
    },
    {
      reason: 'the first run, a few hours late',
      manual: [],
      now: '2026-11-21T09:30:00Z',
      due: 'db-1-sched-202611210300',
      next: '2026-11-22T03:00:00.000Z',
    },
    {
      reason: 'runs missed during a long outage: one snapshot, for the most recent run',
      manual: [sched('202611210300')],
      now: '2026-11-27T12:00:00Z',
      due: 'db-1-sched-202611270300',
      next: '2026-11-28T03:00:00.000Z',
    },
    {
      reason: 'no snapshot ever taken, long after creation',
      manual: [],
      now: '2027-02-01T04:00:00Z',
      due: 'db-1-sched-202702010300',
      next: '2027-02-02T03:00:00.000Z',
    },
  ])('takes one snapshot named after the due run: $reason', ({ manual, now, due, next }) => {
    const plan = planSnapshots(db(), daily, instanceId, manual, at(now));
    expect(plan.dueSnapshot).toBe(due);
    expect(plan.status.nextSnapshot).toBe(next);
    expect(plan.failure).toBeUndefined();
  });

  it("has nothing due once this run's snapshot exists, and reports it as the last", () => {
    const plan = planSnapshots(
      db(),
      daily,
      instanceId,
      [sched('202611260300'), sched('202611270300', 'creating')],
      at('2026-11-27T12:00:00Z'),
    );
    expect(plan.dueSnapshot).toBeUndefined();
    expect(plan.status).toEqual({
      lastSnapshot: { name: 'db-1-sched-202611270300', state: 'creating', time: '2026-11-27T03:00:00.000Z' },
      nextSnapshot: '2026-11-28T03:00:00.000Z',
    });
  });

  it.each([
    {
      reason: 'beyond keepSnapshots, oldest first, whatever the listing order',
      backup: { snapshotSchedule: '0 3 * * *', keepSnapshots: 2 },
      manual: [sched('202611230300'), sched('202611210300'), sched('202611240300'), sched('202611220300')],
      prune: ['db-1-sched-202611210300', 'db-1-sched-202611220300'],
    },
    {
      reason: 'nothing when there are no more than keepSnapshots',
      backup: { snapshotSchedule: '0 3 * * *', keepSnapshots: 4 },
      manual: [sched('202611230300'), sched('202611210300'), sched('202611240300'), sched('202611220300')],
      prune: [],
    },
    {
      reason: 'beyond the default of seven',
      backup: undefined,
      manual: ['21', '22', '23', '24', '25', '26', '27', '28', '29'].map((d) => sched(`202611${d}0300`)),
      prune: ['db-1-sched-202611210300', 'db-1-sched-202611220300'],
    },
    {
      reason: 'only scheduled snapshots of this instance (not manual ones, not db-10’s)',
      backup: { snapshotSchedule: '0 3 * * *', keepSnapshots: 1 },
      manual: [
        { DBSnapshotIdentifier: 'db-1-final', Status: 'available' },
        { DBSnapshotIdentifier: 'db-1-before-upgrade', Status: 'available' },
        { DBSnapshotIdentifier: 'db-10-sched-202611200300', Status: 'available' },
        sched('202611280300'),
        sched('202611290300'),
      ],
      prune: ['db-1-sched-202611280300'],
    },
  ])('prunes $reason', ({ backup, manual, prune }) => {
    const plan = planSnapshots(db(backup), daily, instanceId, manual, at('2026-11-29T12:00:00Z'));
    expect(plan.prune).toEqual(prune);
  });

  it('reports a failed newest snapshot while no later run is due', () => {
    const plan = planSnapshots(
      db(),
      daily,
      instanceId,
      [sched('202611260300'), sched('202611270300', 'failed')],
      at('2026-11-27T12:00:00Z'),
    );
    expect(plan.dueSnapshot).toBeUndefined();
    expect(plan.failure).toBe(
      'scheduled snapshot db-1-sched-202611270300 failed; the next is due 2026-11-28T03:00:00.000Z',
    );
    expect(plan.status.lastSnapshot).toEqual({
      name: 'db-1-sched-202611270300',
      state: 'failed',
      time: '2026-11-27T03:00:00.000Z',
    });
  });

  it('clears the failure once the next run is due, taking it instead', () => {
    const plan = planSnapshots(
      db(),
      daily,
      instanceId,
      [sched('202611270300', 'failed')],
      at('2026-11-28T03:05:00Z'),
    );
    expect(plan.failure).toBeUndefined();
    expect(plan.dueSnapshot).toBe('db-1-sched-202611280300');
  });
});

describe('snapshotSchedule', () => {
  it('is undefined without a schedule', () => {
    expect(snapshotSchedule(db())).toBeUndefined();
    expect(snapshotSchedule(db({ retentionDays: 7 }))).toBeUndefined();
  });

  it('parses the schedule', () => {
    expect(snapshotSchedule(db({ snapshotSchedule: '0 3 * * *' }))).toEqual(daily);
  });

  it.each([
    { reason: 'too few fields', expr: '0 3 * *' },
    { reason: 'an hour out of range', expr: '0 25 * * *' },
    { reason: 'a word', expr: 'daily' },
  ])('refuses $reason with a TerminalError naming the field', ({ expr }) => {
    const parse = (): unknown => snapshotSchedule(db({ snapshotSchedule: expr }));
    expect(parse).toThrow(TerminalError);
    expect(parse).toThrow(/^spec\.backup\.snapshotSchedule: cron/);
  });
});
