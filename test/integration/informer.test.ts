// The informer on its own, against the real apiserver: a cache without
// managedFields, DELETED events, and recovery from 410 Gone by relisting.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { startControlPlane } from '../../dev/controlplane.ts';
import { KubeClient } from '../../src/runtime/kube/client.ts';
import { loadKubeconfig } from '../../src/runtime/kube/kubeconfigLoad.ts';
import { waitFor } from '../../dev/wait.ts';
import { realClock } from '../../src/runtime/clock.ts';
import { Informer, type WatchEventType } from '../../src/runtime/kube/informer.ts';
import type { KubeObject } from '../../src/apis/meta.ts';
import { newNamespace } from '../support/kube.ts';
import { scratchDir } from '../support/scratch.ts';

const configMaps = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };

describe('Informer', () => {
  it('caches without managedFields, reports deletes, and relists after 410 Gone', async () => {
    // Its own control plane, compacting etcd every second and watching etcd directly (no watch cache),
    // so an old resourceVersion really is gone and the apiserver answers 410.
    const cp = await startControlPlane({
      dir: await scratchDir('informer'),
      extraApiServerArgs: ['--etcd-compaction-interval=1s', '--watch-cache=false'],
    });
    const client = new KubeClient(loadKubeconfig(cp.kubeconfigPath('admin')));
    const ns = await newNamespace(client, 'informer');
    await client.create(`/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name: 'early' },
      data: { a: '1' },
    });
    const restarts: string[] = [];
    const seen: [WatchEventType, string][] = [];
    const inf = new Informer<KubeObject>({
      client,
      type: configMaps,
      clock: realClock,
      logger: pino({ level: 'silent' }),
      namespace: ns,
      watchdogMs: 1000,
      onRestart: (r) => restarts.push(r),
    });
    inf.on((type, obj) => seen.push([type, obj.metadata.name]));
    inf.start();
    try {
      await inf.waitForSync();
      const early = inf.get(`${ns}/early`);
      expect(early?.metadata.uid).toBeDefined();
      expect(early?.metadata.managedFields).toBeUndefined();
      expect(early?.kind).toBe('ConfigMap');

      await client.delete(`/api/v1/namespaces/${ns}/configmaps/early`);
      await waitFor(() => (seen.some(([t, n]) => t === 'DELETED' && n === 'early') ? true : undefined), {
        timeoutMs: 10_000,
        description: 'DELETED event',
      });
      expect(inf.get(`${ns}/early`)).toBeUndefined();

      // Pretend the watch fell far behind: the apiserver answers 410 Gone and the informer must relist.
      (inf as unknown as { resourceVersion: string }).resourceVersion = '1';
      await waitFor(() => (restarts.includes('gone') ? true : undefined), {
        timeoutMs: 15_000,
        description: 'a 410 Gone restart',
      });
      await client.create(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'late' } });
      await waitFor(() => inf.get(`${ns}/late`), {
        timeoutMs: 10_000,
        description: 'late in the cache after the relist',
      });
    } finally {
      await inf.stop();
      await cp.stop();
    }
  });
});

describe('startControlPlane', () => {
  it('reports a kube-controller-manager that exits at start, with its log, and leaves nothing running', async () => {
    const dir = await scratchDir('bad-kcm');
    const started = startControlPlane({
      dir,
      controllerManager: true,
      extraControllerManagerArgs: ['--controllers=no-such-controller'],
    });
    await expect(started).rejects.toThrow(/kube-controller-manager did not start working[\s\S]*exited/);
    await expect(started).rejects.toThrow(/no-such-controller/);
    // Each process's pid file goes when it exits: etcd, kube-apiserver and the controller-manager stopped.
    expect((await readdir(join(dir, 'logs'))).filter((f) => f.endsWith('.pid'))).toEqual([]);
  });
});
