// The one connection pool (undici Agent) every request to the apiserver shares, with the
// cluster's TLS settings and the user's client certificate.
import { readFileSync } from 'node:fs';
import { Agent, type buildConnector, type Dispatcher } from 'undici';
import type { Clock } from '../clock.ts';
import {
  KubeCredentialError,
  type ClientCertificate,
  type KubeCluster,
  type PemSource,
} from './kubeconfig.ts';

/**
 * How long one connection pool serves every request before the kubeconfig's TLS material is read
 * afresh: a pool per request — a new TLS handshake and secure context each, as client-node made —
 * cost more CPU than anything else in the operator; a rotated CA or client certificate file is
 * picked up within this time.
 */
export const kubeDispatcherReuseMs = 5 * 60_000;

/**
 * The shared pool: `dispatcher(cert)` answers the pool in use while it is younger than
 * {@link kubeDispatcherReuseMs} and was built for the same client certificate (an exec plugin may
 * hand out a new one); otherwise it builds a new pool, reading the CA and certificate files
 * (synchronously: small, every few minutes), and closes the old one gracefully — requests and
 * watches on it finish first. Never blocks on the network; throws KubeCredentialError when a file
 * cannot be read.
 */
export class ConnectionPool {
  private current:
    | { readonly dispatcher: Agent; readonly until: number; readonly cert: ClientCertificate | undefined }
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

  /** The pool for a request presenting `cert` (undefined: none). */
  dispatcher(cert: ClientCertificate | undefined): Dispatcher {
    const now = this.clock.now();
    const pool = this.current;
    if (pool !== undefined && now < pool.until && sameCertificate(pool.cert, cert)) return pool.dispatcher;
    const fresh = new Agent({ connect: this.connectOptions(cert) });
    this.current = { dispatcher: fresh, until: now + kubeDispatcherReuseMs, cert };
    if (pool !== undefined) void pool.dispatcher.close().catch(() => undefined);
    return fresh;
  }

  private connectOptions(cert: ClientCertificate | undefined): Partial<buildConnector.BuildOptions> {
    const { cluster } = this;
    // TCP keep-alive probes after 30 s, below the 60 s idle timeout of many cloud load balancers.
    const keepAlive = { keepAlive: true, keepAliveInitialDelay: 30_000 };
    if (!cluster.server.startsWith('https:')) return keepAlive;
    const clusterWhat = `of cluster "${cluster.name}"`;
    const userWhat = `of user "${this.user}"`;
    return {
      ...keepAlive,
      ...(cluster.ca !== undefined ? { ca: pem(cluster.ca, 'certificate-authority', clusterWhat) } : {}),
      ...(cert !== undefined
        ? { cert: pem(cert.cert, 'client-certificate', userWhat), key: pem(cert.key, 'client-key', userWhat) }
        : {}),
      ...(cluster.tlsServerName !== undefined ? { servername: cluster.tlsServerName } : {}),
      ...(cluster.insecureSkipTlsVerify ? { rejectUnauthorized: false } : {}),
    };
  }
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
