import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { simpleRequest } from './http.ts';
import { toolPaths } from './paths.ts';
import { freePort } from './ports.ts';
import { ManagedProcess } from './process.ts';
import { AbortWait, waitFor } from './wait.ts';

/** Credentials and region the emulator accepts; any non-empty values work with moto. */
export const emulatorCredentials = {
  accessKeyId: 'testing',
  secretAccessKey: 'testing',
  region: 'us-east-1',
} as const;

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
  let lastError: unknown;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freePort();
    const host = opts.host ?? '127.0.0.1';
    const endpoint = `http://${host}:${port}`;
    const proc = await ManagedProcess.start({
      name: 'moto',
      command: join(venvDir, 'bin', 'moto_server'),
      args: ['-H', host, '-p', String(port)],
      logFile,
      pidFile: join(opts.dir, 'moto.pid'),
      env: { ...process.env, PYTHONUNBUFFERED: '1' },
    });
    const reset = async (): Promise<void> => {
      const res = await simpleRequest(`${endpoint}/moto-api/reset`, { method: 'POST', timeoutMs: 10_000 });
      if (res.status !== 200) throw new Error(`moto reset: HTTP ${res.status}: ${res.body.slice(0, 200)}`);
    };
    try {
      await waitFor(
        async () => {
          const s = proc.exitStatus;
          if (s !== undefined) throw new AbortWait(`moto exited (code ${String(s.code)}):\n${proc.tail()}`);
          await reset();
          return true;
        },
        { timeoutMs: opts.startTimeoutMs ?? 60_000, description: `moto at ${endpoint}`, intervalMs: 100 },
      );
      return {
        endpoint,
        logFile,
        reset,
        stop: async () => {
          await proc.stop(5000);
        },
      };
    } catch (err) {
      lastError = err;
      await proc.stop(2000);
      if (!(err instanceof AbortWait)) break;
    }
  }
  throw new Error(
    `moto did not start: ${lastError instanceof Error ? lastError.message : String(lastError)}`,
  );
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
