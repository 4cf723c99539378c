// The engine makes the Kubernetes writes an adapter asks for, against the
// real apiserver (with kube-controller-manager's garbage collector), driven
// one reconcile at a time: a companion ConfigMap applied from observe,
// labelled and owned by its Gadget; an annotation from update; Events from
// observe and from a failed reconcile; and the companion disowned on release
// (deletionPolicy Orphan), so it outlives its Gadget.
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { finalizerName, type Condition } from '../../src/apis/managed.ts';
import { resourcePath, type KubeObject, type ResourceType } from '../../src/apis/meta.ts';
import { waitFor } from '../../dev/wait.ts';
import {
  sharedClient,
  type ExistingObservation,
  type Observation,
  type Released,
  type ReconcileContext,
  type Updated,
  type Writes,
} from '../../src/runtime/adapter.ts';
import { realClock } from '../../src/runtime/clock.ts';
import { Engine, type ReconcileOutcome } from '../../src/runtime/engine.ts';
import { RetryableError } from '../../src/runtime/errors.ts';
import { EventRecorder } from '../../src/runtime/events.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { Metrics } from '../../src/runtime/metrics.ts';
import {
  FakeCloud,
  GadgetAdapter,
  gadgetCrd,
  gadgetType,
  type Gadget,
  type GadgetSpec,
} from '../support/gadget.ts';
import { ensureCrd, eventsFor, kubeClient, newNamespace, readObject } from '../support/kube.ts';

const configMapType: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'configmaps',
  kind: 'ConfigMap',
  namespaced: true,
};

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

/** The annotation update asks the engine to set on the Gadget. */
const resizedAnnotation = 'test.skylift.dev/resized-to';

/** The companion ConfigMap of a Gadget. */
const infoName = (gadget: string): string => `${gadget}-info`;

/**
 * The Gadget adapter, asking for Kubernetes writes: observe applies the
 * companion ConfigMap and records an Event, update sets an annotation,
 * release disowns the ConfigMap.
 */
class WritingGadgetAdapter extends GadgetAdapter {
  override async observe(mr: Gadget, ctx: ReconcileContext): Promise<Observation> {
    const o = await super.observe(mr, ctx);
    if (!o.exists) return o;
    const id = String(o.status.id);
    const size = String(o.status.size);
    const writes: Writes = {
      companions: [
        {
          op: 'apply',
          type: configMapType,
          object: {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: infoName(mr.metadata.name) },
            data: { id, size },
          },
        },
      ],
      events: [
        { type: 'Normal', reason: 'Observed', action: 'Observe', note: `observed ${id} of size ${size}` },
      ],
    };
    return { ...o, writes };
  }

  override async update(mr: Gadget, observed: ExistingObservation, ctx: ReconcileContext): Promise<Updated> {
    const u = await super.update(mr, observed, ctx);
    return { ...u, writes: { annotations: { [resizedAnnotation]: String(mr.spec.size) } } };
  }

  release(mr: Gadget): Promise<Released> {
    return Promise.resolve({
      writes: { companions: [{ op: 'disown', type: configMapType, name: infoName(mr.metadata.name) }] },
    });
  }
}

interface Harness {
  cloud: FakeCloud;
  client: KubeClient;
  ns: string;
  apply(name: string, spec: GadgetSpec): Promise<Gadget>;
  read(name: string): Promise<Gadget>;
  reconcile(name: string): Promise<ReconcileOutcome>;
  condition(name: string, type: string): Promise<Condition | undefined>;
  configMap(name: string): Promise<ConfigMap | undefined>;
  /** The notes of the Events with `reason` about `name`, once there is one. */
  events(name: string, reason: string): Promise<{ type: string; note: string }[]>;
}

let admin: KubeClient;

beforeAll(async () => {
  admin = kubeClient();
  await ensureCrd(admin, gadgetCrd, gadgetType);
});

async function harness(): Promise<Harness> {
  const client = kubeClient();
  const cloud = new FakeCloud();
  const logger = pino({ level: 'silent' });
  const engine = new Engine<Gadget>({
    type: gadgetType,
    connector: sharedClient(new WritingGadgetAdapter(cloud)),
    client,
    clock: realClock,
    logger,
    metrics: new Metrics(),
    events: new EventRecorder({
      client,
      clock: realClock,
      logger,
      controller: 'skylift.dev/test',
      instance: 'test',
    }),
    clusterId: 'test-cluster',
    resyncPeriodMs: 60_000,
    pollMs: 1000,
  });
  const ns = await newNamespace(admin, 'engine-writes');
  const read = async (name: string): Promise<Gadget> => {
    const obj = await readObject<Gadget>(client, gadgetType, ns, name);
    if (obj === undefined) throw new Error(`${name} not found`);
    return obj;
  };
  return {
    cloud,
    client,
    ns,
    apply: (name, spec) =>
      client.create<Gadget>(resourcePath(gadgetType, { namespace: ns }), {
        apiVersion: 'test.skylift.dev/v1',
        kind: 'Gadget',
        metadata: { name },
        spec,
      }),
    read,
    reconcile: async (name) => engine.reconcile(await read(name)),
    condition: async (name, type) => (await read(name)).status?.conditions?.find((c) => c.type === type),
    configMap: (name) => readObject<ConfigMap>(client, configMapType, ns, name),
    events: (name, reason) =>
      waitFor(
        async () => {
          const found = (await eventsFor(client, ns, name)).filter((e) => e.reason === reason);
          return found.length > 0 ? found.map((e) => ({ type: e.type, note: e.note })) : undefined;
        },
        { timeoutMs: 10_000, description: `a ${reason} Event about ${name}` },
      ),
  };
}

/** The owner references of `cm` that point at `uid`. */
function refsTo(cm: ConfigMap | undefined, uid: string | undefined): unknown[] {
  return (cm?.metadata.ownerReferences ?? []).filter((r) => r.uid === uid);
}

describe('engine writes', () => {
  it('applies companions and records Events from observe, and sets annotations from update', async () => {
    const h = await harness();
    await h.apply('g1', { size: 1 });
    await h.reconcile('g1');
    expect(await h.configMap(infoName('g1'))).toBeUndefined();

    await h.reconcile('g1');
    const gadget = await h.read('g1');
    const id = String(gadget.status?.id);
    const cm = await h.configMap(infoName('g1'));
    expect(cm?.data).toEqual({ id, size: '1' });
    expect(cm?.metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'skylift' });
    expect(cm?.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'test.skylift.dev/v1',
        kind: 'Gadget',
        name: 'g1',
        uid: gadget.metadata.uid,
        controller: true,
      },
    ]);
    expect(await h.events('g1', 'Observed')).toEqual([{ type: 'Normal', note: `observed ${id} of size 1` }]);

    await h.client.patch(
      resourcePath(gadgetType, { namespace: h.ns, name: 'g1' }),
      { spec: { size: 3 } },
      'merge',
    );
    expect((await h.read('g1')).metadata.annotations?.[resizedAnnotation]).toBeUndefined();
    await h.reconcile('g1');
    expect(h.cloud.all().map((g) => g.size)).toEqual([3]);
    expect((await h.read('g1')).metadata.annotations?.[resizedAnnotation]).toBe('3');

    // The next observe applies the companion again, with what it now sees.
    await h.reconcile('g1');
    expect((await h.configMap(infoName('g1')))?.data).toEqual({ id, size: '3' });

    // Owned by the Gadget: with deletionPolicy Delete the garbage collector removes it with the Gadget.
    await h.client.delete(resourcePath(gadgetType, { namespace: h.ns, name: 'g1' }));
    await h.reconcile('g1');
    expect(await readObject(h.client, gadgetType, h.ns, 'g1')).toBeUndefined();
    await waitFor(async () => ((await h.configMap(infoName('g1'))) === undefined ? true : undefined), {
      // The garbage collector picks up a new CRD's objects on its next discovery (every 30 s).
      timeoutMs: 120_000,
      description: 'the garbage collector to delete the companion of a deleted Gadget',
    });
  });

  it('disowns the companion on release, so it outlives a Gadget deleted with deletionPolicy Orphan', async () => {
    const h = await harness();
    await h.apply('keep', { size: 1, deletionPolicy: 'Orphan' });
    await h.reconcile('keep');
    await h.reconcile('keep');
    const gadget = await h.read('keep');
    const uid = gadget.metadata.uid;
    expect(gadget.metadata.finalizers).toContain(finalizerName);
    expect(refsTo(await h.configMap(infoName('keep')), uid)).toHaveLength(1);

    // A ConfigMap the Gadget still owns: once the garbage collector has removed it, it has
    // dealt with the Gadget's dependents, and would have removed the companion had it been owned.
    await h.client.create(resourcePath(configMapType, { namespace: h.ns }), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'sentinel',
        ownerReferences: [
          { apiVersion: 'test.skylift.dev/v1', kind: 'Gadget', name: 'keep', uid, controller: true },
        ],
      },
    });

    await h.client.delete(resourcePath(gadgetType, { namespace: h.ns, name: 'keep' }));
    expect(await h.reconcile('keep')).toEqual({ kind: 'done' });
    expect(await readObject(h.client, gadgetType, h.ns, 'keep')).toBeUndefined();
    expect(h.cloud.all()).toHaveLength(1);
    expect(await h.events('keep', 'Orphaned')).toHaveLength(1);

    await waitFor(async () => ((await h.configMap('sentinel')) === undefined ? true : undefined), {
      timeoutMs: 120_000,
      description: 'the garbage collector to delete a dependent of the deleted Gadget',
    });
    const cm = await h.configMap(infoName('keep'));
    expect(cm).toBeDefined();
    expect(refsTo(cm, uid)).toEqual([]);
    expect(cm?.metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'skylift' });
  });

  it('makes the writes a RetryableError carries and reports its reason', async () => {
    const h = await harness();
    await h.apply('flaky', { size: 1 });
    await h.reconcile('flaky');
    await h.reconcile('flaky');
    expect(await h.condition('flaky', 'Synced')).toMatchObject({ status: 'True' });

    h.cloud.failNext(
      'observe',
      new RetryableError('CloudHiccup', 'the cloud hiccupped', {
        writes: {
          events: [
            { type: 'Warning', reason: 'CloudHiccup', action: 'Observe', note: 'the cloud hiccupped' },
          ],
        },
      }),
    );
    expect(await h.reconcile('flaky')).toEqual({ kind: 'backoff' });
    expect(await h.condition('flaky', 'Synced')).toMatchObject({
      status: 'False',
      reason: 'CloudHiccup',
      message: 'observe: the cloud hiccupped',
    });
    expect(await h.events('flaky', 'CloudHiccup')).toEqual([
      { type: 'Warning', note: 'the cloud hiccupped' },
    ]);

    // Thrown once: the next reconcile succeeds.
    expect((await h.reconcile('flaky')).kind).toBe('done');
    expect(await h.condition('flaky', 'Synced')).toMatchObject({ status: 'True' });
    expect(h.cloud.calls.observe).toBe(4);
  });
});
