// `skylift run` as a separate process for benchmarks: its log goes to a file,
// its /metrics address is read from the log, and /proc tells its memory and CPU.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { operatorNodeFlags } from '../../tools/nodeFlags.ts';
import { simpleRequest } from '../../dev/http.ts';
import { repoRoot } from '../../dev/paths.ts';
import { AbortWait, waitFor } from '../../dev/wait.ts';
import { sampleProcess, type ProcSample } from './procStats.ts';

/** How to start the operator. */
export interface OperatorSpec {
  /** `skylift run` flags (a free loopback `--probe-address` is added unless given). */
  readonly args: readonly string[];
  readonly kubeconfig: string;
  /** Environment added to this process's (AWS endpoint, credentials, region). */
  readonly env: Readonly<Record<string, string>>;
  /** The operator's stdout and stderr go here. */
  readonly logFile: string;
  /** How long to wait for "controllers started" (default 60 s). */
  readonly startTimeoutMs?: number;
  /** The CLI's entry point (default src/cli/main.ts; a compiled dist/cli/main.js runs as the image does). */
  readonly entry?: string;
  /** Node flags besides the image's (operatorNodeFlags). */
  readonly nodeFlags?: readonly string[];
}

/** A running operator process. */
export interface OperatorProcess {
  readonly pid: number;
  /** `host:port` of /metrics, as the operator logged it. */
  readonly metricsAddress: string;
  /** The text of /metrics now. */
  metrics(): Promise<string>;
  /** Memory and CPU so far, from /proc. */
  sample(): Promise<ProcSample>;
  /** The last lines it printed, for error messages. */
  tail(): string;
  /** SIGTERM and wait for the exit (SIGKILL after `graceMs`, default 30 s). Idempotent. */
  stop(graceMs?: number): Promise<void>;
}

/** The address in a `serving /metrics` JSON log line, if `line` is one. Pure. */
export function metricsAddressFromLogLine(line: string): string | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const entry = JSON.parse(line) as { msg?: unknown; address?: unknown };
    if (
      typeof entry.msg === 'string' &&
      entry.msg.startsWith('serving /metrics') &&
      typeof entry.address === 'string'
    )
      return entry.address;
  } catch {
    // not JSON after all
  }
  return undefined;
}

/**
 * Starts `node src/cli/main.ts run` with JSON logs and waits until it has
 * logged its metrics address and "controllers started". Throws with the log
 * tail if it exits or does not get there in time (and then stops it).
 */
export async function startOperator(spec: OperatorSpec): Promise<OperatorProcess> {
  const probe = spec.args.some((a) => a.startsWith('--probe-address'))
    ? []
    : ['--probe-address', '127.0.0.1:0'];
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...operatorNodeFlags,
      ...(spec.nodeFlags ?? []),
      spec.entry ?? join(repoRoot, 'src/cli/main.ts'),
      'run',
      ...probe,
      '--log-format',
      'json',
      ...spec.args,
    ],
    { env: { ...process.env, KUBECONFIG: spec.kubeconfig, ...spec.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const log = createWriteStream(spec.logFile, { flags: 'a' });
  const lastLines: string[] = [];
  let metricsAddress: string | undefined;
  let started = false;
  for (const stream of [child.stdout, child.stderr]) {
    if (stream === null) continue;
    const lines = createInterface({ input: stream, crlfDelay: Infinity });
    lines.on('line', (line) => {
      log.write(`${line}\n`);
      lastLines.push(line);
      if (lastLines.length > 40) lastLines.shift();
      metricsAddress ??= metricsAddressFromLogLine(line);
      if (!started && line.includes('"msg":"controllers started"')) started = true;
    });
  }
  // If the bench itself exits (Ctrl-C, a crash), the operator must not outlive it.
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const exited = once(child, 'exit');
  void exited.then(() => process.removeListener('exit', killOnExit));
  const tail = (): string => lastLines.join('\n');
  const stop = async (graceMs = 30_000): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    }
    await new Promise<void>((done) => log.end(done));
  };
  try {
    const address = await waitFor(
      () => {
        if (child.exitCode !== null || child.signalCode !== null)
          throw new AbortWait(`skylift run exited early:\n${tail()}`);
        return started && metricsAddress !== undefined ? metricsAddress : undefined;
      },
      { timeoutMs: spec.startTimeoutMs ?? 60_000, description: 'skylift run to start its controllers' },
    );
    const pid = child.pid;
    if (pid === undefined) throw new Error('skylift run has no pid');
    return {
      pid,
      metricsAddress: address,
      async metrics() {
        const res = await simpleRequest(`http://${address}/metrics`, { timeoutMs: 10_000 });
        if (res.status !== 200) throw new Error(`GET /metrics: HTTP ${res.status}`);
        return res.body;
      },
      sample: () => sampleProcess(pid),
      tail,
      stop,
    };
  } catch (err) {
    await stop(5000);
    throw new Error(
      `${err instanceof Error ? err.message : String(err)}\n--- operator log tail ---\n${tail()}`,
      {
        cause: err,
      },
    );
  }
}
