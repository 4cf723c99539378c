import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Kills processes left behind by an earlier run that was itself killed
 * (SIGKILL, OOM, CI timeout) before it could stop its children. Looks for
 * `*.pid` files (written by ManagedProcess) under `dir`; skips those whose
 * owner process is still alive (a run in progress); kills a recorded
 * pid only while its command line still contains the recorded command (as
 * argv[0], or argv[1] for scripts such as moto_server), so a recycled pid is
 * never hit. Returns how many processes it killed.
 * Idempotent; never throws for missing files or dead processes.
 */
export async function reapStaleProcesses(dir: string): Promise<number> {
  let killed = 0;
  for (const file of await pidFiles(dir)) {
    const [pidText, ownerText, command] = (await readFile(file, 'utf8').catch(() => '')).trim().split(' ', 3);
    const pid = Number(pidText);
    const owner = Number(ownerText);
    // A live owner is another run in progress (e.g. a parallel test project): not ours to reap.
    if (Number.isInteger(owner) && owner > 1 && alive(owner)) continue;
    if (
      Number.isInteger(pid) &&
      pid > 1 &&
      command !== undefined &&
      (await argvOf(pid))?.includes(command) === true
    ) {
      try {
        process.kill(pid, 'SIGKILL');
        killed++;
      } catch {
        // already gone
      }
    }
    await rm(file, { force: true });
  }
  return killed;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function argvOf(pid: number): Promise<string[] | undefined> {
  try {
    return (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').slice(0, 2);
  } catch {
    return undefined;
  }
}

async function pidFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile() && e.name.endsWith('.pid')).map((e) => join(e.parentPath, e.name));
}
