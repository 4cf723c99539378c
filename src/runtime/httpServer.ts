import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** Health checks served by {@link startProbeServer}; each returns undefined when healthy, else why not. */
export interface Probes {
  readonly healthz: () => string | undefined;
  readonly readyz: () => string | undefined;
}

/** A running metrics/health server. */
export interface ProbeServer {
  /** The bound `host:port` (useful with port 0). */
  readonly address: string;
  close(): Promise<void>;
}

/**
 * Serves `/metrics` (Prometheus text format), `/healthz` and `/readyz` on
 * `host:port` (port 0 picks a free one). Resolves once listening.
 */
export async function startProbeServer(
  addr: string,
  registry: Registry,
  probes: Probes,
): Promise<ProbeServer> {
  const { host, port } = parseAddress(addr);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const check = (fn: () => string | undefined): void => {
      const problem = fn();
      res.writeHead(problem === undefined ? 200 : 503, { 'content-type': 'text/plain' }).end(problem ?? 'ok');
    };
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500).end(String(err)),
      );
    } else if (path === '/healthz' || path === '/livez') {
      check(probes.healthz);
    } else if (path === '/readyz') {
      check(probes.readyz);
    } else {
      res.writeHead(404).end('not found');
    }
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      resolveListen();
    });
  });
  const a = server.address() as AddressInfo;
  return {
    address: `${a.address}:${a.port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => {
          r();
        });
      }),
  };
}

/** Parses `host:port` or `:port` (all interfaces). Pure. */
export function parseAddress(addr: string): { host: string; port: number } {
  const i = addr.lastIndexOf(':');
  const host = i <= 0 ? '0.0.0.0' : addr.slice(0, i);
  const port = Number(addr.slice(i + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`invalid address ${JSON.stringify(addr)}: want host:port`);
  return { host, port };
}
