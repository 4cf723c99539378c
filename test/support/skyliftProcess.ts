// `skylift run` as a child process, the way end-to-end tests run the operator.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { emulatorEnv } from '../../src/dev/emulator.ts';
import { repoRoot } from '../../src/dev/paths.ts';
import { stackInfo } from './stack.ts';

/** A running `skylift run` and everything it printed so far. */
export interface SkyliftProcess {
  readonly child: ChildProcess;
  output(): string;
  /** SIGTERM, then wait for the exit; nothing if it already exited. */
  stop(): Promise<void>;
}

/**
 * Starts `skylift run` for one namespace (no leader election, probes on a
 * free port) against the stack's apiserver (admin kubeconfig) and AWS at
 * `awsEndpoint` (the emulator or a fault proxy in front of it).
 */
export function spawnSkylift(
  namespace: string,
  awsEndpoint: string,
  extraArgs: readonly string[] = [],
): SkyliftProcess {
  const child = spawn(
    process.execPath,
    [
      join(repoRoot, 'src/cli/main.ts'),
      'run',
      '--namespaces',
      namespace,
      '--leader-elect=false',
      '--probe-address',
      '127.0.0.1:0',
      ...extraArgs,
    ],
    {
      env: { ...process.env, ...emulatorEnv(awsEndpoint), KUBECONFIG: stackInfo().adminKubeconfig },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  return {
    child,
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
