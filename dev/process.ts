import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { openSync, closeSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

/** How a {@link ManagedProcess} ended. */
export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** Options for {@link ManagedProcess.start}. */
export interface StartOptions {
  /** Name used in errors and logs, e.g. "etcd". */
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  /** stdout and stderr both go to this file (appended). */
  readonly logFile: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /**
   * Records `<pid> <owner pid> <command>` here while the process runs, so a
   * later run can reap it if this one is killed before it can clean up (see
   * reaper.ts).
   */
  readonly pidFile?: string;
  /**
   * The command recorded in `pidFile` when `command` is a wrapper that execs
   * another program (e.g. `nsenter … -- kubelet`): the reaper matches the
   * running process's argv against it. Default `command`.
   */
  readonly pidFileCommand?: string;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Kills every child still running when this process exits, so a crashed test run leaves no servers behind. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
}

/**
 * A child process (etcd, kube-apiserver, moto, …) whose output goes to a log
 * file and whose lifetime is tied to this process. `stop()` is idempotent.
 */
export class ManagedProcess {
  readonly name: string;
  readonly logFile: string;
  readonly exited: Promise<ProcessExit>;
  private readonly child: ChildProcess;
  private exit: ProcessExit | undefined;

  private constructor(name: string, logFile: string, child: ChildProcess, pidFile: string | undefined) {
    this.name = name;
    this.logFile = logFile;
    this.child = child;
    this.exited = new Promise((resolveExit) => {
      child.on('exit', (code, signal) => {
        live.delete(child);
        if (pidFile !== undefined) rmSync(pidFile, { force: true });
        this.exit = { code, signal };
        resolveExit(this.exit);
      });
    });
  }

  /** Spawns the process; throws if it cannot be spawned at all (e.g. missing binary). */
  static async start(opts: StartOptions): Promise<ManagedProcess> {
    installExitHook();
    const fd = openSync(opts.logFile, 'a');
    try {
      const child = spawn(opts.command, opts.args, {
        stdio: ['ignore', fd, fd],
        env: opts.env ?? process.env,
        cwd: opts.cwd,
        // Own process group: a terminal's Ctrl-C reaches only us, and we stop
        // the children in order (controller-manager, apiserver, etcd).
        detached: true,
      });
      const proc = new ManagedProcess(opts.name, opts.logFile, child, opts.pidFile);
      await Promise.race([
        once(child, 'spawn'),
        once(child, 'error').then(([err]: unknown[]) => {
          throw new Error(`start ${opts.name}: ${err instanceof Error ? err.message : String(err)}`);
        }),
      ]);
      live.add(child);
      if (opts.pidFile !== undefined && child.pid !== undefined) {
        writeFileSync(opts.pidFile, `${child.pid} ${process.pid} ${opts.pidFileCommand ?? opts.command}\n`);
      }
      return proc;
    } finally {
      closeSync(fd);
    }
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The exit status if the process has ended, else undefined. */
  get exitStatus(): ProcessExit | undefined {
    return this.exit;
  }

  /** The last `lines` lines of the log, for error messages. */
  tail(lines = 30): string {
    try {
      return readFileSync(this.logFile, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  /** Sends a signal without waiting (chaos tests use SIGKILL/SIGSTOP). */
  signal(sig: NodeJS.Signals): void {
    if (this.exit === undefined) this.child.kill(sig);
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. Idempotent. */
  async stop(graceMs = 10_000): Promise<ProcessExit> {
    if (this.exit !== undefined) return this.exit;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
