// Resource use of a process from Linux's /proc: peak resident memory and CPU time.
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';

/** Memory and CPU of one process at one moment. */
export interface ProcSample {
  /** Peak resident set size so far (VmHWM), bytes. */
  readonly peakRssBytes: number;
  /** Current resident set size (VmRSS), bytes. */
  readonly rssBytes: number;
  /** User + system CPU time so far, seconds. */
  readonly cpuSeconds: number;
}

/** Reads a `kB` field such as `VmHWM:  123456 kB` from /proc/<pid>/status text, in bytes. Throws if absent. Pure. */
export function statusField(statusText: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB$`, 'm').exec(statusText);
  if (m === null) throw new Error(`/proc status has no ${field} field`);
  return Number(m[1]) * 1024;
}

/**
 * utime + stime, in clock ticks, from /proc/<pid>/stat text. The command
 * name (field 2) may contain spaces and parentheses, so fields are counted
 * from the last `)`. Throws on malformed text. Pure.
 */
export function cpuTicks(statText: string): number {
  const end = statText.lastIndexOf(')');
  if (end < 0) throw new Error('malformed /proc stat: no command name');
  // After ") ": field 3 (state) is index 0, so utime (14) is index 11 and stime (15) index 12.
  const fields = statText
    .slice(end + 2)
    .trim()
    .split(/\s+/);
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime))
    throw new Error('malformed /proc stat: no utime/stime');
  return utime + stime;
}

let ticksPerSecond: number | undefined;

/** The kernel's clock ticks per second (`getconf CLK_TCK`, 100 on almost every Linux), cached. */
export function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** Samples a live process's memory and CPU from /proc (Linux only). Throws if the process is gone. */
export async function sampleProcess(pid: number): Promise<ProcSample> {
  const [status, stat] = await Promise.all([
    readFile(`/proc/${pid}/status`, 'utf8'),
    readFile(`/proc/${pid}/stat`, 'utf8'),
  ]);
  return {
    peakRssBytes: statusField(status, 'VmHWM'),
    rssBytes: statusField(status, 'VmRSS'),
    cpuSeconds: cpuTicks(stat) / clockTicksPerSecond(),
  };
}
