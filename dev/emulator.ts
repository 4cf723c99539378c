import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { simpleRequest } from './http.ts';
import { toolPaths } from './paths.ts';
import { startOnFreePorts } from './freePortServer.ts';
import { ManagedProcess } from './process.ts';

/** Credentials and region the emulator accepts; any non-empty values work with moto. */
export const emulatorCredentials = {
  accessKeyId: 'testing',
  secretAccessKey: 'testing',
  region: 'us-east-1',
} as const;

/** AWS SDK v3 client configuration for an endpoint (the proxy or the emulator). Pure. */
export function awsClientConfig(endpoint: string, maxAttempts = 3) {
  return {
    endpoint,
    region: emulatorCredentials.region,
    credentials: {
      accessKeyId: emulatorCredentials.accessKeyId,
      secretAccessKey: emulatorCredentials.secretAccessKey,
    },
    maxAttempts,
  };
}

/** moto's default account id. */
export const emulatorAccountId = '123456789012';

/** Options for {@link startEmulator}. */
export interface EmulatorOptions {
  /** Directory for the log file; created if missing. */
  readonly dir: string;
  /** The venv holding moto_server; default from hack/lib.sh's rules. */
  readonly venvDir?: string;
  readonly startTimeoutMs?: number;
  /**
   * The address to listen on (default 127.0.0.1). A node cluster's moto
   * listens on the host end of the node's veth pair, which Pods reach too.
   */
  readonly host?: string;
}

/** A running moto server (on loopback unless told another address). */
export interface Emulator {
  /** http://<host>:<port> — what AWS_ENDPOINT_URL should be. */
  readonly endpoint: string;
  readonly logFile: string;
  /** Forgets every AWS resource (POST /moto-api/reset). Idempotent. */
  reset(): Promise<void>;
  /** Stops the server. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts `moto_server` on a free port (of `host`, default loopback) and waits until it answers.
 * Throws with the log tail when it does not come up within the deadline.
 */
export async function startEmulator(opts: EmulatorOptions): Promise<Emulator> {
  const venvDir = opts.venvDir ?? toolPaths().venvDir;
  await mkdir(opts.dir, { recursive: true });
  const logFile = join(opts.dir, 'moto.log');
  const host = opts.host ?? '127.0.0.1';
  const endpointOf = (port: number | undefined): string => `http://${host}:${port ?? 0}`;
  const reset = async (endpoint: string): Promise<void> => {
    const res = await simpleRequest(`${endpoint}/moto-api/reset`, { method: 'POST', timeoutMs: 10_000 });
    if (res.status !== 200) throw new Error(`moto reset: HTTP ${res.status}: ${res.body.slice(0, 200)}`);
  };
  const started = await startOnFreePorts({
    name: 'moto',
    ports: 1,
    start: ([port]) =>
      ManagedProcess.start({
        name: 'moto',
        command: join(venvDir, 'bin', 'moto_server'),
        args: ['-H', host, '-p', String(port ?? 0)],
        logFile,
        pidFile: join(opts.dir, 'moto.pid'),
        env: { ...process.env, PYTHONUNBUFFERED: '1' },
      }),
    // moto is up once it answers a reset.
    ready: async ([port]) => {
      await reset(endpointOf(port));
      return true;
    },
    describe: ([port]) => `moto at ${endpointOf(port)}`,
    timeoutMs: opts.startTimeoutMs ?? 60_000,
    intervalMs: 100,
  });
  const endpoint = endpointOf(started.ports[0]);
  return {
    endpoint,
    logFile,
    reset: () => reset(endpoint),
    stop: async () => {
      await started.process.stop(5000);
    },
  };
}

/** The environment that points AWS SDKs and the AWS CLI at an emulator. Pure. */
export function emulatorEnv(endpoint: string): Record<string, string> {
  return {
    AWS_ENDPOINT_URL: endpoint,
    AWS_ACCESS_KEY_ID: emulatorCredentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: emulatorCredentials.secretAccessKey,
    AWS_REGION: emulatorCredentials.region,
    AWS_DEFAULT_REGION: emulatorCredentials.region,
  };
}
