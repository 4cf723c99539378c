// The child memory (src/runtime/childMemory.ts): what is recalled (same parent, same spec, while
// fresh), the sweep of records never looked at again, forget, and the part kept past freshness.
// In memory; no clock but the numbers given.
import { describe, expect, it } from 'vitest';
import { ChildMemory, type ChildRecord } from '../../src/runtime/childMemory.ts';

/** A record of a parent's children: names of the children, kept part `left`. */
interface Rec extends ChildRecord<{ readonly names: readonly string[]; readonly left: string }> {
  readonly parent: string;
}

const period = 1000;

function rec(over: Partial<Rec> = {}): Rec {
  return {
    parent: 'p-1',
    specKey: 's-1',
    knownSince: 0,
    origin: 'described',
    children: { names: ['a', 'b'], left: 'left-1' },
    ...over,
  };
}

function memory(fullCheckMs = period): ChildMemory<Rec, string> {
  return new ChildMemory<Rec, string>({
    fullCheckMs,
    parentOf: (r) => r.parent,
    lastLeftOf: (r) => r.children.left,
  });
}

describe('ChildMemory.recall', () => {
  it.each<{ reason: string; parent: string; spec: string; now: number; recalled: boolean }>([
    { reason: 'same parent and spec, at once', parent: 'p-1', spec: 's-1', now: 0, recalled: true },
    {
      reason: 'same parent and spec, the last moment within the period',
      parent: 'p-1',
      spec: 's-1',
      now: period - 1,
      recalled: true,
    },
    {
      reason: 'the period is over (its first moment)',
      parent: 'p-1',
      spec: 's-1',
      now: period,
      recalled: false,
    },
    { reason: 'another parent (replaced)', parent: 'p-2', spec: 's-1', now: 1, recalled: false },
    { reason: 'another spec', parent: 'p-1', spec: 's-2', now: 1, recalled: false },
  ])('$reason: recalled $recalled', ({ parent, spec, now, recalled }) => {
    const m = memory();
    const r = rec();
    m.remember('uid-1', r, 0);
    expect(m.recall('uid-1', parent, spec, now)).toBe(recalled ? r : undefined);
  });

  it('counts freshness from knownSince, not from when the record was remembered', () => {
    const m = memory();
    // Known since 0, remembered later (an update that kept the full look due when it was).
    m.remember('uid-1', rec({ knownSince: 0, origin: 'applied' }), 900);
    expect(m.recall('uid-1', 'p-1', 's-1', 999)?.origin).toBe('applied');
    expect(m.recall('uid-1', 'p-1', 's-1', 1000)).toBeUndefined();
  });

  it('drops a record asked for once stale, and keeps one asked for with another parent or spec', () => {
    const m = memory();
    m.remember('uid-1', rec(), 0);
    expect(m.recall('uid-1', 'p-2', 's-1', 1)).toBeUndefined();
    expect(m.recall('uid-1', 'p-1', 's-2', 1)).toBeUndefined();
    expect(m.size).toBe(1);
    expect(m.recall('uid-1', 'p-1', 's-1', period)).toBeUndefined();
    expect(m.size).toBe(0);
    // Gone for good: a later question within what was its period finds nothing either.
    expect(m.recall('uid-1', 'p-1', 's-1', 1)).toBeUndefined();
  });

  it('answers the latest record of an object, one object apart from another', () => {
    const m = memory();
    m.remember('uid-1', rec(), 0);
    m.remember('uid-2', rec({ parent: 'p-9' }), 0);
    const newer = rec({ specKey: 's-2', origin: 'applied' });
    m.remember('uid-1', newer, 10);
    expect(m.recall('uid-1', 'p-1', 's-1', 10)).toBeUndefined();
    expect(m.recall('uid-1', 'p-1', 's-2', 10)).toBe(newer);
    expect(m.recall('uid-2', 'p-9', 's-1', 10)?.parent).toBe('p-9');
  });
});

describe('ChildMemory sweep', () => {
  it('drops the stale records of objects never asked for again, at most once a period', () => {
    const m = memory();
    m.remember('gone', rec(), 0); // sweeps (the first remember): sweptAt 0
    m.remember('uid-1', rec({ knownSince: 600 }), 600); // within the period of the last sweep: none
    expect(m.size).toBe(2);
    m.remember('uid-2', rec({ knownSince: 999 }), 999); // 'gone' not stale yet; no sweep anyway
    expect(m.size).toBe(3);
    m.remember('uid-3', rec({ knownSince: 1000 }), 1000); // a period since the last sweep: 'gone' (0) goes
    expect(m.size).toBe(3);
    expect(m.recall('uid-1', 'p-1', 's-1', 1000)).toBeDefined();
    m.remember('uid-3', rec({ knownSince: 1700 }), 1700); // uid-1 (600) stale, but swept at 1000: no sweep
    expect(m.size).toBe(3);
    m.remember('uid-3', rec({ knownSince: 2000 }), 2000); // sweep: uid-1 (600) and uid-2 (999) go
    expect(m.size).toBe(1);
  });
});

describe('ChildMemory with a period of 0', () => {
  it('keeps no record (every look is a full one), but keeps the part past freshness', () => {
    const m = memory(0);
    m.remember('uid-1', rec(), 0);
    expect(m.recall('uid-1', 'p-1', 's-1', 0)).toBeUndefined();
    expect(m.size).toBe(0);
    expect(m.lastLeft('uid-1', 'p-1')).toBe('left-1');
  });
});

describe('ChildMemory.lastLeft and forget', () => {
  it('keeps the part of the last record past its period, for that parent only, until forgotten', () => {
    const m = memory();
    m.remember('uid-1', rec(), 0);
    m.remember('uid-1', rec({ specKey: 's-2', children: { names: [], left: 'left-2' } }), 10);
    expect(m.recall('uid-1', 'p-1', 's-2', 5 * period)).toBeUndefined();
    expect(m.lastLeft('uid-1', 'p-1')).toBe('left-2');
    expect(m.lastLeft('uid-1', 'p-2')).toBeUndefined();
    expect(m.lastLeft('uid-2', 'p-1')).toBeUndefined();
    m.forget('uid-1');
    expect(m.lastLeft('uid-1', 'p-1')).toBeUndefined();
  });

  it('forgets the record itself while fresh, and forgetting twice or an unknown object is harmless', () => {
    const m = memory();
    m.remember('uid-1', rec(), 0);
    m.forget('uid-1');
    m.forget('uid-1');
    m.forget('never');
    expect(m.recall('uid-1', 'p-1', 's-1', 1)).toBeUndefined();
    expect(m.size).toBe(0);
  });

  it('keeps nothing past freshness without lastLeftOf', () => {
    const m = new ChildMemory<Rec, string>({ fullCheckMs: period, parentOf: (r) => r.parent });
    m.remember('uid-1', rec(), 0);
    expect(m.recall('uid-1', 'p-1', 's-1', 1)).toBeDefined();
    expect(m.lastLeft('uid-1', 'p-1')).toBeUndefined();
  });
});
