// The one connection pool (a node:https Agent; node:http for a plain http:// server) every request
// to the apiserver shares, with the cluster's TLS settings and the user's client certificate.
import { readFileSync } from 'node:fs';
import { Agent as HttpAgent, type AgentOptions, type ClientRequest } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Clock } from '../clock.ts';
import {
  KubeCredentialError,
  type ClientCertificate,
  type KubeCluster,
  type PemSource,
} from './kubeconfig.ts';
import { announcedIdleTimeoutMs } from './transport.ts';

/**
 * How long one connection pool serves every request before the kubeconfig's TLS material is read
 * afresh: a pool per request — a new TLS handshake and secure context each, as client-node made —
 * cost more CPU than anything else in the operator; a rotated CA or client certificate file is
 * picked up within this time.
 */
export const kubeDispatcherReuseMs = 5 * 60_000;

/**
 * An idle connection is closed after this long. Below the apiserver's own idle timeout (90 s) and
 * the 60 s of many cloud load balancers, so the client closes first and never sends a request on a
 * connection the other end is closing; also what ends a replaced pool's connections. A server (or a
 * proxy) announcing a shorter `Keep-Alive: timeout=N` is believed: see {@link idleTimeoutMs}.
 */
export const kubeIdleConnectionMs = 30_000;

/** A connection is closed this long before the server's announced keep-alive ends (Node's margin too). */
const keepAliveMarginMs = 1_000;

/**
 * The shared pool: `agent(cert)` answers the pool in use while it is younger than
 * {@link kubeDispatcherReuseMs} and was built for the same client certificate (an exec plugin may
 * hand out a new one); otherwise it builds a new pool, reading the CA and certificate files
 * (synchronously: small, every few minutes). A replaced pool is only no longer handed out:
 * requests and watches on it finish on their connections, which then close once idle for
 * {@link kubeIdleConnectionMs}. Connections are HTTP/1.1 keep-alive, unbounded in number — each
 * watch holds one for its whole life, and the number of watches grows with the namespaces and
 * types watched, so a bound could leave requests waiting behind watches; the controllers' worker
 * counts bound the requests. Never blocks on the network; throws KubeCredentialError when a file
 * cannot be read.
 */
export class ConnectionPool {
  private current:
    | { readonly agent: HttpAgent; readonly until: number; readonly cert: ClientCertificate | undefined }
    | undefined;

  private readonly cluster: KubeCluster;
  private readonly user: string;
  private readonly clock: Pick<Clock, 'now'>;

  /** `user` names the kubeconfig user in messages. */
  constructor(cluster: KubeCluster, user: string, clock: Pick<Clock, 'now'>) {
    this.cluster = cluster;
    this.user = user;
    this.clock = clock;
  }

  /** The pool for a request presenting `cert` (undefined: none); an https Agent for an https server. */
  agent(cert: ClientCertificate | undefined): HttpAgent {
    const now = this.clock.now();
    const pool = this.current;
    if (pool !== undefined && now < pool.until && sameCertificate(pool.cert, cert)) return pool.agent;
    const options: AgentOptions = {
      keepAlive: true,
      // TCP keep-alive probes after 30 s, below the 60 s idle timeout of many cloud load balancers.
      keepAliveMsecs: 30_000,
      // The most recently used connection first, so those a burst opened go idle and close.
      scheduling: 'lifo',
    };
    const fresh = this.cluster.server.startsWith('https:')
      ? new IdleClosingHttpsAgent({ ...options, ...this.tlsOptions(cert) })
      : new IdleClosingHttpAgent(options);
    this.current = { agent: fresh, until: now + kubeDispatcherReuseMs, cert };
    return fresh;
  }

  private tlsOptions(cert: ClientCertificate | undefined): {
    ca?: Buffer;
    cert?: Buffer;
    key?: Buffer;
    servername?: string;
    rejectUnauthorized?: boolean;
  } {
    const { cluster } = this;
    const clusterWhat = `of cluster "${cluster.name}"`;
    const userWhat = `of user "${this.user}"`;
    return {
      ...(cluster.ca !== undefined ? { ca: pem(cluster.ca, 'certificate-authority', clusterWhat) } : {}),
      ...(cert !== undefined
        ? { cert: pem(cert.cert, 'client-certificate', userWhat), key: pem(cert.key, 'client-key', userWhat) }
        : {}),
      ...(cluster.tlsServerName !== undefined ? { servername: cluster.tlsServerName } : {}),
      ...(cluster.insecureSkipTlsVerify ? { rejectUnauthorized: false } : {}),
    };
  }
}

// An Agent whose idle connections close after idleTimeoutMs, while one in use has no timeout at
// all: a quiet watch is never cut. (Agent's own `timeout` option would set it on connections in use
// too.) keepSocketAlive and reuseSocket are Agent's documented hooks for subclasses: the first is
// called as a connection goes idle (and returns whether to keep it), the second as one is taken
// again. Node's keepSocketAlive answers false when the server's announced keep-alive is too short
// to reuse the connection safely (1 s); without an Agent `timeout` it sets none, and only shortens
// that one by the server's announcement, so the announcement is applied here.

/** Node's Agent#keepSocketAlive as it is: it answers whether to keep the connection (@types/node says void). */
type NodeKeepSocketAlive = (this: HttpAgent, socket: Duplex) => boolean;

class IdleClosingHttpAgent extends HttpAgent {
  override keepSocketAlive(socket: Duplex): boolean {
    return (super.keepSocketAlive as NodeKeepSocketAlive).call(this, socket) && idle(socket);
  }

  override reuseSocket(socket: Duplex, request: ClientRequest): void {
    super.reuseSocket(socket, request);
    busy(socket);
  }
}

class IdleClosingHttpsAgent extends HttpsAgent {
  override keepSocketAlive(socket: Duplex): boolean {
    return (super.keepSocketAlive as NodeKeepSocketAlive).call(this, socket) && idle(socket);
  }

  override reuseSocket(socket: Duplex, request: ClientRequest): void {
    super.reuseSocket(socket, request);
    busy(socket);
  }
}

/**
 * Arms the idle timeout of a connection going idle (Agent destroys an idle one on 'timeout'), and
 * says whether to keep it: not when the server's announced keep-alive leaves no time to reuse it.
 */
function idle(socket: Duplex): boolean {
  if (!(socket instanceof Socket)) return true;
  const ms = idleTimeoutMs(socket.timeout, announcedIdleTimeoutMs(socket));
  if (ms <= 0) return false;
  socket.setTimeout(ms);
  return true;
}

/**
 * How long an idle connection is kept: {@link kubeIdleConnectionMs}, less if Node's Agent set a
 * shorter timeout (`nodeMs`; 0 or undefined: none) or the server announced a keep-alive of
 * `announcedMs` (then a second less, as Node does). Not above 0: do not keep it. Pure.
 */
export function idleTimeoutMs(nodeMs: number | undefined, announcedMs: number | undefined): number {
  let ms = kubeIdleConnectionMs;
  if (nodeMs !== undefined && nodeMs > 0) ms = Math.min(ms, nodeMs);
  if (announcedMs !== undefined) ms = Math.min(ms, announcedMs - keepAliveMarginMs);
  return ms;
}

/** Disarms it for a connection taken again. */
function busy(socket: Duplex): void {
  if (socket instanceof Socket) socket.setTimeout(0);
}

function pem(source: PemSource, field: string, what: string): Buffer {
  if ('data' in source) return source.data;
  try {
    return readFileSync(source.file);
  } catch (err) {
    throw new KubeCredentialError(
      `read ${field} ${source.file} ${what}: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
}

/** Whether two client certificates are the same files or the same bytes. Pure. */
export function sameCertificate(a: ClientCertificate | undefined, b: ClientCertificate | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return samePem(a.cert, b.cert) && samePem(a.key, b.key);
}

function samePem(a: PemSource, b: PemSource): boolean {
  if ('file' in a) return 'file' in b && a.file === b.file;
  return 'data' in b && a.data.equals(b.data);
}
