import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startOnFreePorts } from '../../dev/freePortServer.ts';
import { ManagedProcess } from '../../dev/process.ts';

const dir = await mkdtemp(join(tmpdir(), 'skylift-freeport-'));
const node = (code: string, logFile: string): Promise<ManagedProcess> =>
  ManagedProcess.start({ name: 'server', command: process.execPath, args: ['-e', code], logFile });

describe('startOnFreePorts', () => {
  it('starts a server that exits (its port taken meanwhile) again on other ports', async () => {
    const tries: number[][] = [];
    const started = await startOnFreePorts({
      name: 'server',
      ports: 2,
      start: (ports) => {
        tries.push([...ports]);
        // The first try exits at once, as a server whose port was taken does.
        return tries.length === 1
          ? node('process.exit(3)', join(dir, 'first.log'))
          : node('setInterval(() => {}, 1000)', join(dir, 'second.log'));
      },
      ready: () => Promise.resolve(tries.length > 1),
      describe: () => 'server up',
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    expect(tries).toHaveLength(2);
    expect(tries[1]).not.toEqual(tries[0]);
    expect(started.ports).toEqual(tries[1]);
    expect(started.process.exitStatus).toBeUndefined();
    await started.process.stop(2000);
  });

  it('gives up after three exits, and at once on a server that never answers, stopping it', async () => {
    let starts = 0;
    await expect(
      startOnFreePorts({
        name: 'crasher',
        ports: 1,
        start: () => {
          starts++;
          return node('console.log("bad flag"); process.exit(2)', join(dir, `crash-${starts}.log`));
        },
        ready: () => Promise.resolve(false),
        describe: () => 'crasher up',
        timeoutMs: 10_000,
        intervalMs: 20,
      }),
    ).rejects.toThrow(/crasher did not start: crasher exited \(code 2\)/);
    expect(starts).toBe(3);

    let silent: ManagedProcess | undefined;
    let silentStarts = 0;
    await expect(
      startOnFreePorts({
        name: 'silent',
        ports: 1,
        start: async () => {
          silentStarts++;
          silent = await node('setInterval(() => {}, 1000)', join(dir, 'silent.log'));
          return silent;
        },
        ready: () => Promise.reject(new Error('connection refused')),
        describe: () => 'silent up',
        timeoutMs: 300,
        intervalMs: 20,
      }),
    ).rejects.toThrow(/silent did not start: timed out after 300 ms waiting for silent up/);
    expect(silentStarts).toBe(1);
    expect(silent?.exitStatus).toBeDefined();
  });
});
