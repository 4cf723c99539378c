import { describe, expect, it } from 'vitest';
import { WorkQueue } from '../../src/runtime/workqueue.ts';
import { FakeClock } from '../support/fakeClock.ts';

function queue(clock = new FakeClock(), random = () => 0.5): { q: WorkQueue; clock: FakeClock } {
  return {
    q: new WorkQueue({
      clock,
      random,
      backoff: { baseMs: 100, capMs: 1000, jitter: 0.2 },
      overallRatePerSecond: 1000,
      overallBurst: 1000,
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

  it('applies an overall rate limit across keys', () => {
    const clock = new FakeClock();
    const q = new WorkQueue({
      clock,
      random: () => 0.5,
      backoff: { baseMs: 1, capMs: 1, jitter: 0 },
      overallRatePerSecond: 2,
      overallBurst: 2,
    });
    const delays = ['a', 'b', 'c', 'd'].map((k) => q.addRateLimited(k));
    expect(delays).toEqual([1, 1, 500, 1000]);
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
