// The pure helpers of the engine–adapter contract (src/runtime/adapter.ts)
// and of the settings every kind parses (src/runtime/settings.ts).
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { ManagedObject, OwnershipTags } from '../../src/apis/managed.ts';
import {
  busyObservation,
  describeDelta,
  differsFromSpec,
  driftIn,
  hasDelta,
  sharedClient,
  type Delta,
  type ExternalClient,
  type ReconcileContext,
} from '../../src/runtime/adapter.ts';
import {
  controllerSettingsOf,
  defaultControllerSettings,
  durationSetting,
  formatDuration,
  parseDuration,
  SettingsError,
  type ControllerSettings,
} from '../../src/runtime/settings.ts';
import { FakeClock } from '../support/fakeClock.ts';

const ownership: OwnershipTags = { cluster: 'prod', owner: 'shop/web', uid: 'uid-1' };

describe('differsFromSpec', () => {
  it.each([
    { reason: 'an empty delta', delta: [] as Delta, want: false },
    {
      reason: 'only operations',
      delta: [{ field: 'request', change: 'snapshot s1', operation: true }] as Delta,
      want: false,
    },
    { reason: 'a spec difference', delta: [{ field: 'instance', change: 'class' }] as Delta, want: true },
    {
      reason: 'a spec difference beside an operation',
      delta: [
        { field: 'snapshot', change: 'due', operation: true },
        { field: 'tags', change: 'tags' },
      ] as Delta,
      want: true,
    },
  ])('is $want for $reason', ({ delta, want }) => {
    expect(differsFromSpec(delta)).toBe(want);
  });
});

describe('driftIn', () => {
  it.each([
    { reason: 'an empty delta', delta: [] as Delta, want: false },
    {
      reason: 'only operations',
      delta: [{ field: 'request', change: 's1', operation: true }] as Delta,
      want: false,
    },
    {
      reason: 'only fields following Kubernetes (endpoints), which still differ from the spec',
      delta: [{ field: 'targets', change: '+1/-1', follows: true }] as Delta,
      want: false,
    },
    {
      reason: 'a field AWS moved beside one that follows Kubernetes',
      delta: [
        { field: 'targets', change: '+1', follows: true },
        { field: 'listeners', change: 'listener 80 modified' },
      ] as Delta,
      want: true,
    },
  ])('is $want for $reason', ({ delta, want }) => {
    expect(driftIn(delta)).toBe(want);
    expect(differsFromSpec(delta)).toBe(delta.some((d) => d.operation !== true));
  });
});

describe('hasDelta and describeDelta', () => {
  const delta: Delta<'ttl' | 'value' | 'tags'> = [
    { field: 'ttl', change: 'ttl 300 → 60' },
    { field: 'value', change: 'value 1.2.3.4 → 5.6.7.8' },
  ];

  it.each([
    { reason: 'the first field', field: 'ttl' as const, want: true },
    { reason: 'the second field', field: 'value' as const, want: true },
    { reason: 'a field that does not differ', field: 'tags' as const, want: false },
  ])('hasDelta finds $reason', ({ field, want }) => {
    expect(hasDelta(delta, field)).toBe(want);
  });

  it('hasDelta finds nothing in an empty delta', () => {
    expect(hasDelta<'ttl'>([], 'ttl')).toBe(false);
  });

  it.each([
    { reason: 'an empty delta', delta: [], want: undefined },
    { reason: 'one entry', delta: [{ field: 'ttl', change: 'ttl 300 → 60' }], want: 'ttl 300 → 60' },
    { reason: 'several entries, in order', delta, want: 'ttl 300 → 60; value 1.2.3.4 → 5.6.7.8' },
  ])('describeDelta of $reason', ({ delta: d, want }) => {
    expect(describeDelta(d)).toBe(want);
  });
});

describe('busyObservation', () => {
  it('is an existing resource of ours with nothing to change, not ready for the reason given', () => {
    const o = busyObservation({
      ownership,
      reason: 'Modifying',
      message: 'instance class change in flight',
      status: { arn: 'arn:db' },
      details: { state: 'modifying' },
      requeueAfterMs: 15_000,
    });
    expect(o).toEqual({
      exists: true,
      ownership,
      delta: [],
      ready: { ready: false, reason: 'Modifying', message: 'instance class change in flight' },
      status: { arn: 'arn:db' },
      details: { state: 'modifying' },
      requeueAfterMs: 15_000,
    });
  });

  it('leaves requeueAfterMs out (not undefined) when none is given', () => {
    const o = busyObservation({
      ownership,
      reason: 'Deleting',
      message: 'deletion under way',
      status: {},
      details: undefined,
    });
    expect(Object.hasOwn(o, 'requeueAfterMs')).toBe(false);
    expect(o.ready).toEqual({ ready: false, reason: 'Deleting', message: 'deletion under way' });
  });
});

describe('sharedClient', () => {
  const client: ExternalClient<ManagedObject> = {
    observe: () => Promise.resolve({ exists: false }),
    create: () => Promise.resolve({ status: {} }),
    update: () => Promise.resolve({}),
    delete: () => Promise.resolve({ gone: true }),
  };
  const ctx: ReconcileContext = { logger: pino({ level: 'silent' }), ownership, clock: new FakeClock() };
  const object = (name: string): ManagedObject => ({
    apiVersion: 'test.skylift.dev/v1',
    kind: 'Gadget',
    metadata: { name, namespace: 'shop', uid: `uid-${name}` },
    spec: {},
  });

  it('hands every object the same client', async () => {
    const connector = sharedClient(client);
    await expect(connector.connect(object('a'), ctx)).resolves.toBe(client);
    await expect(connector.connect(object('b'), ctx)).resolves.toBe(client);
  });
});

describe('parseDuration', () => {
  it.each([
    { reason: 'milliseconds', text: '1500ms', want: 1500 },
    { reason: 'seconds', text: '30s', want: 30_000 },
    { reason: 'minutes', text: '10m', want: 600_000 },
    { reason: 'hours', text: '1h', want: 3_600_000 },
    { reason: 'a fraction', text: '1.5m', want: 90_000 },
    { reason: 'a fraction of a millisecond, rounded', text: '2.5ms', want: 3 },
    { reason: 'surrounding blanks', text: ' 2s ', want: 2000 },
    { reason: 'zero', text: '0s', want: 0 },
  ])('reads $reason', ({ text, want }) => {
    expect(parseDuration(text)).toBe(want);
  });

  it.each([
    { reason: 'no unit', text: '30' },
    { reason: 'an unknown unit', text: '1d' },
    { reason: 'words', text: '10 minutes' },
    { reason: 'a negative number', text: '-5s' },
    { reason: 'nothing', text: '' },
    { reason: 'a unit alone', text: 'ms' },
  ])('refuses $reason with a SettingsError quoting the text', ({ text }) => {
    expect(() => parseDuration(text)).toThrow(SettingsError);
    expect(() => parseDuration(text)).toThrow(`invalid duration ${JSON.stringify(text)}`);
  });
});

describe('formatDuration', () => {
  it.each([
    { reason: 'whole hours', ms: 7_200_000, want: '2h' },
    { reason: 'whole minutes', ms: 600_000, want: '10m' },
    { reason: 'minutes that are not whole hours', ms: 5_400_000, want: '90m' },
    { reason: 'whole seconds', ms: 30_000, want: '30s' },
    { reason: 'seconds that are not whole minutes', ms: 90_000, want: '90s' },
    { reason: 'milliseconds that are not whole seconds', ms: 1500, want: '1500ms' },
    { reason: 'zero', ms: 0, want: '0ms' },
  ])('writes $reason in the largest whole unit and reads back the same: $want', ({ ms, want }) => {
    expect(formatDuration(ms)).toBe(want);
    expect(parseDuration(formatDuration(ms))).toBe(ms);
  });

  it('round-trips the defaults the flags print', () => {
    for (const ms of [defaultControllerSettings.resyncPeriodMs, 1000, 2000, 15_000, 60_000, 86_400_000])
      expect(parseDuration(formatDuration(ms))).toBe(ms);
  });
});

describe('durationSetting', () => {
  const values = new Map([
    ['poll-interval', '20s'],
    ['batch-window', 'soon'],
  ]);

  it('reads the flag when given', () => {
    expect(durationSetting(values, 'poll-interval', 5000)).toBe(20_000);
  });

  it('takes the fallback when the flag is absent', () => {
    expect(durationSetting(values, 'resync-period', 5000)).toBe(5000);
  });

  it('names the flag in its SettingsError', () => {
    expect(() => durationSetting(values, 'batch-window', 1000)).toThrow(SettingsError);
    expect(() => durationSetting(values, 'batch-window', 1000)).toThrow(
      /^--batch-window: invalid duration "soon"/,
    );
  });
});

describe('controllerSettingsOf', () => {
  it('picks exactly the five controller settings from a larger set of options', () => {
    const options: ControllerSettings & { region: string; logLevel: string } = {
      clusterId: 'prod-eu',
      namespaces: ['shop', 'ops'],
      labelSelector: 'shard=a',
      workers: 4,
      resyncPeriodMs: 30_000,
      region: 'eu-west-1',
      logLevel: 'debug',
    };
    expect(controllerSettingsOf(options)).toStrictEqual({
      clusterId: 'prod-eu',
      namespaces: ['shop', 'ops'],
      labelSelector: 'shard=a',
      workers: 4,
      resyncPeriodMs: 30_000,
    });
  });

  it('keeps an absent label selector as a key (undefined), so the shape never varies', () => {
    const s = controllerSettingsOf(defaultControllerSettings);
    expect(s).toStrictEqual(defaultControllerSettings);
    expect(Object.keys(s).sort()).toEqual(
      ['clusterId', 'labelSelector', 'namespaces', 'resyncPeriodMs', 'workers'].sort(),
    );
  });
});
