// Argo CD's application controller and repo server as host processes on
// loopback, with a Redis of their own, against a given cluster: what the Argo
// CD end-to-end test syncs Skylift objects with. Built by hack/install-argocd.sh.
import { access, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { simpleRequest } from './http.ts';
import { toolPaths } from './paths.ts';
import { startOnFreePorts } from './freePortServer.ts';
import { ManagedProcess } from './process.ts';
import { startRedis, type Redis } from './redis.ts';
import { argoCdNamespace } from './argocdInstall.ts';

/** Options for {@link startArgoCd}. */
export interface ArgoCdOptions {
  /** Directory for logs, pid files, Redis and the repo server's clones; created if missing. */
  readonly dir: string;
  /** A kubeconfig allowed to do everything (the admin's): Argo CD's "in-cluster" destination. */
  readonly kubeconfig: string;
  /** Where hack/install-argocd.sh installed Argo CD, its scripts and redis-server; default {@link toolPaths}. */
  readonly argocdDir?: string;
  /** Argo CD's namespace (settings, AppProjects, Applications); default `argocd`. */
  readonly namespace?: string;
  /**
   * argocd-cm's `timeout.reconciliation`, in seconds: how often an Application is compared with
   * Git and the cluster, and how long the repo server trusts what a branch pointed to (Argo CD's
   * default 120). Applied without jitter.
   */
  readonly reconciliationSeconds?: number;
  /** More flags for argocd-application-controller. */
  readonly controllerArgs?: readonly string[];
  readonly startTimeoutMs?: number;
}

/** A running Argo CD (controller, repo server, Redis). */
export interface ArgoCd {
  readonly namespace: string;
  /** `127.0.0.1:<port>` of the repo server's gRPC endpoint (plaintext). */
  readonly repoServer: string;
  /** `127.0.0.1:<port>` of the Redis both use. */
  readonly redis: string;
  /** The directory of the three logs (`argocd-application-controller.log`, `argocd-repo-server.log`, `redis.log`). */
  readonly logDir: string;
  /** The last `lines` lines of each log, for failure messages. */
  tail(lines?: number): string;
  /** Stops the controller, then the repo server, then Redis. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts Redis, argocd-repo-server and argocd-application-controller on free
 * loopback ports (the controller's metrics server, which has no address flag,
 * listens on all addresses) and waits until both answer `/healthz`. The
 * cluster must already hold what {@link installArgoCd} installs. Everything
 * started is stopped again when a later step fails; pid files let a later run
 * reap what a killed one left. Throws with the failing component's log tail, or when
 * hack/install-argocd.sh has not installed Argo CD.
 */
export async function startArgoCd(opts: ArgoCdOptions): Promise<ArgoCd> {
  const argocdDir = opts.argocdDir ?? toolPaths().argocdDir;
  const namespace = opts.namespace ?? argoCdNamespace;
  const logDir = opts.dir;
  const timeoutMs = opts.startTimeoutMs ?? 60_000;
  await access(join(argocdDir, 'argocd')).catch((err: unknown) => {
    throw new Error(`no Argo CD in ${argocdDir}: run make argocd (hack/install-argocd.sh)`, { cause: err });
  });
  const tmp = join(opts.dir, 'tmp');
  await mkdir(tmp, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // Clones go under <dir>/tmp/_argocd-repo; nothing under /app/config (the image's paths) exists here.
    TMPDIR: tmp,
    ARGOCD_GPG_ENABLED: 'false',
    // What Argo CD's install manifests hand both components from argocd-cm's
    // timeout.reconciliation(.jitter): the controller's resync period and the repo server's
    // revision cache expiration, so that a push is seen within one period.
    ARGOCD_RECONCILIATION_TIMEOUT: `${opts.reconciliationSeconds ?? 120}s`,
    ARGOCD_RECONCILIATION_JITTER: '0s',
    // The scripts Argo CD's image has in /usr/local/bin: the repo server runs git-verify-wrapper.sh
    // on every manifest generation, GnuPG or not.
    PATH: `${join(argocdDir, 'bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    ARGOCD_TLS_DATA_PATH: join(opts.dir, 'tls'),
    ARGOCD_SSH_DATA_PATH: join(opts.dir, 'ssh'),
  };
  const started: { stop(): Promise<unknown> }[] = [];
  const stopAll = async (): Promise<void> => {
    for (const p of started.reverse()) await p.stop();
    started.length = 0;
  };
  try {
    const redis: Redis = await startRedis({ dir: opts.dir, bin: join(argocdDir, 'redis-server') });
    started.push(redis);
    const repo = await startWithHealthz({
      name: 'argocd-repo-server',
      command: join(argocdDir, 'argocd-repo-server'),
      args: (port, metricsPort) => [
        '--address',
        '127.0.0.1',
        '--port',
        String(port),
        '--metrics-address',
        '127.0.0.1',
        '--metrics-port',
        String(metricsPort),
        '--disable-tls',
        // Its default names the image's mTLS CA file, and a set path is refused with --disable-tls.
        '--client-ca-path=',
        '--redis',
        redis.address,
        '--logformat',
        'text',
      ],
      logDir,
      env,
      timeoutMs,
    });
    started.push(repo.process);
    const repoServer = `127.0.0.1:${repo.port}`;
    const controller = await startWithHealthz({
      name: 'argocd-application-controller',
      command: join(argocdDir, 'argocd-application-controller'),
      args: (_port, metricsPort) => [
        '--kubeconfig',
        opts.kubeconfig,
        '--namespace',
        namespace,
        '--redis',
        redis.address,
        '--repo-server',
        repoServer,
        '--repo-server-plaintext',
        '--metrics-port',
        String(metricsPort),
        '--logformat',
        'text',
        ...(opts.controllerArgs ?? []),
      ],
      logDir,
      env,
      timeoutMs,
    });
    started.push(controller.process);
    let stopped: Promise<void> | undefined;
    return {
      namespace,
      repoServer,
      redis: redis.address,
      logDir,
      tail: (lines = 40) =>
        [controller.process, repo.process]
          .map((p) => `--- ${p.name} (${p.logFile}) ---\n${p.tail(lines)}`)
          .join('\n'),
      stop: () => (stopped ??= stopAll()),
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

interface HealthzProcessSpec {
  readonly name: string;
  readonly command: string;
  /** The flags, given the serving port and the metrics port (which serves /healthz). */
  readonly args: (port: number, metricsPort: number) => string[];
  readonly logDir: string;
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutMs: number;
}

/**
 * Starts one Argo CD component and waits until `/healthz` on its metrics port answers 200. A
 * process that exits first (a port taken since it was chosen) is started again on
 * other ports, up to three times.
 */
async function startWithHealthz(
  spec: HealthzProcessSpec,
): Promise<{ process: ManagedProcess; port: number }> {
  const started = await startOnFreePorts({
    name: spec.name,
    ports: 2,
    start: ([port = 0, metricsPort = 0]) =>
      ManagedProcess.start({
        name: spec.name,
        command: spec.command,
        args: spec.args(port, metricsPort),
        logFile: join(spec.logDir, `${spec.name}.log`),
        pidFile: join(spec.logDir, `${spec.name}.pid`),
        env: spec.env,
      }),
    ready: async ([, metricsPort = 0]) =>
      (await simpleRequest(`http://127.0.0.1:${metricsPort}/healthz`, { timeoutMs: 2000 })).status === 200,
    describe: ([, metricsPort = 0]) => `${spec.name} /healthz on port ${metricsPort}`,
    timeoutMs: spec.timeoutMs,
    intervalMs: 100,
  });
  return { process: started.process, port: started.ports[0] ?? 0 };
}
