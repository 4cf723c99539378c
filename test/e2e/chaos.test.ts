// `make chaos` in small: the same run (bench/lib/chaosRun.ts) with 24
// objects, 5 operator SIGKILLs, one kube-apiserver and one etcd restart, AWS faults and
// one leader SIGKILL, on its own local stack (it restarts the apiserver, so
// it cannot share the suite's). The seed is random and printed; set
// SKYLIFT_CHAOS_SEED to replay one.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { randomSeed } from '../../bench/lib/chaosRandom.ts';
import { runChaos } from '../../bench/lib/chaosRun.ts';
import { chaosSummary } from '../../bench/lib/chaosSummary.ts';
import { formatResults, invariantNames } from '../../bench/lib/invariants.ts';
import { scratchDir } from '../support/scratch.ts';

describe('chaos', () => {
  it('24 objects survive operator and leader SIGKILLs, apiserver and etcd restarts and AWS faults; the deleted half leaves nothing', async () => {
    const seed =
      process.env.SKYLIFT_CHAOS_SEED !== undefined ? Number(process.env.SKYLIFT_CHAOS_SEED) : randomSeed();
    const dir = await scratchDir('chaos');
    const lines: string[] = [];
    const report = await runChaos({
      dir,
      resources: 24,
      kills: 5,
      leaderKills: 1,
      apiServerRestarts: 1,
      etcdRestarts: 1,
      seed,
      faults: true,
      killDelayMs: [300, 1500],
      convergeTimeoutMs: 75_000,
      deleteTimeoutMs: 60_000,
      deleteStormMs: 4000,
      faultedConvergeMs: 5000,
      log: (line) => lines.push(line),
    });
    await writeFile(join(dir, 'chaos-report.json'), `${JSON.stringify(report, null, 2)}\n`);
    const summary = chaosSummary(report).join('\n');
    console.log(`${summary}\nevents and report: ${dir}`);
    const context = `seed ${seed} (SKYLIFT_CHAOS_SEED=${seed} replays it); logs in ${dir}\n${summary}\nlast events:\n${lines.slice(-30).join('\n')}`;

    // The storm really happened.
    expect(report.counts, context).toMatchObject({
      operatorKills: 5,
      leaderKills: 1,
      takeovers: 1,
      apiServerRestarts: 1,
      etcdRestarts: 1,
    });
    expect(report.convergence.failovers[0]?.successor, context).not.toBe(
      report.convergence.failovers[0]?.killed,
    );
    expect(report.awsCalls.byOutcome.throttle ?? 0, context).toBeGreaterThan(0);
    expect(report.counts.fiveXxBursts, context).toBeGreaterThan(0);
    expect(report.deletion.requested, context).toBeGreaterThanOrEqual(12);

    // And every invariant held, before and after deleting half, over all objects.
    for (const [when, results] of [
      ['after converging', report.invariants.afterConverge],
      ['after deleting', report.invariants.afterDelete],
    ] as const) {
      expect(results.map((r) => r.name)).toEqual([...invariantNames]);
      const broken = results.filter((r) => !r.ok);
      expect(broken, `${when}:\n${formatResults(results).join('\n')}\n${context}`).toEqual([]);
    }
    expect(report.invariants.afterConverge[0]?.checked).toBe(24);
    expect(report.invariants.afterDelete[0]?.checked).toBe(24 - report.deletion.requested);
    expect(report.invariants.afterDelete[3]?.checked).toBe(report.deletion.requested);
    expect(report.passed).toBe(true);
  });
});
