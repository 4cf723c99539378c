// The whole control loop on the real apiserver: informers → queue → workers →
// engine; namespace and label scoping; secondary watches; the metrics and
// probe server; watch recovery after the apiserver restarts; and leader
// handover between two managers.
import { pino } from 'pino';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane } from '../../dev/controlplane.ts';
import { simpleRequest } from '../../dev/http.ts';
import { waitFor } from '../../dev/wait.ts';
import { realClock } from '../../src/runtime/clock.ts';
import { ConditionType } from '../../src/runtime/conditions.ts';
import { KubeClient } from '../../src/runtime/kube/client.ts';
import { loadKubeconfig } from '../../src/runtime/kube/kubeconfigLoad.ts';
import { resourcePath, type KubeObject } from '../../src/apis/meta.ts';
import { Manager } from '../../src/runtime/manager.ts';
import { Metrics } from '../../src/runtime/metrics.ts';
import { FakeCloud, gadgetCrd, gadgetType, type Gadget } from '../support/gadget.ts';
import { counterValue, gadgetController } from '../support/gadgetController.ts';
import { ensureCrd, kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { scratchDir } from '../support/scratch.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

let admin: KubeClient;
beforeAll(async () => {
  admin = kubeClient();
  await ensureCrd(admin, gadgetCrd, gadgetType);
});

function createGadget(
  client: KubeClient,
  ns: string,
  name: string,
  size: number,
  labels?: Record<string, string>,
): Promise<Gadget> {
  return client.create<Gadget>(resourcePath(gadgetType, { namespace: ns }), {
    apiVersion: 'test.skylift.dev/v1',
    kind: 'Gadget',
    metadata: { name, ...(labels !== undefined ? { labels } : {}) },
    spec: { size },
  });
}

async function waitReady(client: KubeClient, ns: string, name: string, timeoutMs = 30_000): Promise<Gadget> {
  return waitFor(
    async () => {
      const g = await readObject<Gadget>(client, gadgetType, ns, name);
      return g?.status?.conditions?.some((c) => c.type === ConditionType.Ready && c.status === 'True') ===
        true
        ? g
        : undefined;
    },
    { timeoutMs, description: `${ns}/${name} Ready` },
  );
}

async function waitGone(client: KubeClient, ns: string, name: string): Promise<void> {
  await waitFor(
    async () => ((await readObject(client, gadgetType, ns, name)) === undefined ? true : undefined),
    {
      timeoutMs: 30_000,
      description: `${ns}/${name} deleted`,
    },
  );
}

function startManager(
  client: KubeClient,
  opts: {
    cloud: FakeCloud;
    metrics?: Metrics;
    identity: string;
    lease?: { namespace: string; name: string };
    namespaces?: string[];
    labelSelector?: string;
    watchdogMs?: number;
  },
) {
  const metrics = opts.metrics ?? new Metrics();
  const { controller } = gadgetController({
    client,
    cloud: opts.cloud,
    metrics,
    ...(opts.namespaces !== undefined ? { namespaces: opts.namespaces } : {}),
    ...(opts.labelSelector !== undefined ? { labelSelector: opts.labelSelector } : {}),
    ...(opts.watchdogMs !== undefined ? { watchdogMs: opts.watchdogMs } : {}),
  });
  const manager = new Manager({
    client,
    clock: realClock,
    logger: pino({ level: 'silent' }),
    metrics,
    identity: opts.identity,
    probeAddress: '127.0.0.1:0',
    shutdownDeadlineMs: 5000,
    leaderElection:
      opts.lease !== undefined
        ? { ...opts.lease, timing: { leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 500 } }
        : undefined,
  });
  manager.add(controller);
  const done = manager.run();
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    manager.stop();
    await done;
  };
  cleanups.push(stop);
  return { manager, metrics, done, stop };
}

describe('controller loop', () => {
  it('converges created, updated and deleted objects, and serves metrics and probes', async () => {
    const ns = await newNamespace(admin, 'loop');
    const cloud = new FakeCloud();
    const m = startManager(kubeClient(), { cloud, identity: 'solo', namespaces: [ns] });
    await Promise.all([1, 2, 3].map((i) => createGadget(admin, ns, `g${i}`, i)));
    for (const i of [1, 2, 3]) await waitReady(admin, ns, `g${i}`);
    expect(
      cloud
        .all()
        .map((g) => g.size)
        .sort(),
    ).toEqual([1, 2, 3]);

    await admin.patch(
      resourcePath(gadgetType, { namespace: ns, name: 'g2' }),
      { spec: { size: 20 } },
      'merge',
    );
    await waitFor(() => (cloud.all().some((g) => g.size === 20) ? true : undefined), {
      timeoutMs: 30_000,
      description: 'size 20 in the cloud',
    });

    await admin.delete(resourcePath(gadgetType, { namespace: ns, name: 'g1' }));
    await waitGone(admin, ns, 'g1');
    expect(cloud.all()).toHaveLength(2);
    expect(cloud.calls.create).toBe(3);

    const address = await waitFor(() => m.manager.probeAddress, {
      timeoutMs: 5000,
      description: 'probe server',
    });
    const metricsText = (await simpleRequest(`http://${address}/metrics`)).body;
    expect(metricsText).toMatch(
      /controller_runtime_reconcile_total\{controller="gadget",result="(success|requeue_after)"\} \d+/,
    );
    expect(metricsText).toContain('workqueue_adds_total{name="gadget"}');
    expect(metricsText).toContain('skylift_managed_resources{kind="Gadget",ready="True"} 2');
    expect((await simpleRequest(`http://${address}/readyz`)).status).toBe(200);
    expect((await simpleRequest(`http://${address}/healthz`)).status).toBe(200);
  });

  it('watches only its namespaces and label selector, and follows secondary objects', async () => {
    const mine = await newNamespace(admin, 'mine');
    const other = await newNamespace(admin, 'other');
    const cloud = new FakeCloud();
    const metrics = new Metrics();
    const configMaps = {
      group: '',
      version: 'v1',
      plural: 'configmaps',
      kind: 'ConfigMap',
      namespaced: true,
    };
    const { controller } = gadgetController({
      client: kubeClient(),
      cloud,
      metrics,
      namespaces: [mine],
      labelSelector: 'shard=a',
      watches: [
        {
          type: configMaps,
          map: (cm: KubeObject) => {
            const g = cm.metadata.labels?.gadget;
            return g !== undefined && cm.metadata.namespace !== undefined
              ? [`${cm.metadata.namespace}/${g}`]
              : [];
          },
        },
      ],
    });
    // Until a secondary informer has listed, a missing object may exist: adapters ask before judging.
    expect(controller.secondarySynced(configMaps)).toBe(false);
    await controller.start();
    cleanups.push(() => controller.stop(5000));
    await waitFor(() => (controller.secondarySynced(configMaps) ? true : undefined), {
      timeoutMs: 15_000,
      description: 'the ConfigMap informer to list',
    });
    expect(controller.secondarySynced({ ...configMaps, plural: 'secrets', kind: 'Secret' })).toBe(false);

    await createGadget(admin, mine, 'in-scope', 1, { shard: 'a' });
    await createGadget(admin, mine, 'other-shard', 1, { shard: 'b' });
    await createGadget(admin, other, 'other-ns', 1, { shard: 'a' });
    await waitReady(admin, mine, 'in-scope');
    // The out-of-scope objects were created before the in-scope one became Ready; had they been seen, they would be in the cloud.
    expect(cloud.all().map((g) => g.tags['skylift.dev/owner'])).toEqual([`${mine}/in-scope`]);

    const before = cloud.calls.observe;
    await admin.create(`/api/v1/namespaces/${mine}/configmaps`, {
      metadata: { name: 'cfg', labels: { gadget: 'in-scope' } },
    });
    await waitFor(() => (cloud.calls.observe > before ? true : undefined), {
      timeoutMs: 15_000,
      description: 'a reconcile triggered by the ConfigMap',
    });
    expect(await counterValue(metrics.reconcileTotal, { controller: 'gadget' })).toBeGreaterThanOrEqual(2);
  });
});

// Issue 27, item 16: a Ready=True written by someone else with status rights stayed until the next
// resync (the status change was not worth a reconcile).
describe('a status written by someone else', () => {
  it('is put right at once, not at the next resync', async () => {
    const ns = await newNamespace(admin, 'forged');
    const cloud = new FakeCloud();
    cloud.notReady = {
      ready: false,
      reason: 'WaitingForSomeone',
      message: 'a person must act',
      actionRequired: true,
    };
    const { metrics } = startManager(admin, { cloud, identity: 'forged', namespaces: [ns] });
    await createGadget(admin, ns, 'g', 1);
    const notReady = await waitFor(
      async () => {
        const g = await readObject<Gadget>(admin, gadgetType, ns, 'g');
        return g?.status?.conditions?.find((c) => c.type === ConditionType.Ready)?.reason ===
          'WaitingForSomeone'
          ? g
          : undefined;
      },
      { timeoutMs: 30_000, description: 'g Ready=False WaitingForSomeone' },
    );
    const reconciles = async (): Promise<number> =>
      (await counterValue(metrics.reconcileTotal, { controller: 'gadget', result: 'success' })) +
      (await counterValue(metrics.reconcileTotal, { controller: 'gadget', result: 'requeue_after' }));
    const passes = await reconciles();
    const forged = (notReady.status?.conditions ?? []).map((c) =>
      c.type === ConditionType.Ready ? { ...c, status: 'True', reason: 'Available', message: '' } : c,
    );
    await admin.patch(
      resourcePath(gadgetType, { namespace: ns, name: 'g', subresource: 'status' }),
      { status: { conditions: forged } },
      'merge',
    );
    // The resync period is a minute: only a reconcile caused by the forged status puts it right.
    await waitFor(
      async () => {
        const g = await readObject<Gadget>(admin, gadgetType, ns, 'g');
        return g?.status?.conditions?.find((c) => c.type === ConditionType.Ready)?.status === 'False'
          ? true
          : undefined;
      },
      { timeoutMs: 15_000, description: 'the forged Ready=True put right' },
    );
    // A pass for the forged status put it right (the resync is a minute away).
    expect(await reconciles()).toBeGreaterThan(passes);
  });
});

describe('watch recovery', () => {
  it('keeps reconciling after kube-apiserver, then etcd, is stopped and started again, and restarts stalled watches', async () => {
    const dir = await scratchDir('restart');
    const cp = await startControlPlane({ dir });
    cleanups.push(() => cp.stop());
    const client = new KubeClient(loadKubeconfig(cp.kubeconfigPath('admin')));
    await ensureCrd(client, gadgetCrd, gadgetType);
    const ns = await newNamespace(client, 'restart');
    const cloud = new FakeCloud();
    const metrics = new Metrics();
    const { controller } = gadgetController({ client, cloud, metrics, watchdogMs: 1500 });
    await controller.start();
    cleanups.push(() => controller.stop(5000));

    await createGadget(client, ns, 'before', 1);
    await waitReady(client, ns, 'before');

    await cp.restartApiServer();
    await createGadget(client, ns, 'after', 2);
    await waitReady(client, ns, 'after', 60_000);
    expect(cloud.all()).toHaveLength(2);
    expect(await counterValue(metrics.watchRestarts, { resource: 'gadgets' })).toBeGreaterThan(0);

    // etcd goes away under a running kube-apiserver and comes back with its data.
    await cp.restartEtcd();
    await createGadget(client, ns, 'after-etcd', 3);
    await waitReady(client, ns, 'after-etcd', 60_000);
    await waitReady(client, ns, 'before');
    expect(cloud.all()).toHaveLength(3);

    // With nothing happening, a 1.5 s watchdog sees a silent watch and restarts it.
    await waitFor(
      async () =>
        (await counterValue(metrics.watchRestarts, { resource: 'gadgets', reason: 'stalled' })) > 0
          ? true
          : undefined,
      {
        timeoutMs: 20_000,
        description: 'a stalled-watch restart',
      },
    );
    await client.patch(
      resourcePath(gadgetType, { namespace: ns, name: 'after' }),
      { spec: { size: 5 } },
      'merge',
    );
    await waitFor(() => (cloud.all().some((g) => g.size === 5) ? true : undefined), {
      timeoutMs: 30_000,
      description: 'update after watch restarts',
    });
  });
});

describe('leader election', () => {
  it('lets one of two managers reconcile and hands over when the leader shuts down', async () => {
    const ns = await newNamespace(admin, 'leader');
    const cloud = new FakeCloud();
    const lease = { namespace: ns, name: 'skylift-test-leader' };
    const a = startManager(kubeClient(), { cloud, identity: 'replica-a', lease, namespaces: [ns] });
    const holder = async (): Promise<string | undefined> => {
      const l = await admin
        .get<{ spec?: { holderIdentity?: string | null } }>(
          `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${lease.name}`,
        )
        .catch(() => undefined);
      return l?.spec?.holderIdentity ?? undefined;
    };
    await waitFor(async () => ((await holder()) === 'replica-a' ? true : undefined), {
      timeoutMs: 15_000,
      description: 'replica-a leading',
    });
    const b = startManager(kubeClient(), { cloud, identity: 'replica-b', lease, namespaces: [ns] });

    await createGadget(admin, ns, 'one', 1);
    await waitReady(admin, ns, 'one');
    expect(await counterValue(a.metrics.reconcileTotal, { controller: 'gadget' })).toBeGreaterThan(0);
    expect(await counterValue(b.metrics.reconcileTotal, { controller: 'gadget' })).toBe(0);
    // The standby reports 0, not nothing: with no sample from any replica, the "no leader" alert
    // (sum(leader_election_master_status) < 1) would have nothing to fire on.
    expect((await b.metrics.leaderStatus.get()).values).toEqual([
      expect.objectContaining({ labels: { name: lease.name }, value: 0 }),
    ]);

    await a.stop();
    expect(await holder()).not.toBe('replica-a');
    await waitFor(async () => ((await holder()) === 'replica-b' ? true : undefined), {
      timeoutMs: 15_000,
      description: 'replica-b leading',
    });
    await createGadget(admin, ns, 'two', 2);
    await waitReady(admin, ns, 'two');
    expect(await counterValue(b.metrics.reconcileTotal, { controller: 'gadget' })).toBeGreaterThan(0);
    expect(await counterValue(b.metrics.leaderStatus, { name: lease.name })).toBe(1);
    expect(cloud.all()).toHaveLength(2);
    expect(cloud.calls.create).toBe(2);
  });
});
