import { describe, expect, it } from 'vitest';
import { createPendingAnnotation, type ManagedObject } from '../../src/apis/managed.ts';
import { CreateMarkers } from '../../src/runtime/createMarkers.ts';

const grace = 30_000;

function marked(uid: string, at: number | undefined): ManagedObject {
  return {
    apiVersion: 'test.skylift.dev/v1',
    kind: 'Gadget',
    metadata: {
      name: uid,
      namespace: 'ns',
      uid,
      ...(at !== undefined ? { annotations: { [createPendingAnnotation]: new Date(at).toISOString() } } : {}),
    },
    spec: {},
  };
}

describe('CreateMarkers', () => {
  it('holds a marker younger than the grace, and not one older or absent', () => {
    const m = new CreateMarkers(grace);
    const t = Date.parse('2026-11-24T10:00:00.000Z');
    expect(m.holding(marked('a', t), t + 1000)).toBe(t);
    expect(m.holding(marked('a', t), t + grace)).toBeUndefined();
    expect(m.holding(marked('a', undefined), t)).toBeUndefined();
  });

  // Issue 27, item 16: a marker set by hand in the future held for ever.
  it('holds a marker ahead of the clock by less than the grace (a replica), never one further ahead', () => {
    const m = new CreateMarkers(grace);
    const t = Date.parse('2026-11-24T10:00:00.000Z');
    expect(m.holding(marked('a', t + 5000), t)).toBe(t + 5000);
    expect(m.holding(marked('a', t + grace), t)).toBeUndefined();
    expect(m.holding(marked('a', t + 86_400_000), t)).toBeUndefined();
  });

  it('stops holding a marker once settled or refused, but holds a newer marker of the same object', () => {
    const m = new CreateMarkers(grace);
    const t = Date.parse('2026-11-24T10:00:00.000Z');
    m.settled(marked('a', t), t + 500);
    expect(m.holding(marked('a', t), t + 1000)).toBeUndefined();
    // A create started again (drift) writes a new marker: it holds until seen.
    expect(m.holding(marked('a', t + 2000), t + 3000)).toBe(t + 2000);
    m.refused(marked('b', t), t + 100);
    expect(m.holding(marked('b', t), t + 200)).toBeUndefined();
    m.forget(marked('a', t));
    expect(m.holding(marked('a', t), t + 1000)).toBe(t);
  });

  it('forgets settled markers past the grace once it holds many', () => {
    const m = new CreateMarkers(grace);
    const t = Date.parse('2026-11-24T10:00:00.000Z');
    for (let i = 0; i < 300; i++) m.settled(marked(`o${i}`, t), t);
    expect(m.size).toBe(300);
    m.settled(marked('late', t + grace + 10), t + grace + 20);
    expect(m.size).toBe(1);
  });
});
