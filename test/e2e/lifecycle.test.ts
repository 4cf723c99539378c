// The lifecycle model (bench/lifecycle/): sequences of what users, AWS
// and outages do to objects over their life — create, change mutable and
// identity fields, delete with either policy, two objects claiming one
// record, instance or Secret, hand-made records, Secrets and EndpointSlices,
// adoption through externalName, the hosted zone recreated, AWS not
// answering, the operator killed — on the real apiserver and moto with
// `skylift run` as a process; MyIngressGroups and their members (created, moved, deleted with and
// without members), Gateways and HTTPRoutes among them. After every step: nothing made by hand is
// changed, no two objects are Ready on one thing, nothing leaks, Ready=True
// only where AWS matches, and every object ends Ready, refused with a message,
// or deleted within a deadline.
//
// The seed is fixed, so CI is repeatable (as the fuzz test's), and printed.
// Explore: SKYLIFT_LIFECYCLE_SEED=random (or a number); replay a failure with its
// seed and SKYLIFT_LIFECYCLE_PATH=<path> for just that run; widen with
// SKYLIFT_LIFECYCLE_RUNS, SKYLIFT_LIFECYCLE_STEPS. `make chaos` runs a longer one with a random seed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlane } from '../../dev/controlplane.ts';
import { randomSeed } from '../../bench/lib/chaosRandom.ts';
import { runLifecycle } from '../../bench/lifecycle/run.ts';
import { scratchDir } from '../support/scratch.ts';
import { stackInfo } from '../support/stack.ts';

const env = (name: string): number | undefined =>
  process.env[name] !== undefined ? Number(process.env[name]) : undefined;

/** The seed `make test` uses; runs with it passed on main (2 × 16 and 2 × 30 operations). */
const defaultSeed = 14;
/**
 * The seed of the shared load balancers' run (MyIngressGroups, Gateways): 1 × 18 operations, 20–45 s.
 * It found a group rule keeping the tag of the member it was first made for (fixed).
 */
const defaultSharedSeed = 4;

// A control plane of its own (the shared moto): MyIngressGroups and GatewayClasses are
// cluster-scoped, and the run installs the Gateway API's CRDs; no other test's operator may serve
// this run's groups, nor this run's operator another test's.
let cp: ControlPlane;
beforeAll(async () => {
  cp = await startControlPlane({ dir: await scratchDir('lifecycle-cp'), controllerManager: true });
});
afterAll(async () => {
  await cp.stop();
});

/** One lifecycle model run of the test: which operations, and its defaults. */
interface LifecycleCase {
  readonly what: string;
  readonly commands: 'all' | 'shared';
  readonly seed: number;
  readonly runs: number;
  readonly steps: number;
}

const cases: LifecycleCase[] = [
  {
    what: 'random sequences of user, AWS and operator events keep every invariant',
    commands: 'all',
    seed: defaultSeed,
    runs: 2,
    steps: 16,
  },
  {
    what: 'random sequences of MyIngressGroup, member, Gateway and HTTPRoute operations, with the operator killed, keep every invariant',
    commands: 'shared',
    seed: defaultSharedSeed,
    runs: 1,
    steps: 18,
  },
];

describe('lifecycle model', () => {
  it.each(cases)('$what', { timeout: 900_000 }, async (c) => {
    const seed =
      process.env.SKYLIFT_LIFECYCLE_SEED === 'random'
        ? randomSeed()
        : (env('SKYLIFT_LIFECYCLE_SEED') ?? c.seed);
    const runs = env('SKYLIFT_LIFECYCLE_RUNS') ?? c.runs;
    const steps = env('SKYLIFT_LIFECYCLE_STEPS') ?? c.steps;
    const path = process.env.SKYLIFT_LIFECYCLE_PATH;
    console.log(
      `lifecycle model (${c.commands} operations): seed ${seed} (SKYLIFT_LIFECYCLE_SEED=${seed} replays it), ${runs} runs × ${steps} steps`,
    );
    const info = stackInfo();
    const report = await runLifecycle({
      env: {
        kubeconfig: cp.kubeconfigPath('admin'),
        awsEndpoint: info.awsEndpoint,
        dir: await scratchDir('lifecycle'),
      },
      seed,
      runs,
      steps,
      commands: c.commands,
      ...(path !== undefined ? { path } : {}),
      log: (line) => console.log(line),
    });
    console.log(JSON.stringify(report));
    // The runs really happened: most drawn operations met their preconditions and were carried out.
    expect(report.executed).toHaveLength(runs);
    for (const n of report.executed) expect(n).toBeGreaterThanOrEqual(Math.floor(steps / 2));
  });
});
