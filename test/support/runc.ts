// One container run by runc itself, the runtime containerd hands a Pod's
// containers to: an OCI bundle (an unpacked root filesystem and a config.json
// written here) with a read-only root, a user, no capabilities and the host's
// network namespace (the test stack listens on 127.0.0.1).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A file of the host bind-mounted read-only into the container. */
export interface BindMount {
  readonly source: string;
  readonly destination: string;
}

/** How {@link startRuncContainer} runs the container. */
export interface RuncContainerSpec {
  /** Container id; also names its cgroup. */
  readonly id: string;
  /** The bundle directory: holds `rootfs/` (unpacked already); config.json is written here. */
  readonly bundle: string;
  /** runc's state directory (its --root), e.g. under the test's scratch directory. */
  readonly stateDir: string;
  /** The process: the image's entrypoint and the arguments, as a Pod's command and args. */
  readonly args: readonly string[];
  readonly env: readonly string[];
  readonly cwd: string;
  readonly uid: number;
  readonly gid: number;
  /** Size of the tmpfs on /tmp in MiB (the chart's emptyDir). */
  readonly tmpMiB: number;
  readonly binds?: readonly BindMount[];
}

/** A process of the running container, as the host sees it. */
export interface ContainerProcess {
  readonly pid: number;
  readonly cmdline: readonly string[];
  /** Real, effective, saved and filesystem ids (the Uid:/Gid: lines of /proc/PID/status). */
  readonly uids: readonly number[];
  readonly gids: readonly number[];
  /** Effective capabilities, hex as in /proc/PID/status. */
  readonly capEff: string;
}

/** A container started by {@link startRuncContainer}. */
export interface RuncContainer {
  readonly child: ChildProcess;
  /** What the container printed on stdout and stderr so far. */
  output(): string;
  /** The container's processes (runc ps) with their ids and capabilities. */
  processes(): Promise<ContainerProcess[]>;
  /** Runs a command in the container (runc exec) as `user` ("uid:gid"); resolves with its stdout and exit code. */
  exec(user: string, args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Sends a signal to the container's init process (runc kill), as the kubelet's runtime does to stop it. */
  kill(signal: string): Promise<void>;
  /** Waits for `runc run` to end: the init process's exit code (128+n for signal n). */
  exited(): Promise<number | null>;
  /** Kills what still runs and deletes the container's state and cgroup. Idempotent. */
  remove(): Promise<void>;
}

/** The OCI runtime config: read-only root, no capabilities, no new privileges, host network. */
function runtimeConfig(spec: RuncContainerSpec): Record<string, unknown> {
  const none: string[] = [];
  return {
    ociVersion: '1.0.2',
    root: { path: 'rootfs', readonly: true },
    hostname: spec.id,
    process: {
      terminal: false,
      user: { uid: spec.uid, gid: spec.gid, additionalGids: [spec.gid] },
      args: spec.args,
      env: spec.env,
      cwd: spec.cwd,
      capabilities: { bounding: none, effective: none, permitted: none, inheritable: none, ambient: none },
      // No rlimits: this host grants no CAP_SYS_RESOURCE to raise them; the container keeps runc's.
      noNewPrivileges: true,
    },
    mounts: [
      { destination: '/proc', type: 'proc', source: 'proc' },
      { destination: '/dev', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'strictatime', 'mode=755'] },
      {
        destination: '/dev/pts',
        type: 'devpts',
        source: 'devpts',
        options: ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620'],
      },
      {
        destination: '/dev/shm',
        type: 'tmpfs',
        source: 'shm',
        options: ['nosuid', 'noexec', 'nodev', 'mode=1777', 'size=65536k'],
      },
      { destination: '/sys', type: 'sysfs', source: 'sysfs', options: ['nosuid', 'noexec', 'nodev', 'ro'] },
      {
        destination: '/tmp',
        type: 'tmpfs',
        source: 'tmpfs',
        options: ['nosuid', 'nodev', 'mode=1777', `size=${spec.tmpMiB}m`],
      },
      ...(spec.binds ?? []).map((b) => ({
        destination: b.destination,
        type: 'bind',
        source: b.source,
        options: ['rbind', 'ro', 'nosuid', 'nodev', 'noexec'],
      })),
    ],
    linux: {
      // No network namespace: the host's, like a Pod with hostNetwork.
      namespaces: [{ type: 'pid' }, { type: 'ipc' }, { type: 'uts' }, { type: 'mount' }],
      resources: { devices: [{ allow: false, access: 'rwm' }] },
      maskedPaths: ['/proc/kcore', '/proc/keys', '/proc/timer_list', '/proc/sched_debug', '/sys/firmware'],
      readonlyPaths: ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'],
    },
  };
}

function statusIds(status: string, field: string): number[] {
  const line = new RegExp(`^${field}:\\s+(.*)$`, 'm').exec(status)?.[1] ?? '';
  return line.split(/\s+/).filter(Boolean).map(Number);
}

/** Writes the bundle's config.json and starts `runc run` in the foreground (its stdio is the container's). */
export async function startRuncContainer(spec: RuncContainerSpec): Promise<RuncContainer> {
  await writeFile(join(spec.bundle, 'config.json'), JSON.stringify(runtimeConfig(spec), null, 2));
  await mkdir(spec.stateDir, { recursive: true });
  const runc = (args: readonly string[]) => ['--root', spec.stateDir, ...args];
  const child = spawn('runc', runc(['run', '--bundle', spec.bundle, spec.id]), {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exit = once(child, 'exit') as Promise<[number | null, string | null]>;
  let removed = false;
  return {
    child,
    output: () => out,
    async processes() {
      const { stdout } = await run('runc', runc(['ps', '--format', 'json', spec.id]));
      const pids = JSON.parse(stdout) as number[];
      return Promise.all(
        pids.map(async (pid) => {
          const status = await readFile(`/proc/${pid}/status`, 'utf8');
          const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter(Boolean);
          return {
            pid,
            cmdline,
            uids: statusIds(status, 'Uid'),
            gids: statusIds(status, 'Gid'),
            capEff: /^CapEff:\s+(\S+)$/m.exec(status)?.[1] ?? '',
          };
        }),
      );
    },
    async exec(user, args) {
      try {
        const { stdout, stderr } = await run('runc', runc(['exec', '--user', user, spec.id, ...args]));
        return { code: 0, stdout, stderr };
      } catch (err) {
        const e = err as { code?: number; stdout?: string; stderr?: string };
        return {
          code: typeof e.code === 'number' ? e.code : -1,
          stdout: e.stdout ?? '',
          stderr: e.stderr ?? '',
        };
      }
    },
    async kill(signal) {
      await run('runc', runc(['kill', spec.id, signal]));
    },
    async exited() {
      return (await exit)[0];
    },
    async remove() {
      if (removed) return;
      removed = true;
      if (child.exitCode === null && child.signalCode === null) {
        await run('runc', runc(['kill', spec.id, 'KILL'])).catch(() => undefined);
        await exit;
      }
      await run('runc', runc(['delete', '--force', spec.id])).catch(() => undefined);
    },
  };
}
