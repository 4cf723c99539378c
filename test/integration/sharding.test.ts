// Two operator replicas sharded by label selector (issue 16, scale-out): the selectors
// `skylift.dev/shard!=b` and `skylift.dev/shard=b` split the objects with no overlap and no gap —
// an object without the label belongs to the first — and an object relabelled to the other shard
// moves without a second create or a leak.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../dev/wait.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import type { Observation, ReconcileContext } from '../../src/runtime/adapter.ts';
import { ConditionType } from '../../src/runtime/conditions.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { FakeCloud, GadgetAdapter, gadgetCrd, gadgetType, type Gadget } from '../support/gadget.ts';
import { gadgetController } from '../support/gadgetController.ts';
import { ensureCrd, kubeClient, newNamespace, readObject } from '../support/kube.ts';

/** A Gadget adapter that remembers which objects it observed. */
class RecordingAdapter extends GadgetAdapter {
  readonly seen = new Set<string>();
  override observe(mr: Gadget, ctx: ReconcileContext): Promise<Observation> {
    this.seen.add(mr.metadata.name);
    return super.observe(mr, ctx);
  }
}

let admin: KubeClient;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  admin = kubeClient();
  await ensureCrd(admin, gadgetCrd, gadgetType);
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function ready(g: Gadget | undefined): boolean {
  return g?.status?.conditions?.some((c) => c.type === ConditionType.Ready && c.status === 'True') === true;
}

describe('sharding by label selector', () => {
  it('splits the objects between two replicas with no overlap and no gap, and moves a relabelled one', async () => {
    const ns = await newNamespace(admin, 'shards');
    const cloud = new FakeCloud();
    const shards = [
      { selector: 'skylift.dev/shard!=b', adapter: new RecordingAdapter(cloud) },
      { selector: 'skylift.dev/shard=b', adapter: new RecordingAdapter(cloud) },
    ];
    for (const s of shards) {
      const { controller } = gadgetController({
        client: kubeClient(),
        cloud,
        adapter: s.adapter,
        namespaces: [ns],
        labelSelector: s.selector,
      });
      await controller.start();
      cleanups.push(() => controller.stop(5000));
    }
    const labels = (i: number): Record<string, string> | undefined =>
      i % 3 === 0 ? { 'skylift.dev/shard': 'a' } : i % 3 === 1 ? { 'skylift.dev/shard': 'b' } : undefined;
    const names = Array.from({ length: 12 }, (_, i) => `g-${i}`);
    await Promise.all(
      names.map((name, i) => {
        const l = labels(i);
        return admin.create(resourcePath(gadgetType, { namespace: ns }), {
          apiVersion: 'test.skylift.dev/v1',
          kind: 'Gadget',
          metadata: { name, ...(l !== undefined ? { labels: l } : {}) },
          spec: { size: 1 },
        });
      }),
    );
    const allReady = (): Promise<true> =>
      waitFor(
        async () => {
          const states = await Promise.all(names.map((n) => readObject<Gadget>(admin, gadgetType, ns, n)));
          return states.every(ready) ? true : undefined;
        },
        { timeoutMs: 30_000, description: 'every Gadget Ready' },
      );
    await allReady();

    const [first, second] = shards.map((s) => s.adapter.seen);
    const onB = names.filter((_, i) => i % 3 === 1);
    expect([...(second ?? [])].sort()).toEqual([...onB].sort());
    expect([...(first ?? [])].sort()).toEqual(names.filter((n) => !onB.includes(n)).sort());
    expect(cloud.all()).toHaveLength(names.length);
    expect(new Set(cloud.all().map((g) => g.tags['skylift.dev/owner'])).size).toBe(names.length);
    expect(cloud.calls.create).toBe(names.length);

    // g-0 (shard a) moves to shard b: the second replica takes it over, finds its resource, and
    // creates nothing.
    await admin.patch(
      resourcePath(gadgetType, { namespace: ns, name: 'g-0' }),
      { metadata: { labels: { 'skylift.dev/shard': 'b' } } },
      'merge',
    );
    await waitFor(() => (second?.has('g-0') === true ? true : undefined), {
      timeoutMs: 30_000,
      description: 'the second shard to take g-0 over',
    });
    expect(ready(await readObject<Gadget>(admin, gadgetType, ns, 'g-0'))).toBe(true);
    expect(cloud.calls.create).toBe(names.length);

    // Each shard deletes what it holds; nothing is left.
    await Promise.all(names.map((n) => admin.delete(resourcePath(gadgetType, { namespace: ns, name: n }))));
    await waitFor(
      async () => {
        const left = await Promise.all(names.map((n) => readObject<Gadget>(admin, gadgetType, ns, n)));
        return left.every((g) => g === undefined) ? true : undefined;
      },
      { timeoutMs: 30_000, description: 'every Gadget gone' },
    );
    expect(cloud.all()).toEqual([]);
  });
});
