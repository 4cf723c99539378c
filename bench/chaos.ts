// `make chaos`: what Skylift survives. See docs/benchmarks.md#chaos.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { repoRoot } from '../dev/paths.ts';
import { reapStaleProcesses } from '../dev/reaper.ts';
import { chaosUsage, parseChaosArgs } from './chaosArgs.ts';
import { randomSeed } from './lib/chaosRandom.ts';
import { runChaosLifecycle, type ChaosLifecycleResult } from './lib/chaosLifecycle.ts';
import { runChaos } from './lib/chaosRun.ts';
import { chaosSummary } from './lib/chaosSummary.ts';

async function main(): Promise<number> {
  let args;
  try {
    args = parseChaosArgs(process.argv.slice(2), join(repoRoot, 'bench', 'results'));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n\n${chaosUsage}`);
    return 2;
  }
  if (args === 'help') {
    process.stdout.write(chaosUsage);
    return 0;
  }
  const seed = args.seed ?? randomSeed();
  const base = join(repoRoot, '.skylift', 'chaos');
  await mkdir(base, { recursive: true });
  const reaped = await reapStaleProcesses(base);
  if (reaped > 0) console.log(`Stopped ${reaped} processes left over from an earlier chaos run.`);
  const stamp = new Date()
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/:/g, '-');
  const dir = join(base, stamp);
  console.log(`Chaos run with seed ${seed} (replay with --seed ${seed}); logs in ${dir}`);
  const storm = args.lifecycleOnly
    ? undefined
    : await runChaos({
        dir,
        accounts: args.accounts,
        resources: args.resources,
        kills: args.kills,
        leaderKills: args.leaderKills,
        apiServerRestarts: args.apiServerRestarts,
        etcdRestarts: args.etcdRestarts,
        seed,
        faults: args.faults,
        killDelayMs: args.killDelayMs,
        convergeTimeoutMs: args.convergeTimeoutMs,
        deleteTimeoutMs: args.deleteTimeoutMs,
        deleteStormMs: args.deleteStormMs,
        faultedConvergeMs: args.faultedConvergeMs,
        log: (line) => {
          console.log(line);
        },
      });
  let lifecycle: ChaosLifecycleResult | undefined;
  if (args.lifecycleRuns > 0) {
    lifecycle = await runChaosLifecycle({
      dir,
      seed,
      runs: args.lifecycleRuns,
      steps: args.lifecycleSteps,
      path: args.lifecyclePath,
      settleMs: args.lifecycleSettleMs,
      commands: args.lifecycleCommands,
      log: (line) => {
        console.log(line);
      },
    });
  }
  const report = { ...(storm ?? { seed }), ...(lifecycle !== undefined ? { lifecycle } : {}) };
  await mkdir(args.outDir, { recursive: true });
  const file = join(args.outDir, `chaos-${stamp}.json`);
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log('');
  if (storm !== undefined) for (const line of chaosSummary(storm)) console.log(line);
  if (lifecycle !== undefined)
    console.log(
      lifecycle.passed
        ? `Lifecycle model: PASSED — ${lifecycle.runs} runs, ${lifecycle.executed.join('+')} operations, step settle median ${lifecycle.settleMedianMs} ms, max ${lifecycle.settleMaxMs} ms`
        : `Lifecycle model: FAILED (replay with --seed ${lifecycle.seed} --lifecycle-only)\n${lifecycle.failure}`,
    );
  console.log(`Report: ${file}`);
  return (storm?.passed ?? true) && (lifecycle?.passed ?? true) ? 0 : 1;
}

main().then(
  (code) => {
    process.exit(code);
  },
  (err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  },
);
