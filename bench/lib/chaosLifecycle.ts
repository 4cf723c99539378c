// `make chaos`'s lifecycle phase: the lifecycle model (bench/lifecycle/)
// on a local stack of its own, long, with the chaos run's seed.
import { join } from 'node:path';
import { startLocalStack } from '../../dev/stack.ts';
import { runLifecycle, type LifecycleReport } from '../lifecycle/run.ts';

/** Options for {@link runChaosLifecycle}. */
export interface ChaosLifecycleOptions {
  readonly dir: string;
  readonly seed: number;
  readonly runs: number;
  readonly steps: number;
  readonly path: string | undefined;
  readonly settleMs: number;
  /** Which operations are drawn (see LifecycleOptions.commands). */
  readonly commands: 'all' | 'shared';
  readonly log: (line: string) => void;
}

/** The lifecycle phase's part of the chaos report. */
export type ChaosLifecycleResult =
  | ({ readonly passed: true } & LifecycleReport)
  | { readonly passed: false; readonly seed: number; readonly failure: string };

/**
 * Starts a local stack in `dir`, runs the lifecycle model and stops the
 * stack. Never throws for a broken invariant: that is a `passed: false`
 * result carrying fast-check's report (seed, replay path, steps, what broke).
 */
export async function runChaosLifecycle(o: ChaosLifecycleOptions): Promise<ChaosLifecycleResult> {
  o.log(`lifecycle model: ${o.runs} runs × ${o.steps} ${o.commands} operations, seed ${o.seed}`);
  const stack = await startLocalStack({ dir: join(o.dir, 'lifecycle-stack') });
  try {
    const report = await runLifecycle({
      env: {
        kubeconfig: stack.kubeconfig,
        awsEndpoint: stack.emulator.endpoint,
        dir: join(o.dir, 'lifecycle'),
      },
      seed: o.seed,
      runs: o.runs,
      steps: o.steps,
      settleMs: o.settleMs,
      commands: o.commands,
      ...(o.path !== undefined ? { path: o.path } : {}),
      log: o.log,
    });
    return { passed: true, ...report };
  } catch (err) {
    return { passed: false, seed: o.seed, failure: err instanceof Error ? err.message : String(err) };
  } finally {
    await stack.stop();
  }
}
