// The engine's lifecycle against the real apiserver, driven one reconcile at
// a time so every step is observable: finalizer, create with a pending
// marker, status written once and only on change, update and drift, typed
// errors, deletion policies, ObserveOnly, adoption and ownership conflicts.
import { sharedClient, type ResourceLocation } from '../../src/runtime/adapter.ts';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../dev/wait.ts';
import { realClock, type Clock } from '../../src/runtime/clock.ts';
import { Engine, type ReconcileOutcome } from '../../src/runtime/engine.ts';
import { ForbiddenError, RetryableError, TerminalError } from '../../src/runtime/errors.ts';
import { EventRecorder } from '../../src/runtime/events.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { resourcePath, type KubeObject } from '../../src/apis/meta.ts';
import {
  createPendingAnnotation,
  finalizerName,
  ownershipTagMap,
  requestAnnotation,
  type Condition,
} from '../../src/apis/managed.ts';
import { secretType } from '../../src/apis/core.ts';
import { Metrics } from '../../src/runtime/metrics.ts';
import {
  FakeCloud,
  GadgetAdapter,
  gadgetCompanionName,
  gadgetCrd,
  gadgetType,
  type Gadget,
  type GadgetSpec,
} from '../support/gadget.ts';
import { ensureCrd, eventsFor, kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { FakeClock } from '../support/fakeClock.ts';

const resyncPeriodMs = 60_000;
const pollMs = 1000;
const createGraceMs = 30_000;

interface Harness {
  engine: Engine<Gadget>;
  cloud: FakeCloud;
  client: KubeClient;
  metrics: Metrics;
  statusWrites(): number;
  /** Writes (PATCH, PUT, POST, DELETE) to Gadgets and their status, by this harness's engine. */
  gadgetWrites(): number;
  ns: string;
  apply(name: string, spec: GadgetSpec): Promise<Gadget>;
  read(name: string): Promise<Gadget>;
  reconcile(name: string): Promise<ReconcileOutcome>;
  condition(name: string, type: string): Promise<Condition | undefined>;
}

let admin: KubeClient;

beforeAll(async () => {
  admin = kubeClient();
  await ensureCrd(admin, gadgetCrd, gadgetType);
});

/** The AWS account and region the harness's adapter reaches (`location`), changeable between passes. */
interface Reach {
  location: ResourceLocation;
  /** Set: the adapter's authorize refuses every object with this message (as a TeamPolicy would). */
  refusal?: string;
}

async function harness(
  opts: { firstStatusHoldMs?: number; reach?: Reach; clock?: Clock } = {},
): Promise<Harness> {
  const { reach, ...engineOpts } = opts;
  const client = kubeClient();
  let statusWrites = 0;
  let gadgetWrites = 0;
  client.observe((method, path) => {
    if (method === 'PATCH' && path.endsWith('/status')) statusWrites++;
    if (method !== 'GET' && path.includes(`/${gadgetType.plural}/`)) gadgetWrites++;
  });
  const cloud = new FakeCloud();
  const metrics = new Metrics();
  const logger = pino({ level: 'silent' });
  const events = new EventRecorder({
    client,
    clock: realClock,
    logger,
    controller: 'skylift.dev/test',
    instance: 'test',
    onRecorded: (spec, outcome) => metrics.events.inc({ reason: spec.reason, outcome }),
  });
  const adapter = new GadgetAdapter(cloud);
  const engine = new Engine<Gadget>({
    type: gadgetType,
    connector:
      reach === undefined
        ? sharedClient(adapter)
        : {
            connect: () =>
              Promise.resolve({
                observe: (mr, ctx) => adapter.observe(mr, ctx),
                create: (mr, ctx) => adapter.create(mr, ctx),
                update: (mr, obs, ctx) => adapter.update(mr, obs, ctx),
                delete: (mr, obs) => adapter.delete(mr, obs),
                location: { ...reach.location },
                authorize: () =>
                  reach.refusal !== undefined
                    ? Promise.reject(new ForbiddenError(reach.refusal))
                    : Promise.resolve(),
              }),
          },
    client,
    clock: realClock,
    logger,
    metrics,
    events,
    clusterId: 'test-cluster',
    resyncPeriodMs,
    pollMs,
    createGraceMs,
    ...engineOpts,
  });
  const ns = await newNamespace(admin, 'engine');
  const path = (name?: string): string => resourcePath(gadgetType, { namespace: ns, name });
  const read = async (name: string): Promise<Gadget> => {
    const obj = await readObject<Gadget>(client, gadgetType, ns, name);
    if (obj === undefined) throw new Error(`${name} not found`);
    return obj;
  };
  return {
    engine,
    cloud,
    client,
    metrics,
    ns,
    statusWrites: () => statusWrites,
    gadgetWrites: () => gadgetWrites,
    apply: (name, spec) =>
      client.create<Gadget>(path(), {
        apiVersion: 'test.skylift.dev/v1',
        kind: 'Gadget',
        metadata: { name },
        spec,
      }),
    read,
    reconcile: async (name) => h_engine(engine, await read(name)),
    condition: async (name, type) => (await read(name)).status?.conditions?.find((c) => c.type === type),
  };
}

function getConditionOf(obj: Gadget, type: string): Condition | undefined {
  return obj.status?.conditions?.find((c) => c.type === type);
}

function h_engine(engine: Engine<Gadget>, obj: Gadget): Promise<ReconcileOutcome> {
  return engine.reconcile(obj);
}

async function driftCount(m: Metrics): Promise<number> {
  const v = (await m.driftCorrections.get()).values.find((x) => x.labels.kind === 'Gadget');
  return v?.value ?? 0;
}

async function eventReasons(h: Harness, name: string, reason: string): Promise<string[]> {
  return waitFor(
    async () => {
      const notes = (await eventsFor(h.client, h.ns, name))
        .filter((e) => e.reason === reason)
        .map((e) => e.note);
      return notes.length > 0 ? notes : undefined;
    },
    { timeoutMs: 10_000, description: `a ${reason} event for ${name}` },
  );
}

describe('engine lifecycle', () => {
  it('adds the finalizer and marker before creating, then writes the outcome as the first status: two writes', async () => {
    const h = await harness();
    await h.apply('g1', { size: 1 });
    const first = await h.reconcile('g1');
    // Still creating, within the first-status hold: nothing to say yet, look again at the poll.
    expect(first).toEqual({ kind: 'done', requeueAfterMs: pollMs });

    const obj = await h.read('g1');
    expect(obj.metadata.finalizers).toContain(finalizerName);
    expect(obj.metadata.annotations?.[createPendingAnnotation]).toBeDefined();
    expect(obj.status).toBeUndefined();
    expect(h.gadgetWrites()).toBe(1);
    const [gadget] = h.cloud.all();
    expect(h.cloud.all()).toHaveLength(1);
    expect(gadget?.tags).toEqual({
      'skylift.dev/cluster': 'test-cluster',
      'skylift.dev/owner': `${h.ns}/g1`,
      'skylift.dev/uid': obj.metadata.uid,
    });

    const second = await h.reconcile('g1');
    expect(second.kind).toBe('done');
    expect(await h.condition('g1', 'Ready')).toMatchObject({ status: 'True', reason: 'Available' });
    expect(await h.condition('g1', 'Synced')).toMatchObject({ status: 'True', reason: 'ReconcileSuccess' });
    const ready = await h.read('g1');
    expect(ready.status?.observedGeneration).toBe(1);
    expect(ready.status?.id).toBe(gadget?.id);
    // The marker stays (removing it would be a third write); it no longer holds anything back.
    expect(ready.metadata.annotations?.[createPendingAnnotation]).toBe(
      obj.metadata.annotations?.[createPendingAnnotation],
    );
    expect(h.gadgetWrites()).toBe(2);
    expect(h.cloud.calls.create).toBe(1);
    expect(await eventReasons(h, 'g1', 'Created')).toEqual([`created gadget ${gadget?.id ?? ''}`]);
  });

  // Issue 27, item 16: the controller reconciles a status someone else wrote (a forged Ready=True),
  // and must not take the engine's own writes, as the apiserver gives them back, for one.
  it('knows its own status writes as the apiserver returns them, and not one written by someone else', async () => {
    const h = await harness({ firstStatusHoldMs: 0 });
    await h.apply('own', { size: 1 });
    await h.reconcile('own');
    expect(h.engine.wroteStatus(await h.read('own'))).toBe(true);
    await h.reconcile('own');
    const ready = await h.read('own');
    expect(ready.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(h.engine.wroteStatus(ready)).toBe(true);
    await h.client.patch(
      resourcePath(gadgetType, { namespace: h.ns, name: 'own', subresource: 'status' }),
      { status: { size: 99 } },
      'merge',
    );
    expect(h.engine.wroteStatus(await h.read('own'))).toBe(false);
    await h.reconcile('own');
    expect(h.engine.wroteStatus(await h.read('own'))).toBe(true);
  });

  // Issue 27, item 18: a request annotation the kind does not accept was ignored without a word.
  it('reports a request annotation the kind does not accept once, and writes nothing more at a resync', async () => {
    const clock = new FakeClock(Date.now());
    const h = await harness({ firstStatusHoldMs: 0, clock });
    await h.apply('asked', { size: 1 });
    await h.reconcile('asked');
    await h.reconcile('asked');
    await h.client.patch(
      resourcePath(gadgetType, { namespace: h.ns, name: 'asked' }),
      { metadata: { annotations: { [requestAnnotation]: 'polish now' } } },
      'merge',
    );
    await h.reconcile('asked');
    const synced = await h.condition('asked', 'Synced');
    expect(synced).toMatchObject({ status: 'False', reason: 'Terminal' });
    expect(synced?.message).toContain('Gadget accepts no requests');
    expect(await h.condition('asked', 'Ready')).toMatchObject({ status: 'True' });
    expect(await eventReasons(h, 'asked', 'TerminalError')).toEqual([synced?.message]);
    const writes = h.statusWrites();
    clock.advance(60_000);
    await h.reconcile('asked');
    expect(h.statusWrites()).toBe(writes);
    expect((await h.condition('asked', 'Synced'))?.lastTransitionTime).toBe(synced?.lastTransitionTime);
  });

  it('without a first-status hold, records the identity with Ready=False Creating right after the create', async () => {
    const h = await harness({ firstStatusHoldMs: 0 });
    await h.apply('g0', { size: 1 });
    expect(await h.reconcile('g0')).toEqual({ kind: 'done', requeueAfterMs: pollMs });
    const [gadget] = h.cloud.all();
    expect((await h.read('g0')).status?.id).toBe(gadget?.id);
    expect(await h.condition('g0', 'Ready')).toMatchObject({
      status: 'False',
      reason: 'Creating',
      observedGeneration: 1,
    });
    await h.reconcile('g0');
    expect(await h.condition('g0', 'Ready')).toMatchObject({ status: 'True', reason: 'Available' });
    expect(h.gadgetWrites()).toBe(3);
  });

  it('writes the progress of a new object still at work once the hold is over', async () => {
    const h = await harness({ firstStatusHoldMs: 300 });
    await h.apply('slow', { size: 1 });
    h.cloud.notReady = { ready: false, reason: 'Provisioning', message: 'the gadget is warming up' };
    const first = await h.reconcile('slow');
    // Looked at again when the hold ends, not a full poll later.
    expect(first.kind === 'done' ? first.requeueAfterMs : -1).toBeLessThanOrEqual(300);
    expect((await h.read('slow')).status).toBeUndefined();
    await waitFor(
      async () => {
        await h.reconcile('slow');
        return (await h.condition('slow', 'Ready'))?.reason === 'Provisioning' ? true : undefined;
      },
      { timeoutMs: 10_000, description: 'the progress written once the hold is over' },
    );
    expect(await h.condition('slow', 'Ready')).toMatchObject({
      status: 'False',
      message: 'the gadget is warming up',
    });
    h.cloud.notReady = undefined;
  });

  it('writes a failure of a new object at once, hold or not', async () => {
    const h = await harness();
    await h.apply('bad', { size: 1 });
    h.cloud.failNext('create', new RetryableError('AWSError', 'InternalFailure'));
    expect(await h.reconcile('bad')).toEqual({ kind: 'backoff' });
    expect(await h.condition('bad', 'Synced')).toMatchObject({ status: 'False', reason: 'AWSError' });
  });

  it('writes no status on a no-op resync and schedules the next one with jitter', async () => {
    const h = await harness();
    await h.apply('quiet', { size: 1 });
    await h.reconcile('quiet');
    await h.reconcile('quiet');
    const writes = h.statusWrites();
    const rv = (await h.read('quiet')).metadata.resourceVersion;
    const outcomes = [await h.reconcile('quiet'), await h.reconcile('quiet'), await h.reconcile('quiet')];
    expect(h.statusWrites()).toBe(writes);
    expect((await h.read('quiet')).metadata.resourceVersion).toBe(rv);
    for (const o of outcomes) {
      expect(o.kind).toBe('done');
      const after = o.kind === 'done' ? (o.requeueAfterMs ?? 0) : 0;
      expect(after).toBeGreaterThanOrEqual(resyncPeriodMs * 0.9);
      expect(after).toBeLessThanOrEqual(resyncPeriodMs * 1.1);
    }
  });

  it('applies spec changes, and puts back drift (changed or deleted behind its back), counting it', async () => {
    const h = await harness();
    await h.apply('drifty', { size: 1 });
    await h.reconcile('drifty');
    await h.reconcile('drifty');

    await h.client.patch(
      resourcePath(gadgetType, { namespace: h.ns, name: 'drifty' }),
      { spec: { size: 3 } },
      'merge',
    );
    await h.reconcile('drifty');
    expect(h.cloud.all().map((g) => g.size)).toEqual([3]);
    expect(await eventReasons(h, 'drifty', 'Updated')).toEqual(['size set to 3']);
    await h.reconcile('drifty');
    expect(await driftCount(h.metrics)).toBe(0);
    expect((await h.read('drifty')).status?.observedGeneration).toBe(2);

    const g = h.cloud.all()[0];
    if (g === undefined) throw new Error('no gadget');
    h.cloud.put({ ...g, size: 7 });
    await h.reconcile('drifty');
    expect(h.cloud.all().map((x) => x.size)).toEqual([3]);
    expect(await driftCount(h.metrics)).toBe(1);
    expect(await eventReasons(h, 'drifty', 'DriftCorrected')).toEqual(['corrected drift: size set to 3']);
    await h.reconcile('drifty');

    h.cloud.remove(g.id);
    await h.reconcile('drifty');
    expect(h.cloud.all()).toHaveLength(1);
    expect(h.cloud.all()[0]?.id).not.toBe(g.id);
    expect(await driftCount(h.metrics)).toBe(2);
  });

  it('stops on a terminal error until the spec changes, and backs off on retryable ones', async () => {
    const h = await harness();
    await h.apply('bad', { size: 13 });
    h.cloud.failNext('create', new TerminalError('size 13 is not offered in this region'));
    const outcome = await h.reconcile('bad');
    expect(outcome.kind).toBe('done');
    expect(outcome.kind === 'done' ? outcome.requeueAfterMs : 0).toBeGreaterThanOrEqual(resyncPeriodMs * 0.9);
    expect(await h.condition('bad', 'Synced')).toMatchObject({
      status: 'False',
      reason: 'Terminal',
      message: 'create: size 13 is not offered in this region',
    });
    expect(h.cloud.all()).toHaveLength(0);
    expect(await eventReasons(h, 'bad', 'TerminalError')).toHaveLength(1);

    await h.client.patch(
      resourcePath(gadgetType, { namespace: h.ns, name: 'bad' }),
      { spec: { size: 2 } },
      'merge',
    );
    h.cloud.failNext('create', new RetryableError('Throttled', 'Rate exceeded'));
    expect(await h.reconcile('bad')).toEqual({ kind: 'backoff' });
    expect(await h.condition('bad', 'Synced')).toMatchObject({
      status: 'False',
      reason: 'Throttled',
      message: 'create: Rate exceeded',
    });
    await h.reconcile('bad');
    await h.reconcile('bad');
    expect(await h.condition('bad', 'Synced')).toMatchObject({ status: 'True' });
    expect(await h.condition('bad', 'Ready')).toMatchObject({ status: 'True' });
    expect(h.cloud.calls.create).toBe(3);
    expect(h.cloud.all()).toHaveLength(1);
  });

  it('requeues silently on a stale object (409) without touching status', async () => {
    const h = await harness();
    await h.apply('stale', { size: 1 });
    const stale = await h.read('stale');
    await h.client.patch(
      resourcePath(gadgetType, { namespace: h.ns, name: 'stale' }),
      { metadata: { labels: { touched: 'yes' } } },
      'merge',
    );
    const writes = h.statusWrites();
    expect(await h.engine.reconcile(stale)).toEqual({ kind: 'backoff' });
    expect(h.statusWrites()).toBe(writes);
    expect((await h.read('stale')).status).toBeUndefined();
    expect(h.cloud.calls.create).toBe(0);
  });

  it('neither leaks nor duplicates when the create result is lost', async () => {
    const h = await harness();
    await h.apply('lost', { size: 1 });
    h.cloud.afterCreate = () => {
      h.cloud.afterCreate = undefined;
      throw new Error('connection reset after the create reached AWS');
    };
    expect(await h.reconcile('lost')).toEqual({ kind: 'backoff' });
    const crashed = await h.read('lost');
    expect(crashed.metadata.annotations?.[createPendingAnnotation]).toBeDefined();
    expect(crashed.status?.id).toBeUndefined();
    expect(h.cloud.all()).toHaveLength(1);

    await h.reconcile('lost');
    const healed = await h.read('lost');
    expect(h.cloud.calls.create).toBe(1);
    expect(h.cloud.all()).toHaveLength(1);
    expect(healed.status?.id).toBe(h.cloud.all()[0]?.id);
  });

  it('waits out a fresh create-pending marker instead of creating again, then creates once it is stale', async () => {
    const h = await harness();
    await h.apply('pending', { size: 1 });
    const path = resourcePath(gadgetType, { namespace: h.ns, name: 'pending' });
    await h.client.patch(
      path,
      {
        metadata: {
          finalizers: [finalizerName],
          annotations: { [createPendingAnnotation]: new Date().toISOString() },
        },
      },
      'merge',
    );
    const wait = await h.reconcile('pending');
    expect(wait.kind).toBe('done');
    expect(wait.kind === 'done' ? wait.requeueAfterMs : 0).toBeLessThanOrEqual(pollMs);
    expect(h.cloud.calls.create).toBe(0);

    await h.client.patch(
      path,
      {
        metadata: {
          annotations: {
            [createPendingAnnotation]: new Date(Date.now() - createGraceMs - 1000).toISOString(),
          },
        },
      },
      'merge',
    );
    await h.reconcile('pending');
    expect(h.cloud.calls.create).toBe(1);
    expect(h.cloud.all()).toHaveLength(1);
  });

  // Issue 27, item 16: a marker set by hand in the future held the create back for ever, showing
  // Ready=False Creating and no Synced condition at all.
  it('does not wait on a create-pending marker far in the future, and says Synced while it waits on one', async () => {
    const h = await harness({ firstStatusHoldMs: 0 });
    const mark = async (name: string, at: number): Promise<void> => {
      await h.apply(name, { size: 1 });
      await h.client.patch(
        resourcePath(gadgetType, { namespace: h.ns, name }),
        {
          metadata: {
            finalizers: [finalizerName],
            annotations: { [createPendingAnnotation]: new Date(at).toISOString() },
          },
        },
        'merge',
      );
    };
    // A day ahead: no create of this engine's (nor of a replica whose clock is a little ahead) wrote it.
    await mark('future', Date.now() + 86_400_000);
    await h.reconcile('future');
    expect(h.cloud.calls.create).toBe(1);
    await h.reconcile('future');
    expect(await h.condition('future', 'Ready')).toMatchObject({ status: 'True', reason: 'Available' });
    expect(await h.condition('future', 'Synced')).toMatchObject({ status: 'True' });

    // Seconds ahead (a replica's clock): waited on, within a bound, and the pass itself succeeded.
    await mark('ahead', Date.now() + 5000);
    const wait = await h.reconcile('ahead');
    expect(wait.kind === 'done' ? wait.requeueAfterMs : 0).toBeLessThanOrEqual(pollMs);
    expect(h.cloud.calls.create).toBe(1);
    expect(await h.condition('ahead', 'Ready')).toMatchObject({ status: 'False', reason: 'Creating' });
    expect(await h.condition('ahead', 'Synced')).toMatchObject({
      status: 'True',
      reason: 'ReconcileSuccess',
    });
  });

  it('lets go of a new object whose resource was seen and is gone, without waiting out its marker', async () => {
    const h = await harness();
    await h.apply('brief', { size: 1 });
    await h.reconcile('brief');
    await h.reconcile('brief');
    const [gadget] = h.cloud.all();
    await h.client.delete(resourcePath(gadgetType, { namespace: h.ns, name: 'brief' }));
    h.cloud.remove(gadget?.id ?? '');
    // The marker is seconds old, but this engine saw the resource after it: nothing is pending.
    expect(await h.reconcile('brief')).toEqual({ kind: 'done' });
    expect(await readObject(h.client, gadgetType, h.ns, 'brief')).toBeUndefined();
  });

  it('creates again at once after a create refused on a later pass, instead of waiting out the marker', async () => {
    const h = await harness();
    await h.apply('refused', { size: 1 });
    await h.reconcile('refused');
    // What a Route 53 batch refused after the create was submitted looks like: nothing exists and
    // the next observe reports the refusal.
    h.cloud.remove(h.cloud.all()[0]?.id ?? '');
    h.cloud.failNext('observe', new TerminalError('spec.size 1 is refused'));
    await h.reconcile('refused');
    expect(await h.condition('refused', 'Synced')).toMatchObject({ status: 'False', reason: 'Terminal' });
    await h.reconcile('refused');
    expect(h.cloud.calls.create).toBe(2);
    expect(h.cloud.all()).toHaveLength(1);
  });
  it("keeps the marker through a deletion's terminal error: a create not yet visible is not let go", async () => {
    const h = await harness();
    await h.apply('leaving', { size: 1 });
    await h.reconcile('leaving');
    // The create is not visible yet (AWS lookups lag), and the object is deleted at once.
    const made = h.cloud.all()[0];
    h.cloud.remove(made?.id ?? '');
    await h.client.delete(resourcePath(gadgetType, { namespace: h.ns, name: 'leaving' }));
    h.cloud.failNext('observe', new TerminalError('describe refused'));
    await h.reconcile('leaving');
    const outcome = await h.reconcile('leaving');
    expect(outcome.kind === 'done' ? outcome.requeueAfterMs : undefined).toBe(pollMs);
    expect((await h.read('leaving')).metadata.finalizers).toContain(finalizerName);
    expect(await h.condition('leaving', 'Ready')).toMatchObject({
      reason: 'Deleting',
      message: 'waiting for a pending create to become visible before deleting',
    });
  });
});

// A new object's first status is held in memory (firstStatusHoldMs) while AWS is still at work: what
// that pass learnt must act as if it were written — the resource's location first of all — and must
// not be lost on a stale pass or a graceful stop.
describe('engine: the held first status', () => {
  const accountA = { account: '111111111111', region: 'us-east-1' };
  const accountB = { account: '222222222222', region: 'us-east-1' };

  async function createdInA(name: string): Promise<{ h: Harness; reach: Reach; before: Gadget }> {
    const reach: Reach = { location: accountA };
    const h = await harness({ reach, firstStatusHoldMs: 60_000 });
    await h.apply(name, { size: 1 });
    const before = await h.read(name);
    h.cloud.notReady = { ready: false, reason: 'Provisioning', message: 'the gadget is warming up' };
    await h.reconcile(name);
    await h.reconcile(name);
    expect((await h.read(name)).status).toBeUndefined();
    expect(h.cloud.calls.create).toBe(1);
    return { h, reach, before };
  }

  it('refuses to act in another account than the one the held status records', async () => {
    const { h, reach } = await createdInA('moved');
    reach.location = accountB;
    await h.reconcile('moved');
    expect(await h.condition('moved', 'Synced')).toMatchObject({ status: 'False', reason: 'Forbidden' });
    expect((await h.condition('moved', 'Synced'))?.message).toContain('account 111111111111');
    expect(h.cloud.calls.create).toBe(1);
  });

  it('keeps the held status through a stale pass', async () => {
    const { h, reach, before } = await createdInA('stale');
    // A pass with an outdated copy (no finalizer, old resourceVersion): its first write conflicts.
    const stale = await h.engine.reconcile(before);
    expect(stale).toEqual({ kind: 'backoff' });
    reach.location = accountB;
    await h.reconcile('stale');
    expect(await h.condition('stale', 'Synced')).toMatchObject({ status: 'False', reason: 'Forbidden' });
  });

  it('writes the held status at a graceful stop (writeHeld), once', async () => {
    const { h } = await createdInA('stopping');
    const written = await h.engine.writeHeld([await h.read('stopping')], Number.POSITIVE_INFINITY);
    expect(written).toBe(1);
    const obj = await h.read('stopping');
    expect(obj.status?.location).toEqual(accountA);
    expect(obj.status?.id).toBe(h.cloud.all()[0]?.id);
    expect(getConditionOf(obj, 'Ready')).toMatchObject({ status: 'False', reason: 'Provisioning' });
    expect(await h.engine.writeHeld([obj], Number.POSITIVE_INFINITY)).toBe(0);
  });
});

// Issue 27, item 15: the informer's cache lags the engine's own status writes by a few
// milliseconds. A pass that starts from a copy older than the last write must still write what
// differs from that write: an object refused and served again at once (a TeamPolicy applied in the
// same apply as another) stayed Forbidden until the resync, 10 minutes later.
describe('engine status over a cache behind its own writes', () => {
  it('writes Synced=True after a Forbidden it wrote, from a copy taken before that write', async () => {
    const reach: Reach = { location: { account: '111111111111', region: 'us-east-1' } };
    const h = await harness({ reach });
    await h.apply('lagging', { size: 1 });
    await h.reconcile('lagging');
    await h.reconcile('lagging');
    const cached = await h.read('lagging');
    expect(getConditionOf(cached, 'Synced')).toMatchObject({ status: 'True' });
    expect(getConditionOf(cached, 'Ready')).toMatchObject({ status: 'True' });

    reach.refusal = 'namespace x is not selected by any TeamPolicy';
    await h.engine.reconcile(structuredClone(cached));
    expect(await h.condition('lagging', 'Synced')).toMatchObject({ status: 'False', reason: 'Forbidden' });

    // Served again, and the next pass starts from the cache, which has not seen the Forbidden yet.
    delete reach.refusal;
    await h.engine.reconcile(structuredClone(cached));
    expect(await h.condition('lagging', 'Synced')).toMatchObject({ status: 'True' });
    expect(await h.condition('lagging', 'Ready')).toMatchObject({ status: 'True' });
  });
});

// Issue 14, item 9 and "conditions with one meaning": Ready=True only while the AWS resource exists
// and matched the spec as last observed; a failed pass never leaves a stale Ready=True or progress reason.
describe('engine conditions after a failed pass', () => {
  async function readyGadget(h: Harness, name: string): Promise<void> {
    await h.apply(name, { size: 1 });
    await h.reconcile(name);
    await h.reconcile(name);
    expect(await h.condition(name, 'Ready')).toMatchObject({ status: 'True', reason: 'Available' });
  }

  async function setSize(h: Harness, name: string, size: number): Promise<void> {
    await h.client.patch(resourcePath(gadgetType, { namespace: h.ns, name }), { spec: { size } }, 'merge');
  }

  it('a spec change AWS refuses turns Ready=True into Ready=False with the reason', async () => {
    const h = await harness();
    await readyGadget(h, 'refused');
    await setSize(h, 'refused', 13);
    h.cloud.failNext('update', new TerminalError('size 13 is not offered in this region'));
    await h.reconcile('refused');
    expect(await h.condition('refused', 'Synced')).toMatchObject({ status: 'False', reason: 'Terminal' });
    expect(await h.condition('refused', 'Ready')).toMatchObject({
      status: 'False',
      reason: 'Terminal',
      message: 'update: size 13 is not offered in this region',
      observedGeneration: 2,
    });
  });

  it('a resource deleted behind its back that cannot be created again is not Ready', async () => {
    const h = await harness();
    await readyGadget(h, 'gone');
    const [g] = h.cloud.all();
    h.cloud.remove(g?.id ?? '');
    h.cloud.failNext('create', new TerminalError('no capacity left: set spec.size to 2'));
    await h.reconcile('gone');
    expect(h.cloud.all()).toHaveLength(0);
    expect(await h.condition('gone', 'Ready')).toMatchObject({
      status: 'False',
      reason: 'Terminal',
      message: 'create: no capacity left: set spec.size to 2',
    });
  });

  it('AWS not answering keeps Ready=True judged against this spec, but not one judged against an older spec', async () => {
    const h = await harness();
    await readyGadget(h, 'quiet-aws');
    h.cloud.failNext('observe', new RetryableError('AWSUnreachable', 'connect ECONNREFUSED'));
    expect(await h.reconcile('quiet-aws')).toEqual({ kind: 'backoff' });
    expect(await h.condition('quiet-aws', 'Synced')).toMatchObject({
      status: 'False',
      reason: 'AWSUnreachable',
      message: 'observe: connect ECONNREFUSED',
    });
    expect(await h.condition('quiet-aws', 'Ready')).toMatchObject({ status: 'True', reason: 'Available' });

    await setSize(h, 'quiet-aws', 2);
    h.cloud.failNext('observe', new RetryableError('AWSUnreachable', 'connect ECONNREFUSED'));
    await h.reconcile('quiet-aws');
    expect(await h.condition('quiet-aws', 'Ready')).toMatchObject({
      status: 'False',
      reason: 'AWSUnreachable',
      observedGeneration: 2,
    });
    await h.reconcile('quiet-aws');
    await h.reconcile('quiet-aws');
    expect(await h.condition('quiet-aws', 'Ready')).toMatchObject({ status: 'True', observedGeneration: 2 });
    expect(await h.condition('quiet-aws', 'Synced')).toMatchObject({ status: 'True' });
  });

  it('a failure while creating replaces the Creating reason instead of leaving it stale', async () => {
    const h = await harness({ firstStatusHoldMs: 0 });
    await h.apply('stuck', { size: 1 });
    await h.reconcile('stuck');
    expect(await h.condition('stuck', 'Ready')).toMatchObject({ status: 'False', reason: 'Creating' });
    h.cloud.failNext('observe', new RetryableError('AWSError', 'InternalFailure'));
    await h.reconcile('stuck');
    expect(await h.condition('stuck', 'Ready')).toMatchObject({
      status: 'False',
      reason: 'AWSError',
      message: 'observe: InternalFailure',
    });
  });

  it('a failing step beside a resource that is fine: Synced=False with the reason, Ready=True, backoff', async () => {
    const h = await harness({ firstStatusHoldMs: 0 });
    await h.apply('side', { size: 1 });
    await h.reconcile('side');
    expect(await h.condition('side', 'Ready')).toMatchObject({ status: 'False', reason: 'Creating' });
    h.cloud.sideFailure = { reason: 'BackupFailed', message: 'the nightly backup was refused' };
    expect(await h.reconcile('side')).toEqual({ kind: 'backoff' });
    expect(await h.condition('side', 'Ready')).toMatchObject({ status: 'True', reason: 'Available' });
    expect(await h.condition('side', 'Synced')).toMatchObject({
      status: 'False',
      reason: 'BackupFailed',
      message: 'the nightly backup was refused',
    });
    h.cloud.sideFailure = undefined;
    await h.reconcile('side');
    expect(await h.condition('side', 'Synced')).toMatchObject({ status: 'True' });
  });

  it('a Ready=False a person must act on: Synced=True, one Warning Event, looked at again at the resync period', async () => {
    const h = await harness();
    await h.apply('blocked', { size: 1 });
    await h.reconcile('blocked');
    const recorded = async (reason: string): Promise<number> =>
      (await h.metrics.events.get()).values
        .filter((v) => v.labels.reason === reason)
        .reduce((sum, v) => sum + v.value, 0);
    h.cloud.notReady = {
      ready: false,
      reason: 'PartMissing',
      message: 'spec.part "p": create part p',
      actionRequired: true,
    };
    const outcomes: ReconcileOutcome[] = [];
    for (let i = 0; i < 3; i++) outcomes.push(await h.reconcile('blocked'));
    for (const o of outcomes) {
      // Not the poll interval: nothing in AWS is busy, a person has to act.
      expect(o.kind === 'done' ? o.requeueAfterMs : undefined).toBeGreaterThanOrEqual(resyncPeriodMs * 0.9);
    }
    expect(await h.condition('blocked', 'Ready')).toMatchObject({
      status: 'False',
      reason: 'PartMissing',
      message: 'spec.part "p": create part p',
    });
    expect(await h.condition('blocked', 'Synced')).toMatchObject({
      status: 'True',
      reason: 'ReconcileSuccess',
    });
    expect(await recorded('PartMissing')).toBe(1);
    expect(await eventReasons(h, 'blocked', 'PartMissing')).toEqual(['spec.part "p": create part p']);

    // Another message is news: one more Warning. The same state again is not.
    h.cloud.notReady = { ...h.cloud.notReady, message: 'spec.part "q": create part q' };
    await h.reconcile('blocked');
    await h.reconcile('blocked');
    expect(await recorded('PartMissing')).toBe(2);

    // Waiting on AWS without a person (actionRequired unset): polled, and no Warning.
    h.cloud.notReady = { ready: false, reason: 'Provisioning', message: 'still provisioning' };
    expect(await h.reconcile('blocked')).toEqual({ kind: 'done', requeueAfterMs: pollMs });
    expect(await recorded('Provisioning')).toBe(0);

    // Resolved: Ready, and a later relapse warns again.
    h.cloud.notReady = undefined;
    await h.reconcile('blocked');
    expect(await h.condition('blocked', 'Ready')).toMatchObject({ status: 'True' });
    h.cloud.notReady = {
      ready: false,
      reason: 'PartMissing',
      message: 'spec.part "q": create part q',
      actionRequired: true,
    };
    await h.reconcile('blocked');
    expect(await recorded('PartMissing')).toBe(3);
  });
});

describe('engine deletion', () => {
  it('keeps the finalizer until AWS confirms the resource is gone', async () => {
    const h = await harness();
    await h.apply('doomed', { size: 1 });
    await h.reconcile('doomed');
    await h.reconcile('doomed');
    h.cloud.slowDeletes = 1;
    await h.client.delete(resourcePath(gadgetType, { namespace: h.ns, name: 'doomed' }));
    expect(await h.reconcile('doomed')).toEqual({ kind: 'done', requeueAfterMs: pollMs });
    expect((await h.read('doomed')).metadata.finalizers).toContain(finalizerName);
    expect(await h.condition('doomed', 'Ready')).toMatchObject({ status: 'False', reason: 'Deleting' });
    expect(h.cloud.all()).toHaveLength(1);

    await h.reconcile('doomed');
    expect(h.cloud.all()).toHaveLength(0);
    expect(await readObject(h.client, gadgetType, h.ns, 'doomed')).toBeUndefined();
  });

  // docs/troubleshooting.md, "A deletion is stuck", step 3: set spec.deletionPolicy: Orphan.
  it('lets a deletion stuck on a terminal error go with deletionPolicy Orphan set while deleting', async () => {
    const h = await harness();
    await h.apply('stuck-delete', { size: 1 });
    await h.reconcile('stuck-delete');
    await h.reconcile('stuck-delete');
    h.cloud.failNext('delete', new TerminalError('protected: turn protection off'), 5);
    await h.client.delete(resourcePath(gadgetType, { namespace: h.ns, name: 'stuck-delete' }));
    await h.reconcile('stuck-delete');
    expect(await h.condition('stuck-delete', 'Synced')).toMatchObject({
      status: 'False',
      reason: 'Terminal',
    });
    expect(await h.condition('stuck-delete', 'Ready')).toMatchObject({ status: 'False', reason: 'Terminal' });
    await h.client.patch(
      resourcePath(gadgetType, { namespace: h.ns, name: 'stuck-delete' }),
      { spec: { deletionPolicy: 'Orphan' } },
      'merge',
    );
    await h.reconcile('stuck-delete');
    expect(await readObject(h.client, gadgetType, h.ns, 'stuck-delete')).toBeUndefined();
    expect(h.cloud.all()).toHaveLength(1);
  });

  it('leaves the AWS resource in place with deletionPolicy Orphan', async () => {
    const h = await harness();
    await h.apply('keep', { size: 1, deletionPolicy: 'Orphan' });
    await h.reconcile('keep');
    await h.client.delete(resourcePath(gadgetType, { namespace: h.ns, name: 'keep' }));
    await h.reconcile('keep');
    expect(await readObject(h.client, gadgetType, h.ns, 'keep')).toBeUndefined();
    expect(h.cloud.all()).toHaveLength(1);
    expect(h.cloud.calls.delete).toBe(0);
  });
});

describe('engine policies and ownership', () => {
  it('ObserveOnly reports on a resource and never writes AWS or holds a finalizer', async () => {
    const h = await harness();
    h.cloud.put({ id: 'legacy-1', size: 5, tags: {} });
    await h.apply('watcher', { size: 9, managementPolicy: 'ObserveOnly', externalName: 'legacy-1' });
    await h.reconcile('watcher');
    const obj = await h.read('watcher');
    expect(obj.metadata.finalizers ?? []).not.toContain(finalizerName);
    expect(obj.status?.size).toBe(5);
    expect(await h.condition('watcher', 'Ready')).toMatchObject({ status: 'True' });
    expect(h.cloud.get('legacy-1')).toEqual({ id: 'legacy-1', size: 5, tags: {} });
    expect(h.cloud.calls).toMatchObject({ create: 0, update: 0, delete: 0 });

    await h.apply('ghost', { size: 1, managementPolicy: 'ObserveOnly', externalName: 'nope' });
    await h.reconcile('ghost');
    expect(await h.condition('ghost', 'Ready')).toMatchObject({
      status: 'False',
      reason: 'NotFound',
      message: 'nope not found in AWS',
    });
    expect(h.cloud.calls.create).toBe(0);

    await h.client.delete(resourcePath(gadgetType, { namespace: h.ns, name: 'watcher' }));
    expect(await readObject(h.client, gadgetType, h.ns, 'watcher')).toBeUndefined();
    expect(h.cloud.get('legacy-1')).toBeDefined();
  });

  it('adopts an unowned resource through externalName and refuses one owned by another CR', async () => {
    const h = await harness();
    h.cloud.put({ id: 'orphan-7', size: 1, tags: { team: 'web' } });
    await h.apply('adopter', { size: 2, externalName: 'orphan-7' });
    await h.reconcile('adopter');
    const adopter = await h.read('adopter');
    expect(h.cloud.get('orphan-7')).toMatchObject({
      size: 2,
      tags: { team: 'web', 'skylift.dev/uid': adopter.metadata.uid, 'skylift.dev/owner': `${h.ns}/adopter` },
    });
    expect(await eventReasons(h, 'adopter', 'Adopted')).toHaveLength(1);

    await h.apply('thief', { size: 4, externalName: 'orphan-7' });
    await h.reconcile('thief');
    const synced = await h.condition('thief', 'Synced');
    expect(synced).toMatchObject({ status: 'False', reason: 'Conflict' });
    expect(synced?.message).toContain(`owned by ${h.ns}/adopter`);
    expect(h.cloud.get('orphan-7')?.size).toBe(2);
    expect(await eventReasons(h, 'thief', 'Conflict')).toHaveLength(1);

    await h.client.delete(resourcePath(gadgetType, { namespace: h.ns, name: 'thief' }));
    await h.reconcile('thief');
    expect(await readObject(h.client, gadgetType, h.ns, 'thief')).toBeUndefined();
    expect(h.cloud.get('orphan-7')).toBeDefined();
    expect(h.cloud.calls.delete).toBe(0);
  });

  it("adopts through externalName a resource whose owner no longer exists (left by Orphan), not another cluster's", async () => {
    const h = await harness();
    const gone = { cluster: 'test-cluster', owner: `${h.ns}/deleted-long-ago`, uid: 'uid-gone' };
    h.cloud.put({ id: 'left-1', size: 1, tags: ownershipTagMap(gone) });
    h.cloud.put({ id: 'left-2', size: 1, tags: ownershipTagMap({ ...gone, cluster: 'other-cluster' }) });
    await h.apply('heir', { size: 2, externalName: 'left-1' });
    await h.reconcile('heir');
    const heir = await h.read('heir');
    expect(await h.condition('heir', 'Synced')).toMatchObject({ status: 'True' });
    expect(h.cloud.get('left-1')).toMatchObject({
      size: 2,
      tags: { 'skylift.dev/uid': heir.metadata.uid, 'skylift.dev/owner': `${h.ns}/heir` },
    });
    expect(await eventReasons(h, 'heir', 'Adopted')).toHaveLength(1);

    // Another cluster's mark cannot be checked from here: still its.
    await h.apply('other', { size: 2, externalName: 'left-2' });
    await h.reconcile('other');
    expect(await h.condition('other', 'Synced')).toMatchObject({ status: 'False', reason: 'Conflict' });
    expect(h.cloud.get('left-2')?.size).toBe(1);
  });

  it('reports an externalName that does not exist as a terminal error instead of creating', async () => {
    const h = await harness();
    await h.apply('missing', { size: 1, externalName: 'does-not-exist' });
    await h.reconcile('missing');
    const synced = await h.condition('missing', 'Synced');
    expect(synced).toMatchObject({ status: 'False', reason: 'Terminal' });
    expect(synced?.message).toContain(
      'delete this object and create it again naming an existing resource, or without spec.externalName',
    );
    expect(h.cloud.calls.create).toBe(0);

    // The message's advice: nothing holds the object (no finalizer), so it goes at once; created
    // again without spec.externalName, Skylift creates the resource.
    expect((await h.read('missing')).metadata.finalizers ?? []).toEqual([]);
    await h.client.delete(resourcePath(gadgetType, { namespace: h.ns, name: 'missing' }));
    await waitFor(
      async () =>
        (await readObject<Gadget>(h.client, gadgetType, h.ns, 'missing')) === undefined ? true : undefined,
      { timeoutMs: 10_000, description: 'the object gone' },
    );
    await h.apply('missing', { size: 1 });
    await h.reconcile('missing');
    await h.reconcile('missing');
    expect(await h.condition('missing', 'Ready')).toMatchObject({ status: 'True' });
    expect(h.cloud.calls.create).toBe(1);
  });
});

// What an observation asks to write (a companion such as a connection Secret) and the kind's status
// fields come from the AWS resource: they are made only once it is this object's to report on.
describe('engine writes derived from a resource only once ownership is established', () => {
  /** The ownership tags of an existing object, team-a-db, that owns the gadget others name. */
  async function otherOwnerTags(h: Harness): Promise<Record<string, string>> {
    await h.apply('team-a-db', { size: 3 });
    const owner = await h.read('team-a-db');
    return ownershipTagMap({
      cluster: 'test-cluster',
      owner: `${h.ns}/team-a-db`,
      uid: owner.metadata.uid ?? '',
    });
  }

  async function companion(h: Harness, name: string): Promise<Record<string, string> | undefined> {
    const g = await h.read(name);
    const s = await readObject<KubeObject & { data?: Record<string, string> }>(
      h.client,
      secretType,
      h.ns,
      gadgetCompanionName(g),
    );
    if (s === undefined) return undefined;
    return Object.fromEntries(
      Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
    );
  }

  it('writes neither the companion nor status from a resource another object owns (Conflict)', async () => {
    const h = await harness();
    h.cloud.companion = true;
    h.cloud.put({ id: 'team-a-db', size: 3, tags: await otherOwnerTags(h) });
    await h.apply('intruder', { size: 3, externalName: 'team-a-db' });
    await h.reconcile('intruder');
    const synced = await h.condition('intruder', 'Synced');
    expect(synced).toMatchObject({ status: 'False', reason: 'Conflict' });
    expect(synced?.message).toContain(`owned by ${h.ns}/team-a-db`);
    expect(await h.condition('intruder', 'Ready')).toMatchObject({ status: 'False', reason: 'Conflict' });
    expect(await companion(h, 'intruder')).toBeUndefined();
    const status = (await h.read('intruder')).status ?? {};
    expect(status.id).toBeUndefined();
    expect(status.size).toBeUndefined();
    expect(h.cloud.calls).toMatchObject({ create: 0, update: 0, delete: 0 });
  });

  it('ObserveOnly of a resource another object owns is a Conflict and publishes nothing of it', async () => {
    const h = await harness();
    h.cloud.companion = true;
    h.cloud.put({ id: 'team-a-db', size: 3, tags: await otherOwnerTags(h) });
    await h.apply('peeker', { size: 3, managementPolicy: 'ObserveOnly', externalName: 'team-a-db' });
    await h.reconcile('peeker');
    const synced = await h.condition('peeker', 'Synced');
    expect(synced).toMatchObject({ status: 'False', reason: 'Conflict' });
    expect(synced?.message).toContain(`owned by ${h.ns}/team-a-db`);
    expect(await h.condition('peeker', 'Ready')).toMatchObject({ status: 'False', reason: 'Conflict' });
    expect(await companion(h, 'peeker')).toBeUndefined();
    expect((await h.read('peeker')).status?.size).toBeUndefined();
    expect((await h.read('peeker')).metadata.finalizers ?? []).not.toContain(finalizerName);
  });

  it('writes the companion and status for its own resource, an adopted one, and ObserveOnly of an unowned one', async () => {
    const h = await harness();
    h.cloud.companion = true;
    await h.apply('own', { size: 1 });
    await h.reconcile('own');
    await h.reconcile('own');
    expect(await companion(h, 'own')).toMatchObject({ size: '1' });
    expect((await h.read('own')).status?.size).toBe(1);

    h.cloud.put({ id: 'unowned-1', size: 2, tags: {} });
    await h.apply('adopter', { size: 2, externalName: 'unowned-1' });
    await h.reconcile('adopter');
    expect(await companion(h, 'adopter')).toEqual({ id: 'unowned-1', size: '2' });
    expect(await h.condition('adopter', 'Synced')).toMatchObject({ status: 'True' });

    h.cloud.put({ id: 'unowned-2', size: 5, tags: {} });
    await h.apply('watcher', { size: 5, managementPolicy: 'ObserveOnly', externalName: 'unowned-2' });
    await h.reconcile('watcher');
    expect(await companion(h, 'watcher')).toEqual({ id: 'unowned-2', size: '5' });
    expect((await h.read('watcher')).status?.size).toBe(5);
  });
});

describe('engine deletion of an adopted resource', () => {
  it('releases the object without deleting a resource whose adoption never completed', async () => {
    const h = await harness();
    h.cloud.put({ id: 'hand-made-1', size: 1, tags: { team: 'ops' } });
    h.cloud.failNext('update', new TerminalError('size cannot change on this gadget'));
    await h.apply('half-adopted', { size: 2, externalName: 'hand-made-1' });
    await h.reconcile('half-adopted');
    expect(await h.condition('half-adopted', 'Synced')).toMatchObject({
      status: 'False',
      reason: 'Terminal',
    });
    // The finalizer went on before the adoption was tried; the resource was never tagged.
    expect((await h.read('half-adopted')).metadata.finalizers).toContain(finalizerName);
    expect(h.cloud.get('hand-made-1')?.tags).toEqual({ team: 'ops' });

    await h.client.delete(resourcePath(gadgetType, { namespace: h.ns, name: 'half-adopted' }));
    await h.reconcile('half-adopted');
    expect(await readObject(h.client, gadgetType, h.ns, 'half-adopted')).toBeUndefined();
    expect(h.cloud.get('hand-made-1')).toEqual({ id: 'hand-made-1', size: 1, tags: { team: 'ops' } });
    expect(h.cloud.calls.delete).toBe(0);
  });

  it('deletes an adopted resource (tagged with this object) per deletionPolicy Delete', async () => {
    const h = await harness();
    h.cloud.put({ id: 'hand-made-2', size: 1, tags: {} });
    await h.apply('adopted', { size: 2, externalName: 'hand-made-2' });
    await h.reconcile('adopted');
    const uid = (await h.read('adopted')).metadata.uid;
    expect(h.cloud.get('hand-made-2')?.tags['skylift.dev/uid']).toBe(uid);

    await h.client.delete(resourcePath(gadgetType, { namespace: h.ns, name: 'adopted' }));
    await h.reconcile('adopted');
    expect(h.cloud.get('hand-made-2')).toBeUndefined();
    expect(h.cloud.calls.delete).toBe(1);
    expect(await readObject(h.client, gadgetType, h.ns, 'adopted')).toBeUndefined();
  });
});
