import { mkdir } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort } from './ports.ts';
import { ManagedProcess } from './process.ts';
import { AbortWait, waitFor } from './wait.ts';

/** Options for {@link startRedis}. */
export interface RedisOptions {
  /** Directory for the log and pid files and Redis's working directory; created if missing. */
  readonly dir: string;
  /** The redis-server binary (hack/install-argocd.sh links Debian's). */
  readonly bin: string;
  readonly startTimeoutMs?: number;
}

/** A running redis-server on loopback. */
export interface Redis {
  /** `127.0.0.1:<port>`, as Argo CD's `--redis` flag takes it. */
  readonly address: string;
  readonly logFile: string;
  /** Stops the server. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts redis-server on a free loopback port, as a cache only (no snapshots,
 * no append-only file, no password: it listens on 127.0.0.1 alone), and waits
 * until it answers PING. Retries on another port when the chosen one was
 * taken meanwhile; throws with the log tail when it does not come up.
 */
export async function startRedis(opts: RedisOptions): Promise<Redis> {
  await mkdir(opts.dir, { recursive: true });
  const logFile = join(opts.dir, 'redis.log');
  let lastError: unknown;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freePort();
    const proc = await ManagedProcess.start({
      name: 'redis-server',
      command: opts.bin,
      args: [
        '--bind',
        '127.0.0.1',
        '--port',
        String(port),
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        opts.dir,
        // Redis rewrites its command line to "redis-server 127.0.0.1:<port>" unless told not to;
        // the reaper recognises a process left behind by a killed run by its recorded command.
        '--set-proc-title',
        'no',
      ],
      logFile,
      pidFile: join(opts.dir, 'redis-server.pid'),
    });
    try {
      await waitFor(
        async () => {
          const s = proc.exitStatus;
          if (s !== undefined)
            throw new AbortWait(`redis-server exited (code ${String(s.code)}):\n${proc.tail()}`);
          return (await ping(port)) ? true : undefined;
        },
        {
          timeoutMs: opts.startTimeoutMs ?? 20_000,
          description: `redis-server on 127.0.0.1:${port}`,
          intervalMs: 50,
        },
      );
      return {
        address: `127.0.0.1:${port}`,
        logFile,
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
    `redis-server did not start: ${lastError instanceof Error ? lastError.message : String(lastError)}`,
  );
}

/** True when something on 127.0.0.1:`port` answers a Redis PING with PONG. */
export async function ping(port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolvePing) => {
    const socket = connect({ host: '127.0.0.1', port });
    let answer = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolvePing(ok);
    };
    socket.setTimeout(timeoutMs, () => {
      done(false);
    });
    socket.on('error', () => {
      done(false);
    });
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('utf8');
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
    });
  });
}
