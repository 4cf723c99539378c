// The Kubernetes client on the real apiserver: requests share TLS connections instead of opening
// one per request (client-node handed every request a new undici Agent, which made TLS setup the
// operator's largest CPU cost: make bench's CPU profile, docs/benchmarks.md), and a connection pool
// replaced on time leaves the watches on the old one running.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeClient } from '../../src/runtime/kube/client.ts';
import { kubeDispatcherReuseMs } from '../../src/runtime/kube/connectionPool.ts';
import { lines } from '../../src/runtime/kube/informer.ts';
import { FakeClock } from '../support/fakeClock.ts';
import { kubeConfig } from '../support/stack.ts';

// Every TCP connection this process opens (TLS ones included) is published on net.client.socket;
// nothing else in this file makes any while a test counts.
let connections = 0;
const onConnected = (): void => {
  connections++;
};

afterEach(() => {
  unsubscribe('net.client.socket', onConnected);
});

describe('KubeClient', () => {
  it('sends 50 requests over a few shared connections, not one TLS connection each', async () => {
    const client = new KubeClient(kubeConfig());
    subscribe('net.client.socket', onConnected);
    connections = 0;
    for (let i = 0; i < 50; i++) await client.get('/api/v1/namespaces/default');
    expect(connections).toBeGreaterThan(0); // the channel sees the client's connections at all
    expect(connections).toBeLessThanOrEqual(2); // one, unless the apiserver closed it meanwhile
    // Concurrent ones too: HTTP/1.1, one connection per request at once, then reused.
    await Promise.all(Array.from({ length: 20 }, () => client.get('/api/v1/namespaces/default')));
    expect(connections).toBeLessThanOrEqual(21);
  });

  it('a DELETE with a body (preconditions) leaves its kept-alive connection usable for the next request', async () => {
    // Node sends a DELETE's body unframed unless told its length; the apiserver then read it as the
    // next request on the connection and answered that one "400 Bad Request".
    const client = new KubeClient(kubeConfig());
    const configmaps = '/api/v1/namespaces/default/configmaps';
    const name = `delete-body-${Math.random().toString(16).slice(2, 8)}`;
    const made = await client.create<{ metadata: { uid: string } }>(configmaps, { metadata: { name } });
    await client.delete(`${configmaps}/${name}`, {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      preconditions: { uid: made.metadata.uid },
    });
    for (let i = 0; i < 5; i++) await client.get('/api/v1/namespaces/default');
    await expect(client.get(`${configmaps}/${name}`)).rejects.toMatchObject({ statusCode: 404 });
  });

  it('a connection pool replaced on time leaves a watch on the old one running', async () => {
    const clock = new FakeClock(Date.now());
    const client = new KubeClient(kubeConfig(), { clock });
    const configmaps = '/api/v1/namespaces/default/configmaps';
    const name = `pool-renewal-${Date.now()}`;
    const stop = new AbortController();
    const giveUp = setTimeout(() => stop.abort(new Error('no ADDED event within 20 s')), 20_000);
    const watch = await client.raw('GET', configmaps, {
      query: { watch: 1, fieldSelector: `metadata.name=${name}` },
      signal: stop.signal,
    });
    expect(watch.status).toBe(200);
    subscribe('net.client.socket', onConnected);
    connections = 0;
    clock.advance(kubeDispatcherReuseMs);
    // Made on the new pool, seen on the old one's watch.
    await client.create(configmaps, { metadata: { name }, data: { a: '1' } });
    expect(connections).toBe(1);
    try {
      for await (const line of lines(watch.body)) {
        const ev = JSON.parse(line) as { type: string; object: { metadata: { name: string } } };
        if (ev.type === 'ADDED' && ev.object.metadata.name === name) break;
      }
    } finally {
      clearTimeout(giveUp);
      stop.abort();
      await client.delete(`${configmaps}/${name}`);
    }
  });
});
