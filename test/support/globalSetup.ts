// Vitest global setup for integration and end-to-end tests: starts one local
// stack (etcd + kube-apiserver + kube-controller-manager + moto) per test run
// and hands its coordinates to the test files through `inject('stack')`.
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { repoRoot } from '../../dev/paths.ts';
import { startLocalStack, type LocalStack } from '../../dev/stack.ts';
import { newTestRun, stackInfoOf } from './testRuns.ts';

const runsDir = join(repoRoot, '.skylift', 'test-runs');
const keepRuns = 5;

let stack: LocalStack | undefined;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await newTestRun(runsDir, keepRuns);
  const started = Date.now();
  stack = await startLocalStack({ dir, controllerManager: true });
  const cp = stack.controlPlane;
  const info = stackInfoOf(dir, cp, stack.emulator.endpoint);
  project.provide('stack', info);
  process.stdout.write(
    `[skylift] local stack up in ${Date.now() - started} ms: kube-apiserver ${cp.server}, moto ${stack.emulator.endpoint}; logs in ${dir}\n`,
  );
  return async () => {
    await stack?.stop();
    stack = undefined;
  };
}
