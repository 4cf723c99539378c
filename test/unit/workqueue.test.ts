import { describe, expect, it } from 'vitest';
import { WorkQueue } from '../../src/runtime/workqueue.ts';
import { FakeClock } from '../support/fakeClock.ts';

function queue(clock = new FakeClock(), random = () => 0.5): { q: WorkQueue; clock: FakeClock } {
  return {
    q: new WorkQueue({
      clock,
      random,
      backoff: { baseMs: 100, capMs: 1000, jitter: 0.2 },
      groupRatePerSecond: 1000,
      groupBurst: 1000,
    }),
    clock,
  };
}

/** Takes every ready key without waiting. */
async function drainReady(q: WorkQueue): Promise<string[]> {
  const out: string[] = [];
  while (q.length > 0) {
    const k = await q.get();
    if (k !== undefined) out.push(k);
  }
  return out;
}

describe('WorkQueue', () => {
  it('queues a key at most once however often it is added', async () => {
    const { q } = queue();
    q.add('a');
    q.add('b');
    q.add('a');
    q.add('a');
    expect(await drainReady(q)).toEqual(['a', 'b']);
  });

  it('never hands a key to two workers at once; an add during processing requeues it on done', async () => {
    const { q } = queue();
    q.add('a');
    const first = await q.get();
    q.add('a');
    expect(q.length).toBe(0); // not handed out again while processing
    let second: string | undefined;
    void q.get().then((k) => (second = k));
    await Promise.resolve();
    expect(second).toBeUndefined();
    q.done(first ?? '');
    await Promise.resolve();
    expect(second).toBe('a');
  });

  it('addAfter keeps the earliest wake-up per key', async () => {
    const { q, clock } = queue();
    q.addAfter('a', 5000);
    q.addAfter('a', 1000);
    q.addAfter('a', 3000);
    expect(q.delayed).toBe(1);
    clock.advance(999);
    expect(q.length).toBe(0);
    clock.advance(1);
    expect(await drainReady(q)).toEqual(['a']);
    clock.advance(10_000);
    expect(q.length).toBe(0);
  });

  it.each([
    { reason: 'first retry at base', failures: 1, want: 100 },
    { reason: 'doubles', failures: 2, want: 200 },
    { reason: 'doubles again', failures: 3, want: 400 },
    { reason: 'capped', failures: 10, want: 1000 },
  ])('backs off per key exponentially: $reason', ({ failures, want }) => {
    const { q } = queue();
    let delay = 0;
    for (let i = 0; i < failures; i++) delay = q.addRateLimited('k');
    expect(delay).toBe(want);
    expect(q.retries('k')).toBe(failures);
  });

  it('jitters the backoff within the configured fraction', () => {
    const low = queue(new FakeClock(), () => 0).q.addRateLimited('k');
    const high = queue(new FakeClock(), () => 0.999).q.addRateLimited('k');
    expect(low).toBe(80);
    expect(high).toBeGreaterThan(115);
    expect(high).toBeLessThanOrEqual(120);
  });

  it('forget resets a key’s backoff', () => {
    const { q } = queue();
    q.addRateLimited('k');
    q.addRateLimited('k');
    q.forget('k');
    expect(q.addRateLimited('k')).toBe(100);
  });

  it.each([
    { reason: 'cluster-scoped keys are one group', keys: ['a', 'b', 'c', 'd'] },
    { reason: 'one namespace’s keys', keys: ['ns/a', 'ns/b', 'ns/c', 'ns/d'] },
  ])('applies the rate limit to a group’s keys together: $reason', ({ keys }) => {
    const clock = new FakeClock();
    const q = new WorkQueue({
      clock,
      random: () => 0.5,
      backoff: { baseMs: 1, capMs: 1, jitter: 0 },
      groupRatePerSecond: 2,
      groupBurst: 2,
    });
    expect(keys.map((k) => q.addRateLimited(k))).toEqual([1, 1, 500, 1000]);
  });

  it('a namespace that exhausts its retry budget does not delay another namespace’s first retry', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue({
      clock,
      random: () => 0.5,
      backoff: { baseMs: 100, capMs: 100, jitter: 0 },
      groupRatePerSecond: 2,
      groupBurst: 2,
    });
    for (let round = 0; round < 10; round++) {
      for (let i = 0; i < 20; i++) q.addRateLimited(`failing/obj-${i}`);
    }
    expect(q.addRateLimited('failing/obj-0')).toBeGreaterThan(60_000); // its bucket is long empty
    expect(q.addRateLimited('healthy/web')).toBe(100); // its own backoff only
    clock.advance(100);
    // ready beside the two failing keys that got the bucket's burst, and handed out among the first two
    expect(q.length).toBe(3);
    expect((await drainReady(q)).slice(0, 2)).toContain('healthy/web');
  });

  it('releases the retry buckets of groups that are full again, and keeps a draining one', () => {
    const clock = new FakeClock();
    const q = new WorkQueue({
      clock,
      random: () => 0.5,
      backoff: { baseMs: 100, capMs: 100, jitter: 0 },
      groupRatePerSecond: 10,
      groupBurst: 2,
    });
    for (let i = 0; i < 200; i++) q.addRateLimited(`failing/obj-${i}`); // 198 tokens short: 19.8 s to refill
    for (let round = 0; round < 10; round++) {
      for (let i = 0; i < 1000; i++) q.addRateLimited(`ns-${round}-${i}/obj`);
      // at most twice the groups whose buckets are short (this round's 1,000 and failing), not 10,001
      expect(q.retryBuckets).toBeLessThanOrEqual(2 * 1001);
      clock.advance(1000); // this round's buckets are full again, failing's is not
    }
    // failing's bucket was kept through the sweeps: still about 9.8 s short, not a fresh burst
    expect(q.addRateLimited('failing/obj-0')).toBeGreaterThan(9000);
  });

  it('hands a quiet namespace’s key out within two gets after another namespace enqueued 5,000', async () => {
    const { q } = queue();
    for (let i = 0; i < 5000; i++) q.add(`flood/obj-${i}`);
    q.add('quiet/web');
    expect(q.length).toBe(5001);
    const firstTwo = [await q.get(), await q.get()];
    expect(firstTwo).toContain('quiet/web');
    expect(q.length).toBe(4999);
  });

  it.each([
    {
      reason: 'namespaces take turns in the order they became ready; FIFO within one',
      adds: ['a/1', 'a/2', 'a/3', 'b/1', 'c/1', 'c/2'],
      want: ['a/1', 'b/1', 'c/1', 'a/2', 'c/2', 'a/3'],
    },
    {
      reason: 'cluster-scoped keys (no slash) form their own group',
      adds: ['x', 'y', 'z', 'ns/1', 'ns/2'],
      want: ['x', 'ns/1', 'y', 'ns/2', 'z'],
    },
    {
      reason: 'the group is the part before the first slash',
      adds: ['a/b/1', 'a/b/2', 'b/1'],
      want: ['a/b/1', 'b/1', 'a/b/2'],
    },
    {
      reason: 'dedup across namespaces: a key added again keeps its place',
      adds: ['a/1', 'b/1', 'a/2', 'a/1', 'b/1', 'b/2'],
      want: ['a/1', 'b/1', 'a/2', 'b/2'],
    },
  ])('round robin across namespaces: $reason', async ({ adds, want }) => {
    const { q } = queue();
    for (const k of adds) q.add(k);
    expect(q.length).toBe(want.length);
    expect(await drainReady(q)).toEqual(want);
  });

  it('a namespace that empties leaves the rotation and rejoins at the back', async () => {
    const { q } = queue();
    q.add('a/1');
    q.add('b/1');
    q.add('b/2');
    expect(await q.get()).toBe('a/1');
    expect(await q.get()).toBe('b/1');
    q.add('c/1');
    q.add('a/2'); // a rejoins behind b (still ready) and c
    expect(await drainReady(q)).toEqual(['b/2', 'c/1', 'a/2']);
  });

  it('a key dirtied while processing is requeued on done at the back of its namespace', async () => {
    const { q } = queue();
    q.add('a/1');
    q.add('a/2');
    q.add('b/1');
    const first = await q.get();
    expect(first).toBe('a/1');
    q.add('a/1'); // dirty while processing: not ready yet
    expect(q.length).toBe(2);
    q.done('a/1');
    expect(q.length).toBe(3);
    expect(await drainReady(q)).toEqual(['b/1', 'a/2', 'a/1']);
  });

  it('groups keys with groupOf when given', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue({ clock, groupOf: (key) => key.slice(0, 1) });
    for (const k of ['a1', 'a2', 'b1']) q.add(k);
    expect(await drainReady(q)).toEqual(['a1', 'b1', 'a2']);
  });

  it('shuts down: pending gets resolve undefined, timers are cancelled, drained waits for in-flight work', async () => {
    const { q, clock } = queue();
    q.add('busy');
    const busy = await q.get();
    q.addAfter('later', 1000);
    const waiting = q.get();
    q.shutDown();
    expect(await waiting).toBeUndefined();
    expect(clock.pending).toBe(0);
    let drained = false;
    const d = q.drained().then(() => (drained = true));
    await Promise.resolve();
    expect(drained).toBe(false);
    q.done(busy ?? '');
    await d;
    expect(drained).toBe(true);
    q.add('x');
    expect(q.length).toBe(0);
  });

  it('reports depth, adds, latency and retries', async () => {
    const clock = new FakeClock();
    const seen = {
      depth: [] as number[],
      adds: 0,
      latency: [] as number[],
      retries: 0,
      work: [] as number[],
    };
    const q = new WorkQueue({
      clock,
      metrics: {
        depth: (n) => seen.depth.push(n),
        added: () => seen.adds++,
        queueLatency: (s) => seen.latency.push(s),
        workDuration: (s) => seen.work.push(s),
        retried: () => seen.retries++,
      },
    });
    q.add('a');
    clock.advance(250);
    const k = await q.get();
    clock.advance(1000);
    q.done(k ?? '');
    q.addRateLimited('a');
    expect(seen.adds).toBe(1);
    expect(seen.depth).toEqual([1, 0]);
    expect(seen.latency).toEqual([0.25]);
    expect(seen.work).toEqual([1]);
    expect(seen.retries).toBe(1);
  });
});
