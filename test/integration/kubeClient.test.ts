// The Kubernetes client on the real apiserver: requests share TLS connections instead of opening
// one per request (client-node hands every request a new undici Agent, which made TLS setup the
// operator's largest CPU cost: make bench's CPU profile, docs/benchmarks.md).
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeClient } from '../../src/runtime/kube/client.ts';
import { kubeConfig } from '../support/stack.ts';

let connections = 0;
const onConnected = (): void => {
  connections++;
};

afterEach(() => {
  unsubscribe('undici:client:connected', onConnected);
});

describe('KubeClient', () => {
  it('sends 50 requests over a few shared connections, not one TLS connection each', async () => {
    const client = new KubeClient(kubeConfig());
    subscribe('undici:client:connected', onConnected);
    connections = 0;
    for (let i = 0; i < 50; i++) await client.get('/api/v1/namespaces/default');
    // Concurrent ones too: the pool opens what it needs, then reuses it.
    await Promise.all(Array.from({ length: 20 }, () => client.get('/api/v1/namespaces/default')));
    expect(connections).toBeGreaterThan(0); // the channel sees the client's connections at all
    expect(connections).toBeLessThanOrEqual(21);
  });
});
