// The child-set planner (src/runtime/childSet.ts): creates, updates, deletes and conflicts by key,
// their order, and batches within per-call and total limits. Pure.
import { describe, expect, it } from 'vitest';
import {
  planChildSet,
  planIsEmpty,
  type ChildBatch,
  type ChildSetOptions,
  type ObservedChild,
} from '../../src/runtime/childSet.ts';

/** Observed children: `key=value` ours, `key=value!` another owner's. */
function seen(...specs: string[]): [string, ObservedChild<string>][] {
  return specs.map((s) => {
    const [k = '', v = ''] = s.split('=');
    return v.endsWith('!') ? [k, { value: v.slice(0, -1), ours: false }] : [k, { value: v, ours: true }];
  });
}

/** Wanted children: `key=value`. */
function want(...specs: string[]): [string, string][] {
  return specs.map((s) => {
    const [k = '', v = ''] = s.split('=');
    return [k, v];
  });
}

/** A batch as `create a,b` / `update a` / `delete c`. */
function show(b: ChildBatch<string, string>): string {
  return `${b.op} ${b.children.map((c) => c.key).join(',')}`;
}

describe('planChildSet', () => {
  it.each<{
    reason: string;
    wanted: [string, string][];
    observed: [string, ObservedChild<string>][];
    options?: ChildSetOptions<string>;
    batches: string[];
    conflicts?: string[];
  }>([
    {
      reason: 'nothing observed: every wanted child is created, in the wanted order',
      wanted: want('b=1', 'a=1'),
      observed: [],
      batches: ['create b,a'],
    },
    {
      reason: 'what is wanted and there with the same value changes nothing',
      wanted: want('a=1', 'b=2'),
      observed: seen('b=2', 'a=1'),
      batches: [],
    },
    {
      reason: 'a child of ours with another value is updated; one not wanted is deleted, after the creates',
      wanted: want('a=2', 'c=1'),
      observed: seen('a=1', 'b=1'),
      batches: ['create c', 'update a', 'delete b'],
    },
    {
      reason: 'deletesFirst: deletes, then updates, then creates',
      wanted: want('a=2', 'c=1'),
      observed: seen('a=1', 'b=1'),
      options: { order: 'deletesFirst' },
      batches: ['delete b', 'update a', 'create c'],
    },
    {
      reason:
        'another owner’s child under a wanted key is a conflict, never updated, even with the same value',
      wanted: want('a=1', 'b=1'),
      observed: seen('a=9!', 'b=1!'),
      batches: [],
      conflicts: ['a', 'b'],
    },
    {
      reason: 'another owner’s child not wanted is left alone, not reported',
      wanted: want('a=1'),
      observed: seen('a=1', 'z=1!'),
      batches: [],
    },
    {
      reason: 'a repeated key counts once, its first entry',
      wanted: want('a=1', 'a=2', 'b=1'),
      observed: seen('b=1', 'b=7', 'c=1', 'c=1'),
      batches: ['create a', 'delete c'],
    },
    {
      reason: 'a custom equality: values equal by it are not updated',
      wanted: want('a=X'),
      observed: seen('a=x'),
      options: { equal: (w, o) => w.toLowerCase() === o.toLowerCase() },
      batches: [],
    },
    {
      reason: 'perCall cuts each kind of change into batches, in order',
      wanted: want('a=1', 'b=1', 'c=1', 'u=2'),
      observed: seen('u=1', 'x=1', 'y=1', 'z=1'),
      options: { limits: { perCall: 2 } },
      batches: ['create a,b', 'create c', 'update u', 'delete x,y', 'delete z'],
    },
    {
      reason: 'one per call (AWS’s AddListenerCertificates takes one certificate)',
      wanted: want('a=1', 'b=1'),
      observed: seen('c=1'),
      options: { limits: { perCall: 1 } },
      batches: ['create a', 'create b', 'delete c'],
    },
    {
      reason: 'a total with room enough: creates first, unchanged',
      wanted: want('a=1', 'b=1'),
      observed: seen('c=1'),
      options: { limits: { total: 3 } },
      batches: ['create a,b', 'delete c'],
    },
    {
      reason:
        'a full parent replacing every child: creates within the room, then deletes make room for the rest',
      wanted: want('a=1', 'b=1', 'c=1'),
      observed: seen('x=1', 'y=1', 'z=1'),
      options: { limits: { total: 4 } },
      batches: ['create a', 'delete x,y', 'create b,c', 'delete z'],
    },
    {
      reason: 'room made no larger than one batch, and no larger than the creates left need',
      wanted: want('a=1', 'b=1', 'c=1'),
      observed: seen('w=1', 'x=1', 'y=1', 'z=1'),
      options: { limits: { total: 4, perCall: 2 } },
      batches: ['delete w,x', 'create a,b', 'delete y', 'create c', 'delete z'],
    },
    {
      reason: 'another owner’s children take room too',
      wanted: want('a=1'),
      observed: seen('o=1!', 'x=1'),
      options: { limits: { total: 2 } },
      batches: ['delete x', 'create a'],
    },
  ])('$reason', ({ wanted, observed, options, batches, conflicts }) => {
    const r = planChildSet(wanted, observed, options);
    if (!r.ok) throw new Error(r.error.message);
    expect(r.plan.batches.map(show)).toEqual(batches);
    expect(r.plan.conflicts.map((c) => c.key)).toEqual(conflicts ?? []);
    expect(planIsEmpty(r.plan)).toBe(batches.length === 0);
    // The batches carry exactly the plan's changes.
    const sent = (op: string): string[] =>
      r.plan.batches.filter((b) => b.op === op).flatMap((b) => b.children.map((c) => c.key));
    expect(sent('create').sort()).toEqual(r.plan.creates.map((c) => c.key).sort());
    expect(sent('update').sort()).toEqual(r.plan.updates.map((c) => c.key).sort());
    expect(sent('delete').sort()).toEqual(r.plan.deletes.map((c) => c.key).sort());
  });

  it('reports the values of each change: wanted for creates and updates, observed for deletes and conflicts', () => {
    const r = planChildSet(want('a=2', 'c=3', 'o=5'), seen('a=1', 'b=4', 'o=6!'));
    if (!r.ok) throw new Error(r.error.message);
    expect(r.plan.creates).toEqual([{ key: 'c', value: '3' }]);
    expect(r.plan.updates).toEqual([{ key: 'a', value: '2', from: '1' }]);
    expect(r.plan.deletes).toEqual([{ key: 'b', value: '4' }]);
    expect(r.plan.conflicts).toEqual([{ key: 'o', wanted: '5', observed: '6' }]);
  });

  it.each<{
    reason: string;
    wanted: [string, string][];
    observed: [string, ObservedChild<string>][];
    total: number;
    wouldHold: number;
  }>([
    {
      reason: 'more wanted than the total: an error value, no plan',
      wanted: want('a=1', 'b=1', 'c=1'),
      observed: [],
      total: 2,
      wouldHold: 3,
    },
    {
      reason: 'another owner’s children, never deleted, leave too little room',
      wanted: want('a=1'),
      observed: seen('o=1!', 'p=1!'),
      total: 2,
      wouldHold: 3,
    },
  ])('$reason', ({ wanted, observed, total, wouldHold }) => {
    const r = planChildSet(wanted, observed, { limits: { total } });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatchObject({ reason: 'TotalLimitExceeded', limit: total, wouldHold });
    expect(r.error.message).toBe(`${wouldHold} children wanted or kept, at most ${total}`);
  });

  it.each<{ reason: string; options: ChildSetOptions<string> }>([
    { reason: 'perCall 0', options: { limits: { perCall: 0 } } },
    { reason: 'perCall not an integer', options: { limits: { perCall: 1.5 } } },
    { reason: 'a negative total', options: { limits: { total: -1 } } },
  ])('refuses limits that cannot be met: $reason', ({ options }) => {
    expect(() => planChildSet([], [], options)).toThrow(RangeError);
  });
});
