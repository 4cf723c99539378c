// Which node cluster on this host owns which addresses. Every node cluster
// (`skylift dev --node`, the node tests, a helper's run in a worktree) takes a
// slot 0..63; the slot picks its network namespace, veth, Pod and Service
// CIDRs and cgroup root, so that two clusters on one host never share one.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Where slot claims live: tmpfs, so a reboot frees every slot. */
export const defaultSlotDir = '/run/skylift/node-slots';

/** Slots 0..63: the transfer nets 10.244.255.4N/30 fit in one /24. */
export const slotCount = 64;

/** The addresses and names of one slot. */
export interface NodeSlotAddresses {
  readonly index: number;
  /** Network namespace under /run/netns. */
  readonly netns: string;
  /** Host end of the veth pair (≤ 15 characters). */
  readonly hostVeth: string;
  /** The host as the node and its Pods see it: kube-apiserver advertises it, moto listens on it. */
  readonly hostIp: string;
  /** The node's end of the veth pair: its InternalIP. */
  readonly nodeIp: string;
  readonly podCidr: string;
  readonly serviceCidr: string;
  /** The kubelet's --cgroup-root. */
  readonly cgroupRoot: string;
}

/** The addresses of slot `index`. Pure; throws outside 0..63. */
export function nodeSlotAddresses(index: number): NodeSlotAddresses {
  if (!Number.isInteger(index) || index < 0 || index >= slotCount)
    throw new Error(`node slot must be an integer 0..${slotCount - 1}, got ${index}`);
  return {
    index,
    netns: `skylift-${index}`,
    hostVeth: `skylift-h${index}`,
    hostIp: `10.244.255.${4 * index + 1}`,
    nodeIp: `10.244.255.${4 * index + 2}`,
    podCidr: `10.244.${index}.0/24`,
    serviceCidr: `10.96.${index}.0/24`,
    cgroupRoot: `/skylift-${index}`,
  };
}

/** A claimed slot. */
export interface NodeSlot {
  readonly addresses: NodeSlotAddresses;
  /**
   * The run directory of an earlier owner that died without releasing the
   * slot (SIGKILL): its node's leftovers (shims, mounts) are under it and
   * must be swept before the slot is used. Undefined for a free slot.
   */
  readonly staleDir: string | undefined;
  /** Gives the slot up. Idempotent; only removes the claim while it is still this process's. */
  release(): Promise<void>;
}

interface Claim {
  readonly pid: number;
  /** The owner's start time (field 22 of /proc/<pid>/stat): a reused pid is not the owner. */
  readonly started: string;
  readonly dir: string;
}

/**
 * Claims the lowest free slot for a node whose run directory is `dir`: a
 * slot is free when unclaimed, or when its owner process is gone (then
 * `staleDir` says where that owner ran). The claim is a file created with
 * O_EXCL, so two processes never get the same slot. Throws when all 64 are
 * held by live processes.
 */
export async function claimNodeSlot(dir: string, slotDir: string = defaultSlotDir): Promise<NodeSlot> {
  await mkdir(slotDir, { recursive: true });
  const me: Claim = { pid: process.pid, started: await startTimeOf(process.pid), dir };
  for (let index = 0; index < slotCount; index++) {
    const file = join(slotDir, `${index}.json`);
    let staleDir: string | undefined;
    const existing = await readClaim(file);
    if (existing !== undefined) {
      if (await isAlive(existing)) continue;
      // A half-written claim names no directory: there is nothing of its owner's to sweep.
      staleDir = existing.dir === '' ? undefined : existing.dir;
      // Two processes may both find it stale; the O_EXCL create below lets one win.
      await rm(file, { force: true });
    }
    try {
      await writeFile(file, JSON.stringify(me), { flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw err;
    }
    let released = false;
    return {
      addresses: nodeSlotAddresses(index),
      staleDir,
      async release() {
        if (released) return;
        released = true;
        const now = await readClaim(file);
        if (now?.pid === me.pid && now.started === me.started) await rm(file, { force: true });
      },
    };
  }
  throw new Error(
    `all ${slotCount} node slots in ${slotDir} are held by running processes; stop a node cluster first`,
  );
}

async function readClaim(file: string): Promise<Claim | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const c = JSON.parse(text) as Partial<Claim>;
    if (typeof c.pid === 'number' && typeof c.started === 'string' && typeof c.dir === 'string')
      return { pid: c.pid, started: c.started, dir: c.dir };
  } catch {
    // A half-written claim (its writer was killed mid-write): nobody owns it.
  }
  return { pid: 0, started: '', dir: '' };
}

async function isAlive(claim: Claim): Promise<boolean> {
  if (claim.pid <= 1) return false;
  return (await startTimeOf(claim.pid).catch(() => undefined)) === claim.started;
}

/** Field 22 of /proc/<pid>/stat (after the parenthesised command, which may hold spaces). */
async function startTimeOf(pid: number): Promise<string> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); field 22 is fields[19].
  const started = fields[19];
  if (started === undefined) throw new Error(`unreadable /proc/${pid}/stat`);
  return started;
}
