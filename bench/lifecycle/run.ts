// A lifecycle model run: `runs` sequences of `steps` operations drawn with
// fast-check from `seed`, each on a fresh namespace, hosted zone and operator.
// Shared by the e2e test (short) and `make chaos` (long).
import fc from 'fast-check';
import { waitFor } from '../../dev/wait.ts';
import { lifecycleCommands, sharedLoadBalancerCommands } from './commands.ts';
import { newModel, type LifecycleModel } from './model.ts';
import { LifecycleRunner } from './runner.ts';
import { LifecycleWorld, type LifecycleEnv } from './world.ts';

/** Options for {@link runLifecycle}. */
export interface LifecycleOptions {
  readonly env: LifecycleEnv;
  readonly seed: number;
  /** fast-check's replay path of a failed run (printed with its failure), to replay only that run. */
  readonly path?: string;
  readonly runs: number;
  readonly steps: number;
  /**
   * Which operations are drawn: `all` (default), or `shared` — only MyIngressGroups, their members,
   * Gateways and HTTPRoutes, with operator restarts and deletions.
   */
  readonly commands?: 'all' | 'shared';
  /** How long each step may take to settle (default 60 s). */
  readonly settleMs?: number;
  readonly log?: (line: string) => void;
}

/** What a lifecycle run did. Throws (with seed, path and steps) instead when an invariant broke. */
export interface LifecycleReport {
  readonly seed: number;
  readonly runs: number;
  readonly stepsPerRun: number;
  /** Operations carried out per run (a drawn operation whose precondition does not hold is skipped). */
  readonly executed: number[];
  /** How many times each operation ran, by its description's first words. */
  readonly operations: Record<string, number>;
  /** Median and worst time for a step to settle, ms. */
  readonly settleMedianMs: number;
  readonly settleMaxMs: number;
  readonly durationMs: number;
}

/**
 * Runs the lifecycle model. Resolves with a report when every run held every
 * invariant; rejects with fast-check's report (seed, replay path, the
 * failing sequence and what broke) otherwise. Cleans up each run's
 * namespace, zone and operator either way.
 */
export async function runLifecycle(o: LifecycleOptions): Promise<LifecycleReport> {
  const started = Date.now();
  const executed: number[] = [];
  const operations: Record<string, number> = {};
  const settleTimes: number[] = [];
  let runNo = 0;
  const property = fc.asyncProperty(
    fc.array(fc.oneof(...(o.commands === 'shared' ? sharedLoadBalancerCommands() : lifecycleCommands())), {
      minLength: o.steps,
      maxLength: o.steps,
    }),
    async (cmds) => {
      const label = `r${++runNo}`;
      o.log?.(`lifecycle run ${label}: ${o.steps} operations`);
      const world = await LifecycleWorld.open(o.env, label);
      const runner = new LifecycleRunner(world, o.settleMs);
      let model: LifecycleModel | undefined;
      try {
        await fc.asyncModelRun(() => {
          model = newModel();
          return { model, real: runner };
        }, cmds);
        if (model !== undefined) await deleteEverything(model, runner);
      } finally {
        const problems = await world.close(async (remaining) => {
          await waitFor(async () => ((await remaining()) === 0 ? true : undefined), {
            timeoutMs: 60_000,
            intervalMs: 500,
            description: 'every object of the run to be deleted',
          });
        });
        for (const p of problems) o.log?.(`${label}: ${p}`);
        const steps = model?.steps ?? [];
        executed.push(steps.length);
        for (const s of steps) {
          const key = s.replace(/\s*[(→].*$/, '').replace(/\d+(\.\d+)*/g, 'N');
          operations[key] = (operations[key] ?? 0) + 1;
        }
        settleTimes.push(...runner.settleTimes);
        o.log?.(`lifecycle run ${label}: ${steps.length} steps done`);
      }
    },
  );
  await fc.assert(property, {
    seed: o.seed,
    numRuns: o.runs,
    endOnFailure: true,
    // What broke (the LifecycleViolation: the invariant, the steps, the state) in the report's own
    // message, not only as its cause, which `make chaos` and its JSON report would not show.
    includeErrorInReport: true,
    ...(o.path !== undefined ? { path: o.path } : {}),
  });
  const sorted = [...settleTimes].sort((a, b) => a - b);
  return {
    seed: o.seed,
    runs: o.runs,
    stepsPerRun: o.steps,
    executed,
    operations,
    settleMedianMs: sorted[Math.floor(sorted.length / 2)] ?? 0,
    settleMaxMs: sorted.at(-1) ?? 0,
    durationMs: Date.now() - started,
  };
}

/** The last step of every run: delete what is left; everything must go, leaving only Orphan resources. */
async function deleteEverything(m: LifecycleModel, r: LifecycleRunner): Promise<void> {
  for (const obj of [...m.live.values()]) await r.deleteObject(m, obj);
  await r.settle(m, 'delete every object left');
}
