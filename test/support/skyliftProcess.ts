// `skylift run` as a child process, the way end-to-end tests run the operator.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { operatorNodeFlags } from '../../tools/nodeFlags.ts';
import { emulatorEnv } from '../../dev/emulator.ts';
import { repoRoot } from '../../dev/paths.ts';
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
 * `awsEndpoint` (the emulator or a fault proxy in front of it). Its teams marker
 * (docs/teams.md) is in the first of `namespace` unless `extraArgs` sets
 * --leader-election-namespace.
 */
export function spawnSkylift(
  namespace: string,
  awsEndpoint: string,
  extraArgs: readonly string[] = [],
): SkyliftProcess {
  const own = extraArgs.some((a) => a.startsWith('--leader-election-namespace'))
    ? []
    : ['--leader-election-namespace', namespace.split(',')[0] ?? namespace];
  return spawnSkyliftRun({
    args: ['--namespaces', namespace, '--leader-elect=false', ...own, ...extraArgs],
    env: emulatorEnv(awsEndpoint),
  });
}

/** How {@link spawnSkyliftRun} starts the operator. */
export interface SkyliftRunSpec {
  /** `skylift run` flags; `--probe-address 127.0.0.1:0` is added unless given. */
  readonly args: readonly string[];
  /** Defaults to the stack's admin kubeconfig. */
  readonly kubeconfig?: string;
  /** The CLI entry point; defaults to src/cli/main.ts (a built dist/cli/main.js also works). */
  readonly entry?: string;
  /** Working directory; defaults to this process's. */
  readonly cwd?: string;
  /** Environment added to (or, with undefined values, removed from) this process's. */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** Starts `skylift run` with exactly the given flags, kubeconfig and environment. */
export function spawnSkyliftRun(spec: SkyliftRunSpec): SkyliftProcess {
  const merged: Record<string, string | undefined> = {
    ...process.env,
    KUBECONFIG: spec.kubeconfig ?? stackInfo().adminKubeconfig,
    ...spec.env,
  };
  const env = Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== undefined));
  const probe = spec.args.some((a) => a.startsWith('--probe-address'))
    ? []
    : ['--probe-address', '127.0.0.1:0'];
  const entry = spec.entry ?? join(repoRoot, 'src/cli/main.ts');
  const child = spawn(process.execPath, [...operatorNodeFlags, entry, 'run', ...probe, ...spec.args], {
    env,
    ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
