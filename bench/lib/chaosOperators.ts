// The operator as one or two `skylift run` processes that a chaos run kills
// with SIGKILL and restarts, the way a kubelet restarts a crashed container.
// Each replica slot keeps its name across restarts (POD_NAME=chaos-<slot>, so
// the Lease holder `chaos-<slot>_<random>` tells which slot leads); a process
// that exits on its own (e.g. lost leadership) is restarted and reported.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { operatorNodeFlags } from '../../tools/nodeFlags.ts';
import { ManagedProcess } from '../../dev/process.ts';
import { repoRoot } from '../../dev/paths.ts';
import { emulatorEnv } from '../../dev/emulator.ts';
import { KubeApiError, type KubeClient } from '../../src/runtime/kube/client.ts';

/** Something the fleet did or saw, for the run's event log. */
export interface FleetEvent {
  readonly kind: 'start' | 'sigkill' | 'sigterm' | 'unexpected-exit';
  readonly slot: string;
  readonly detail: string;
}

/** Options for {@link OperatorFleet}. */
export interface FleetOptions {
  /** Log and pid files go here (`operator-<slot>.log`, one file per slot across restarts). */
  readonly dir: string;
  readonly kubeconfig: string;
  /** Where the operator sends AWS calls (the fault proxy). */
  readonly awsEndpoint: string;
  /** The namespaces the operators serve (`--namespaces`); the first one holds the Lease. */
  readonly namespaces: readonly string[];
  readonly clusterId: string;
  /** More `skylift run` flags. */
  readonly extraArgs?: readonly string[];
  readonly onEvent: (e: FleetEvent) => void;
}

interface Slot {
  readonly name: string;
  readonly leaderElect: boolean;
  process: ManagedProcess | undefined;
  starts: number;
  /** Set while the fleet itself stops or kills the process, so its exit is not "unexpected". */
  expectingExit: boolean;
  restartTimer: NodeJS.Timeout | undefined;
}

/** The Lease the replicas compete for. */
export const leaseName = 'skylift-leader';

/**
 * One operator without leader election (`single`) or two replicas with it
 * (`ha`), serving the same namespaces. Not safe for concurrent use by several
 * callers; `stopAll()` is idempotent.
 */
export class OperatorFleet {
  private readonly o: FleetOptions;
  private readonly slots = new Map<string, Slot>();
  private stopped = false;

  constructor(opts: FleetOptions) {
    this.o = opts;
  }

  /** Starts `solo` (no leader election) or slots `a` and `b` (leader election in the namespace). */
  async start(mode: 'single' | 'ha'): Promise<void> {
    this.stopped = false;
    const names = mode === 'single' ? ['solo'] : ['a', 'b'];
    for (const name of names) {
      const slot: Slot = {
        name,
        leaderElect: mode === 'ha',
        process: undefined,
        starts: 0,
        expectingExit: false,
        restartTimer: undefined,
      };
      this.slots.set(name, slot);
      await this.launch(slot);
    }
  }

  /** SIGKILLs the slot's process and waits for it to be gone; `restart` starts a new one at once. */
  async kill(slotName: string, restart: boolean): Promise<void> {
    const slot = this.slot(slotName);
    const proc = slot.process;
    if (proc === undefined) return;
    slot.expectingExit = true;
    proc.signal('SIGKILL');
    await proc.exited;
    this.o.onEvent({ kind: 'sigkill', slot: slot.name, detail: `pid ${String(proc.pid)}` });
    slot.process = undefined;
    slot.expectingExit = false;
    if (restart) await this.launch(slot);
  }

  /** Starts the slot's process again if it is not running. */
  async restart(slotName: string): Promise<void> {
    const slot = this.slot(slotName);
    if (slot.process === undefined) await this.launch(slot);
  }

  /** The Lease holder identity, or undefined when none (or no Lease yet). */
  async leaseHolder(client: KubeClient): Promise<string | undefined> {
    try {
      const lease = await client.get<{ spec?: { holderIdentity?: string | null } }>(
        `/apis/coordination.k8s.io/v1/namespaces/${this.leaseNamespace}/leases/${leaseName}`,
      );
      const holder = lease.spec?.holderIdentity ?? '';
      return holder === '' ? undefined : holder;
    } catch (err) {
      if (err instanceof KubeApiError && err.statusCode === 404) return undefined;
      throw err;
    }
  }

  /** SIGTERM every process (they release the Lease) and wait; no restarts after this. Idempotent. */
  async stopAll(): Promise<void> {
    this.stopped = true;
    for (const slot of this.slots.values()) {
      if (slot.restartTimer !== undefined) clearTimeout(slot.restartTimer);
      const proc = slot.process;
      if (proc === undefined) continue;
      slot.expectingExit = true;
      const exit = await proc.stop(10_000);
      this.o.onEvent({
        kind: 'sigterm',
        slot: slot.name,
        detail: `pid ${String(proc.pid)} exited ${exit.signal ?? `code ${String(exit.code)}`}`,
      });
      slot.process = undefined;
    }
    this.slots.clear();
  }

  /** Where the Lease is: the first namespace. */
  private get leaseNamespace(): string {
    const first = this.o.namespaces[0];
    if (first === undefined) throw new Error('operator fleet: no namespaces');
    return first;
  }

  private slot(name: string): Slot {
    const slot = this.slots.get(name);
    if (slot === undefined) throw new Error(`no operator replica ${name}`);
    return slot;
  }

  private async launch(slot: Slot): Promise<void> {
    slot.starts++;
    const logFile = join(this.o.dir, `operator-${slot.name}.log`);
    appendFileSync(
      logFile,
      `--- chaos: start #${slot.starts} of replica ${slot.name} at ${new Date().toISOString()}\n`,
    );
    const proc = await ManagedProcess.start({
      name: `skylift-${slot.name}`,
      command: process.execPath,
      args: [
        ...operatorNodeFlags,
        join(repoRoot, 'src/cli/main.ts'),
        'run',
        '--probe-address',
        '127.0.0.1:0',
        '--namespaces',
        this.o.namespaces.join(','),
        '--cluster-id',
        this.o.clusterId,
        '--leader-elect',
        String(slot.leaderElect),
        '--leader-election-namespace',
        this.leaseNamespace,
        '--shutdown-deadline',
        '5s',
        '--log-format',
        'json',
        ...(this.o.extraArgs ?? []),
      ],
      logFile,
      pidFile: join(this.o.dir, `operator-${slot.name}.pid`),
      env: {
        ...process.env,
        ...emulatorEnv(this.o.awsEndpoint),
        KUBECONFIG: this.o.kubeconfig,
        POD_NAME: `chaos-${slot.name}`,
      },
    });
    slot.process = proc;
    this.o.onEvent({
      kind: 'start',
      slot: slot.name,
      detail: `pid ${String(proc.pid)} (start #${slot.starts})`,
    });
    void proc.exited.then((exit) => {
      if (slot.process !== proc || slot.expectingExit || this.stopped) return;
      slot.process = undefined;
      this.o.onEvent({
        kind: 'unexpected-exit',
        slot: slot.name,
        detail: `pid ${String(proc.pid)} exited ${exit.signal ?? `code ${String(exit.code)}`}: ${proc.tail(3).replace(/\s+/g, ' ').slice(0, 400)}`,
      });
      // Restart after a second, as a kubelet would (with far less backoff).
      slot.restartTimer = setTimeout(() => {
        slot.restartTimer = undefined;
        if (this.stopped || slot.process !== undefined) return;
        this.launch(slot).catch((err: unknown) => {
          this.o.onEvent({
            kind: 'unexpected-exit',
            slot: slot.name,
            detail: `restart failed: ${err instanceof Error ? err.message : String(err)}`,
          });
        });
      }, 1000);
    });
  }
}

/** The slot a Lease holder identity (`chaos-<slot>_<hex>`) belongs to. Pure. */
export function slotOfHolder(holder: string | undefined): string | undefined {
  const m = holder === undefined ? null : /^chaos-([a-z]+)_/.exec(holder);
  return m?.[1];
}
