import { mkdir } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { startOnFreePorts } from './freePortServer.ts';
import { ManagedProcess } from './process.ts';

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
  const started = await startOnFreePorts({
    name: 'redis-server',
    ports: 1,
    start: ([port]) =>
      ManagedProcess.start({
        name: 'redis-server',
        command: opts.bin,
        args: [
          '--bind',
          '127.0.0.1',
          '--port',
          String(port ?? 0),
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
      }),
    ready: ([port]) => ping(port ?? 0),
    describe: ([port]) => `redis-server on 127.0.0.1:${port ?? 0}`,
    timeoutMs: opts.startTimeoutMs ?? 20_000,
    intervalMs: 50,
  });
  return {
    address: `127.0.0.1:${started.ports[0] ?? 0}`,
    logFile,
    stop: async () => {
      await started.process.stop(5000);
    },
  };
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
