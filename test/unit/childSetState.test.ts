// The state of a child set as an update changes it (src/runtime/childSetState.ts): observed, plus
// what was accepted, minus what was refused; order; nested sets; batches of the planner
// (src/runtime/childSet.ts) applied only once sent. In memory.
import { describe, expect, it } from 'vitest';
import { planChildSet, type ChildBatch } from '../../src/runtime/childSet.ts';
import { ChildSetState, NestedChildSetState } from '../../src/runtime/childSetState.ts';

/** `key=value` entries. */
function entries(...specs: string[]): [string, string][] {
  return specs.map((s) => {
    const [k = '', v = ''] = s.split('=');
    return [k, v];
  });
}

/** The state as `key=value` entries, in order. */
function show(s: ChildSetState<string, string>): string[] {
  return [...s.toMap()].map(([k, v]) => `${k}=${v}`);
}

describe('ChildSetState', () => {
  it.each<{
    reason: string;
    observed: string[];
    steps: (s: ChildSetState<string, string>) => void;
    after: string[];
  }>([
    {
      reason: 'nothing reported: what was observed, in its order',
      observed: ['b=1', 'a=1'],
      steps: () => undefined,
      after: ['b=1', 'a=1'],
    },
    {
      reason: 'a repeated observed key: its first entry counts (as the planner)',
      observed: ['a=1', 'a=2', 'b=1'],
      steps: () => undefined,
      after: ['a=1', 'b=1'],
    },
    {
      reason: 'an update keeps its place; a create comes last',
      observed: ['a=1', 'b=1'],
      steps: (s) => {
        s.set('c', '1');
        s.set('a', '2');
      },
      after: ['a=2', 'b=1', 'c=1'],
    },
    {
      reason: 'a child deleted and made again comes last',
      observed: ['a=1', 'b=1'],
      steps: (s) => {
        s.delete('a');
        s.set('a', '3');
      },
      after: ['b=1', 'a=3'],
    },
    {
      reason: 'deleting a key that is not there changes nothing',
      observed: ['a=1'],
      steps: (s) => s.delete('z'),
      after: ['a=1'],
    },
    {
      reason: 'a create batch, an update batch and a delete batch, as the planner makes them',
      observed: ['a=1', 'b=1'],
      steps: (s) => {
        s.apply({ op: 'create', children: [{ key: 'c', value: '1' }] });
        s.apply({ op: 'update', children: [{ key: 'a', value: '2', from: '1' }] });
        s.apply({ op: 'delete', children: [{ key: 'b', value: '1' }] });
      },
      after: ['a=2', 'c=1'],
    },
  ])('$reason', ({ observed, steps, after }) => {
    const s = new ChildSetState(entries(...observed));
    steps(s);
    expect(show(s)).toEqual(after);
    expect(s.size).toBe(after.length);
  });

  it('does not keep what it was built from, and hands out copies', () => {
    const observed = entries('a=1');
    const s = new ChildSetState(observed);
    observed.push(['b', '1']);
    const read = s.toMap();
    read.set('z', '9');
    s.values().push('9');
    expect(show(s)).toEqual(['a=1']);
    expect(s.get('a')).toBe('1');
    expect(s.has('b')).toBe(false);
  });

  it('applies every batch of a plan as sent: the result is what was wanted', async () => {
    const observed = entries('a=1', 'b=1', 'x=1');
    const r = planChildSet(
      entries('a=2', 'c=1', 'd=1', 'x=1'),
      observed.map(([k, value]) => [k, { value, ours: true }] as const),
      {
        limits: { perCall: 1 },
      },
    );
    if (!r.ok) throw new Error(r.error.message);
    const s = new ChildSetState(observed);
    const sent: string[] = [];
    for (const b of r.plan.batches)
      await s.applyWhenAccepted(b, (batch) => {
        sent.push(`${batch.op} ${batch.children.map((c) => c.key).join(',')}`);
        return Promise.resolve();
      });
    expect(sent).toEqual(['create c', 'create d', 'update a', 'delete b']);
    expect(show(s)).toEqual(['a=2', 'x=1', 'c=1', 'd=1']);
  });

  it('leaves the state as it was when a batch is refused, and passes the refusal on', async () => {
    const s = new ChildSetState(entries('a=1', 'b=1'));
    const accepted: ChildBatch<string, string> = { op: 'create', children: [{ key: 'c', value: '1' }] };
    const refused: ChildBatch<string, string> = {
      op: 'delete',
      children: [
        { key: 'a', value: '1' },
        { key: 'b', value: '1' },
      ],
    };
    expect(await s.applyWhenAccepted(accepted, () => Promise.resolve('ok'))).toBe('ok');
    await expect(s.applyWhenAccepted(refused, () => Promise.reject(new Error('throttled')))).rejects.toThrow(
      'throttled',
    );
    // Observed, plus the create that was accepted, minus nothing: the deletes failed.
    expect(show(s)).toEqual(['a=1', 'b=1', 'c=1']);
  });

  it('applies nothing while the send is still under way', async () => {
    const s = new ChildSetState(entries('a=1'));
    let accept: () => void = () => undefined;
    const sending = s.applyWhenAccepted({ op: 'delete', children: [{ key: 'a', value: '1' }] }, () => {
      return new Promise<void>((resolve) => {
        accept = resolve;
      });
    });
    expect(show(s)).toEqual(['a=1']);
    accept();
    await sending;
    expect(show(s)).toEqual([]);
  });
});

describe('NestedChildSetState', () => {
  /** The nested state as `outer: key=value,…`, in order. */
  function showNested(n: NestedChildSetState<string, string, string>): string[] {
    return [...n.toMap()].map(([k, vs]) => `${k}: ${vs.join(',')}`);
  }

  const observed = (): [string, [string, string][]][] => [
    ['l-80', entries('r-1=a', 'r-2=b')],
    ['l-81', entries('r-3=c')],
  ];

  it.each<{
    reason: string;
    steps: (n: NestedChildSetState<string, string, string>) => void;
    after: string[];
  }>([
    {
      reason: 'nothing reported: the observed sets',
      steps: () => undefined,
      after: ['l-80: a,b', 'l-81: c'],
    },
    {
      reason: 'a child set and deleted within one set leaves the others alone',
      steps: (n) => {
        n.set('l-80', 'r-9', 'z');
        n.delete('l-80', 'r-1');
        n.set('l-81', 'r-3', 'c2');
      },
      after: ['l-80: b,z', 'l-81: c2'],
    },
    {
      reason: 'a parent deleted takes its set with it',
      steps: (n) => n.deleteSet('l-81'),
      after: ['l-80: a,b'],
    },
    {
      reason: 'a child set under a parent with no set makes the set, last',
      steps: (n) => n.set('l-82', 'r-5', 'e'),
      after: ['l-80: a,b', 'l-81: c', 'l-82: e'],
    },
    {
      reason: 'a delete under a parent with no set makes no set',
      steps: (n) => {
        n.delete('l-82', 'r-5');
        n.apply('l-83', { op: 'delete', children: [{ key: 'r-6', value: 'f' }] });
      },
      after: ['l-80: a,b', 'l-81: c'],
    },
    {
      reason: 'batches applied to one set, a create making a set',
      steps: (n) => {
        n.apply('l-80', { op: 'delete', children: [{ key: 'r-2', value: 'b' }] });
        n.apply('l-80', { op: 'update', children: [{ key: 'r-1', value: 'a2', from: 'a' }] });
        n.apply('l-84', { op: 'create', children: [{ key: 'r-7', value: 'g' }] });
      },
      after: ['l-80: a2', 'l-81: c', 'l-84: g'],
    },
  ])('$reason', ({ steps, after }) => {
    const n = new NestedChildSetState(observed());
    steps(n);
    expect(showNested(n)).toEqual(after);
  });

  it('hands out each parent’s set as the state itself: a batch sent through it applies only once accepted', async () => {
    const n = new NestedChildSetState(observed());
    const rules = n.setOf('l-81');
    await expect(
      rules.applyWhenAccepted({ op: 'delete', children: [{ key: 'r-3', value: 'c' }] }, () =>
        Promise.reject(new Error('refused')),
      ),
    ).rejects.toThrow('refused');
    await rules.applyWhenAccepted({ op: 'create', children: [{ key: 'r-4', value: 'd' }] }, () =>
      Promise.resolve(),
    );
    expect(n.setOf('l-81')).toBe(rules);
    expect(showNested(n)).toEqual(['l-80: a,b', 'l-81: c,d']);
  });

  it('hands out copies: changing what it read back changes nothing', () => {
    const n = new NestedChildSetState(observed());
    const read = n.toMap();
    read.get('l-80')?.push('x');
    read.delete('l-81');
    expect(showNested(n)).toEqual(['l-80: a,b', 'l-81: c']);
  });
});
