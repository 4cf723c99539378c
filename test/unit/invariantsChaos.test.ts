// The pure parts of the chaos run: its flags, its seeded schedule and
// workload, which objects it deletes, and the Lease holder → replica mapping.
import { describe, expect, it } from 'vitest';
import { parseChaosArgs } from '../../bench/chaosArgs.ts';
import { slotOfHolder } from '../../bench/lib/chaosOperators.ts';
import { SeededRandom } from '../../bench/lib/chaosRandom.ts';
import { outcomeCounts, readyReasons } from '../../bench/lib/chaosReport.ts';
import { controlPlaneRestarts } from '../../bench/lib/chaosRun.ts';
import { crKey } from '../../bench/lib/chaosSampler.ts';
import { chaosWorkload, chaosWorkloads, kindCounts, pickHalf } from '../../bench/lib/chaosWorkload.ts';

describe('parseChaosArgs', () => {
  it('defaults to two accounts, 200 objects, 20 kills, 2 leader kills, 1 apiserver and 1 etcd restart, faults on', () => {
    expect(parseChaosArgs([], '/out')).toEqual({
      accounts: 2,
      resources: 200,
      kills: 20,
      leaderKills: 2,
      apiServerRestarts: 1,
      etcdRestarts: 1,
      seed: undefined,
      faults: true,
      killDelayMs: [1000, 5000],
      convergeTimeoutMs: 600_000,
      deleteTimeoutMs: 300_000,
      deleteStormMs: 20_000,
      faultedConvergeMs: 30_000,
      outDir: '/out',
      lifecycleRuns: 4,
      lifecycleSteps: 50,
      lifecyclePath: undefined,
      lifecycleSettleMs: 60_000,
      lifecycleOnly: false,
      lifecycleCommands: 'all',
    });
  });

  it('takes the lifecycle model knobs', () => {
    expect(
      parseChaosArgs(
        [
          '--lifecycle-runs',
          '2',
          '--lifecycle-steps',
          '120',
          '--lifecycle-path',
          '3:1',
          '--lifecycle-settle',
          '90s',
          '--lifecycle-only',
          '--lifecycle-commands',
          'shared',
        ],
        '/out',
      ),
    ).toMatchObject({
      lifecycleRuns: 2,
      lifecycleSteps: 120,
      lifecyclePath: '3:1',
      lifecycleSettleMs: 90_000,
      lifecycleOnly: true,
      lifecycleCommands: 'shared',
    });
    expect(() => parseChaosArgs(['--lifecycle-commands', 'some'], '/out')).toThrow(
      /--lifecycle-commands: want all or shared/,
    );
    expect(() => parseChaosArgs(['--lifecycle-steps', '0'], '/out')).toThrow(
      /--lifecycle-steps: want a whole number from 1/,
    );
  });

  it('runs the old single-account way with --accounts 1 (then 3 objects are enough)', () => {
    expect(parseChaosArgs(['--accounts', '1', '--resources', '3'], '/out')).toMatchObject({
      accounts: 1,
      resources: 3,
    });
  });

  it('takes a seed to replay and every knob', () => {
    expect(
      parseChaosArgs(
        [
          '--seed',
          '42',
          '--resources',
          '24',
          '--kills',
          '5',
          '--kill-delay',
          '300ms..1500ms',
          '--no-faults',
          '--etcd-restarts',
          '3',
        ],
        '/out',
      ),
    ).toMatchObject({
      seed: 42,
      resources: 24,
      kills: 5,
      killDelayMs: [300, 1500],
      faults: false,
      etcdRestarts: 3,
    });
  });

  it.each([
    { reason: 'a negative seed', argv: ['--seed=-1'], message: /--seed: want a whole number/ },
    { reason: 'too few objects for one of each kind', argv: ['--resources', '2'], message: /--resources/ },
    {
      reason: 'too few objects for one of each kind in each of two namespaces',
      argv: ['--resources', '5'],
      message: /--resources: want a whole number from 6/,
    },
    {
      reason: 'three accounts',
      argv: ['--accounts', '3'],
      message: /--accounts: want a whole number from 1 to 2/,
    },
    {
      reason: 'a kill delay without a range',
      argv: ['--kill-delay', '5s'],
      message: /--kill-delay: want MIN\.\.MAX/,
    },
    { reason: 'an upside-down range', argv: ['--kill-delay', '5s..1s'], message: /MIN is above MAX/ },
    { reason: 'an unknown flag', argv: ['--nope'], message: /nope/ },
  ])('rejects $reason', ({ argv, message }) => {
    expect(() => parseChaosArgs(argv, '/out')).toThrow(message);
  });
});

describe('controlPlaneRestarts', () => {
  it('alternates kube-apiserver and etcd restarts while both are left', () => {
    expect(controlPlaneRestarts(1, 1)).toEqual(['apiserver', 'etcd']);
    expect(controlPlaneRestarts(3, 1)).toEqual(['apiserver', 'etcd', 'apiserver', 'apiserver']);
    expect(controlPlaneRestarts(0, 2)).toEqual(['etcd', 'etcd']);
    expect(controlPlaneRestarts(0, 0)).toEqual([]);
  });
});

describe('SeededRandom', () => {
  it('replays the same stream from the same seed, and derived streams differ by label', () => {
    const draw = (r: SeededRandom) => Array.from({ length: 5 }, () => r.int(0, 1000));
    expect(draw(new SeededRandom(7))).toEqual(draw(new SeededRandom(7)));
    expect(draw(new SeededRandom(7))).not.toEqual(draw(new SeededRandom(8)));
    expect(draw(SeededRandom.derive(7, 'faults'))).not.toEqual(draw(SeededRandom.derive(7, 'schedule')));
  });

  it('stays within bounds', () => {
    const r = new SeededRandom(1);
    for (let i = 0; i < 1000; i++) {
      const n = r.int(3, 5);
      expect(n).toBeGreaterThanOrEqual(3);
      expect(n).toBeLessThanOrEqual(5);
    }
  });
});

describe('chaosWorkload', () => {
  it('splits 200 objects 60/25/15 and gives each MyIngress a Service and an EndpointSlice', () => {
    expect(kindCounts(200)).toEqual({ dns: 120, myIngress: 50, managedDb: 30 });
    const w = chaosWorkload('chaos', 200, ['a.test', 'b.test'], new SeededRandom(3));
    const byKind = (k: string) => w.items.filter((i) => i.kind === k).length;
    expect([byKind('DNSRecord'), byKind('MyIngress'), byKind('ManagedDB')]).toEqual([120, 50, 30]);
    expect(w.supporting.filter((o) => o.kind === 'Service')).toHaveLength(50);
    expect(w.supporting.filter((o) => o.kind === 'EndpointSlice')).toHaveLength(50);
    const zones = new Set(
      w.items.flatMap((i) =>
        i.kind === 'DNSRecord' ? [(i.object as unknown as { spec: { zoneName: string } }).spec.zoneName] : [],
      ),
    );
    expect(zones).toEqual(new Set(['a.test', 'b.test']));
  });

  it('is the same for the same seed', () => {
    const names = (seed: number) =>
      chaosWorkload('chaos', 40, ['a.test'], new SeededRandom(seed)).items.map((i) => i.name);
    expect(names(9)).toEqual(names(9));
    expect(names(9)).not.toEqual(names(10));
  });

  it('spreads objects over namespaces, each with its own zones and aliases only to its own MyIngresses', () => {
    const parts = [
      { namespace: 'chaos-1', zones: ['a.one.test', 'b.one.test'] },
      { namespace: 'chaos-2', zones: ['a.two.test'] },
    ];
    const w = chaosWorkloads(parts, 25, new SeededRandom(4));
    const spec = (i: (typeof w.items)[number]) =>
      (i.object as unknown as { spec: { zoneName?: string; aliasTarget?: unknown } }).spec;
    const inNs = (n: string) => w.items.filter((i) => i.namespace === n);
    expect([inNs('chaos-1').length, inNs('chaos-2').length]).toEqual([13, 12]);
    for (const [n, zones] of [
      ['chaos-1', new Set(['a.one.test', 'b.one.test'])],
      ['chaos-2', new Set(['a.two.test'])],
    ] as const) {
      const items = inNs(n);
      expect(items.every((i) => i.object.metadata.namespace === n)).toBe(true);
      expect(new Set(items.flatMap((i) => (i.kind === 'DNSRecord' ? [spec(i).zoneName] : [])))).toEqual(
        zones,
      );
      for (const k of ['DNSRecord', 'MyIngress', 'ManagedDB'])
        expect(items.some((i) => i.kind === k)).toBe(true);
    }
    expect(
      w.supporting
        .filter((o) => o.kind === 'Service')
        .map((o) => o.metadata.namespace)
        .sort(),
    ).toEqual(
      inNs('chaos-1')
        .concat(inNs('chaos-2'))
        .filter((i) => i.kind === 'MyIngress')
        .map((i) => i.namespace)
        .sort(),
    );
    // Shuffled across namespaces, not one namespace after the other.
    const order = w.items.map((i) => i.namespace);
    expect(order.slice(0, 13).every((n) => n === 'chaos-1')).toBe(false);
    // One part is exactly the single-namespace workload (a seed replays as before).
    expect(chaosWorkloads([{ namespace: 'chaos', zones: ['a.test'] }], 30, new SeededRandom(8))).toEqual(
      chaosWorkload('chaos', 30, ['a.test'], new SeededRandom(8)),
    );
  });

  it('deletes an alias with its MyIngress, never with the same-named MyIngress of another namespace', () => {
    const w = chaosWorkloads(
      [
        { namespace: 'chaos-1', zones: ['a.test'] },
        { namespace: 'chaos-2', zones: ['b.test'] },
      ],
      60,
      new SeededRandom(5),
    );
    const chosen = pickHalf(w.items, new SeededRandom(6));
    expect(chosen.length * 2).toBeGreaterThanOrEqual(w.items.length);
    const chosenKeys = new Set(chosen.map((i) => `${i.namespace}/${i.name}`));
    for (const item of w.items)
      if (item.group !== item.name)
        expect(chosenKeys.has(`${item.namespace}/${item.name}`)).toBe(
          chosenKeys.has(`${item.namespace}/${item.group}`),
        );
    // Names repeat across namespaces (rec-0, ing-0, …); groups are per namespace, so some object
    // goes while its namesake in the other namespace stays.
    const other = (n: string) => (n === 'chaos-1' ? 'chaos-2' : 'chaos-1');
    expect(chosen.some((i) => !chosenKeys.has(`${other(i.namespace)}/${i.name}`))).toBe(true);
    expect(w.items.some((i) => i.group !== i.name)).toBe(true);
  });

  it('deletes whole groups (a MyIngress with its aliases) until at least half are chosen', () => {
    const w = chaosWorkload('chaos', 60, ['a.test', 'b.test'], new SeededRandom(5));
    const chosen = pickHalf(w.items, new SeededRandom(6));
    expect(chosen.length * 2).toBeGreaterThanOrEqual(w.items.length);
    const chosenNames = new Set(chosen.map((i) => i.name));
    for (const item of w.items) {
      // An alias goes exactly when the MyIngress it follows goes.
      if (item.group !== item.name) expect(chosenNames.has(item.name)).toBe(chosenNames.has(item.group));
    }
    expect(w.items.some((i) => i.group !== i.name)).toBe(true);
  });
});

describe('slotOfHolder', () => {
  it('maps a Lease holder identity to the replica slot', () => {
    expect(slotOfHolder('chaos-a_1f2e3d4c')).toBe('a');
    expect(slotOfHolder('chaos-solo_00000000')).toBe('solo');
    expect(slotOfHolder('other-pod_1234')).toBeUndefined();
    expect(slotOfHolder(undefined)).toBeUndefined();
  });
});

describe('report helpers', () => {
  it('counts proxy outcomes and Ready reasons per kind', () => {
    expect(
      outcomeCounts([{ outcome: 'forwarded' }, { outcome: 'throttle' }, { outcome: 'forwarded' }]),
    ).toEqual({ forwarded: 2, throttle: 1 });
    const cr = { namespace: 'chaos', uid: 'u', deleting: false, finalizers: [], ready: false };
    expect(
      readyReasons([
        { ...cr, kind: 'DNSRecord', name: 'a', readyDetail: 'Pending: queued' },
        { ...cr, kind: 'DNSRecord', name: 'b', readyDetail: 'Available: ok', ready: true },
        { ...cr, kind: 'DNSRecord', name: 'c', readyDetail: 'Pending: queued' },
        { ...cr, kind: 'ManagedDB', name: 'd', readyDetail: 'no Ready condition' },
      ]),
    ).toEqual({ DNSRecord: { Pending: 2, Available: 1 }, ManagedDB: { 'no Ready condition': 1 } });
    expect(crKey({ kind: 'MyIngress', namespace: 'chaos-1', name: 'ing-1' })).toBe('MyIngress chaos-1/ing-1');
  });
});
