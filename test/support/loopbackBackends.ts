// Backends for traffic tests without a kubelet: a loopback HTTP server stands for a Pod, and a
// Service without a selector lists it in an EndpointSlice the test writes (labelled as the
// EndpointSlice controller's, the only slices Skylift registers). Kubernetes refuses loopback
// addresses in EndpointSlices, so the Pod gets `10.250.<n>.x`, which the ALB data plane dials as
// `127.0.0.x` (its `dialAddress`).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeClient } from '../../src/runtime/kube/client.ts';

/** A loopback server standing for a Pod: answers its name, counts the requests that reach it. */
export interface LoopbackBackend {
  readonly name: string;
  /** The Pod IP it stands for. */
  readonly ip: string;
  port: number;
  /** Requests answered, health checks apart (path /health, or the data plane's health checker). */
  hits: number;
  readonly server: Server;
}

function isHealthCheck(req: IncomingMessage): boolean {
  return req.url === '/health' || req.headers['user-agent']?.startsWith('ELB-HealthChecker') === true;
}

/**
 * Starts a backend named `name` on `loopback` (127.0.0.x, a free port), standing for Pod IP
 * `10.250.<subnet>.x`. Stop it with {@link stopLoopbackBackend}.
 */
export async function startLoopbackBackend(
  name: string,
  loopback: string,
  subnet: number,
): Promise<LoopbackBackend> {
  const server = createServer();
  const b: LoopbackBackend = {
    name,
    ip: loopback.replace(/^127\.0\.0\./, `10.250.${subnet}.`),
    port: 0,
    hits: 0,
    server,
  };
  server.on('request', (req, res) => {
    if (!isHealthCheck(req)) b.hits++;
    res.writeHead(200, { 'content-type': 'text/plain' }).end(name);
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(0, loopback, () => resolveListen());
  });
  b.port = (server.address() as AddressInfo).port;
  return b;
}

/** Closes a backend's server. */
export function stopLoopbackBackend(b: LoopbackBackend): Promise<void> {
  return new Promise((closed) => {
    b.server.close(() => closed());
  });
}

/** Service `name` of `ns` (port 80, no selector) and its EndpointSlice listing `b`'s Pod IP as ready. */
export async function serviceTo(
  client: KubeClient,
  ns: string,
  name: string,
  b: Pick<LoopbackBackend, 'ip' | 'port'>,
): Promise<void> {
  await client.create(`/api/v1/namespaces/${ns}/services`, {
    metadata: { name },
    spec: { ports: [{ port: 80, targetPort: b.port, protocol: 'TCP' }] },
  });
  await client.create(`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${name}-1`,
      labels: {
        'kubernetes.io/service-name': name,
        'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
      },
    },
    addressType: 'IPv4',
    ports: [{ port: b.port, protocol: 'TCP', name: '' }],
    endpoints: [{ addresses: [b.ip], conditions: { ready: true, serving: true, terminating: false } }],
  });
}
