import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reapStaleProcesses } from '../../dev/reaper.ts';

describe('reapStaleProcesses', () => {
  it('kills a recorded process whose command still matches, and leaves others alone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'skylift-reaper-'));
    const orphan = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    await once(orphan, 'spawn');
    const exited = once(orphan, 'exit');
    await writeFile(join(dir, 'orphan.pid'), `${orphan.pid} 999999999 ${process.execPath}\n`);
    // Owned by a live process (this one): a run in progress, left alone.
    await writeFile(join(dir, 'live-owner.pid'), `${orphan.pid} ${process.pid} ${process.execPath}\n`);
    // A pid file whose pid now runs something else (pid reuse) must not be killed.
    await writeFile(join(dir, 'reused.pid'), `${process.pid} 999999999 /usr/bin/not-this-command\n`);
    await writeFile(join(dir, 'garbage.pid'), 'nonsense\n');

    expect(await reapStaleProcesses(dir)).toBe(1);

    const [, signal] = (await exited) as [number | null, string | null];
    expect(signal).toBe('SIGKILL');
    expect(await readdir(dir)).toEqual(['live-owner.pid']);
    expect(await reapStaleProcesses(join(dir, 'missing'))).toBe(0);
  });
});
