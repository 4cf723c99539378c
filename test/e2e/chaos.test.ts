// `make chaos` in small: the same run (bench/lib/chaosRun.ts) with 24
// objects in two namespaces, each served by its own TeamPolicy whose role is in
// its own account, 5 operator SIGKILLs, one kube-apiserver and one etcd
// restart, AWS faults and one leader SIGKILL, on its own local stack (it
// restarts the apiserver, so it cannot share the suite's). The seed is random
// and printed; set SKYLIFT_CHAOS_SEED to replay one.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { randomSeed } from '../../bench/lib/chaosRandom.ts';
import { runChaos } from '../../bench/lib/chaosRun.ts';
import { emulatorAccountId } from '../../dev/emulator.ts';
import { chaosSummary } from '../../bench/lib/chaosSummary.ts';
import { chaosTeamAccounts } from '../../bench/lib/chaosRun.ts';
import { formatResults, invariantNames, type InvariantName } from '../../bench/lib/invariants.ts';
import { scratchDir } from '../support/scratch.ts';

describe('chaos', () => {
  it('24 objects in two accounts survive operator and leader SIGKILLs, apiserver and etcd restarts and AWS faults; the deleted half leaves nothing, and nothing lands in the wrong account', async () => {
    const seed =
      process.env.SKYLIFT_CHAOS_SEED !== undefined ? Number(process.env.SKYLIFT_CHAOS_SEED) : randomSeed();
    const dir = await scratchDir('chaos');
    const lines: string[] = [];
    const report = await runChaos({
      dir,
      accounts: 2,
      resources: 24,
      kills: 5,
      leaderKills: 1,
      apiServerRestarts: 1,
      etcdRestarts: 1,
      seed,
      faults: true,
      killDelayMs: [300, 1500],
      // Deadlines, not durations: an AssumeRole that still fails after the SDK's retries (throttled,
      // a 5xx burst) holds its namespace's objects for the operator's AssumeRoleFailed retry (60 s).
      convergeTimeoutMs: 120_000,
      deleteTimeoutMs: 90_000,
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

    // Per account: each team account holds its own namespace's resources and nothing else; the
    // operator's own account holds nothing Skylift owns (every namespace has a role).
    expect(report.settings.accounts).toBe(2);
    expect(report.workload.namespaces).toEqual(['chaos-1', 'chaos-2']);
    expect(report.accounts.map((a) => [a.account, a.namespaces])).toEqual([
      [chaosTeamAccounts[0], ['chaos-1']],
      [chaosTeamAccounts[1], ['chaos-2']],
      [emulatorAccountId, []],
    ]);
    const checked = (results: readonly { name: InvariantName; checked: number }[], name: InvariantName) =>
      results.find((r) => r.name === name)?.checked;
    for (const a of report.accounts) {
      for (const [when, results] of [
        ['after converging', a.invariants.afterConverge],
        ['after deleting', a.invariants.afterDelete],
      ] as const) {
        expect(results.map((r) => r.name)).toEqual([...invariantNames]);
        const broken = results.filter((r) => !r.ok);
        expect(
          broken,
          `account ${a.account} ${when}:\n${formatResults(results).join('\n')}\n${context}`,
        ).toEqual([]);
      }
      expect(a.passed).toBe(true);
      const resources = checked(a.invariants.afterConverge, 'in-own-account') ?? -1;
      if (a.namespaces.length === 0) {
        expect(resources, `the operator's own account ${a.account}`).toBe(0);
        expect(checked(a.invariants.afterConverge, 'every-cr-ready')).toBe(0);
      } else {
        expect(a.teamPolicy).toBeDefined();
        expect(a.roleArn).toMatch(new RegExp(`^arn:aws:iam::${a.account}:role/`));
        // 12 objects: at least a load balancer, a target group, a DB instance and records.
        expect(resources, `account ${a.account}`).toBeGreaterThanOrEqual(12);
        expect(checked(a.invariants.afterConverge, 'every-cr-ready')).toBe(12);
      }
    }
    expect(report.awsCalls.byOperation['sts:AssumeRole'] ?? 0, context).toBeGreaterThan(0);
    // Cluster-scoped, so the run deletes them.
    expect(report.teamPolicies?.names).toHaveLength(2);
    expect(report.teamPolicies?.leftAfterRun).toBe(0);
    expect(report.passed).toBe(true);
  });
});
