// Vitest global setup for integration and end-to-end tests: starts one local
// stack (etcd + kube-apiserver + kube-controller-manager + moto) per test run
// and hands its coordinates to the test files through `inject('stack')`.
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { repoRoot } from '../../src/dev/paths.ts';
import { reapStaleProcesses } from '../../src/dev/reaper.ts';
import { startLocalStack, type LocalStack } from '../../src/dev/stack.ts';
import type { StackInfo } from './stackInfo.ts';

const runsDir = join(repoRoot, '.skylift', 'test-runs');
const keepRuns = 5;

let stack: LocalStack | undefined;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await mkdir(runsDir, { recursive: true });
  await reapStaleProcesses(runsDir);
  await pruneOldRuns();
  const dir = join(runsDir, new Date().toISOString().replace(/[:.]/g, '-'));
  const started = Date.now();
  stack = await startLocalStack({ dir, controllerManager: true });
  const cp = stack.controlPlane;
  const info: StackInfo = {
    dir,
    server: cp.server,
    caPem: cp.caPem,
    adminToken: cp.identities.admin.token,
    operatorToken: cp.identities.operator.token,
    operatorUser: cp.identities.operator.user,
    operatorGroup: cp.identities.operator.groups[0] ?? '',
    adminKubeconfig: cp.kubeconfigPath('admin'),
    operatorKubeconfig: cp.kubeconfigPath('operator'),
    awsEndpoint: stack.emulator.endpoint,
    logDir: cp.logDir,
  };
  project.provide('stack', info);
  process.stdout.write(
    `[skylift] local stack up in ${Date.now() - started} ms: kube-apiserver ${cp.server}, moto ${stack.emulator.endpoint}; logs in ${dir}\n`,
  );
  return async () => {
    await stack?.stop();
    stack = undefined;
  };
}

/** Logs of earlier runs are kept for post-mortems; only the newest few. */
async function pruneOldRuns(): Promise<void> {
  const entries = (await readdir(runsDir)).sort();
  for (const old of entries.slice(0, Math.max(0, entries.length - (keepRuns - 1)))) {
    await rm(join(runsDir, old), { recursive: true, force: true });
  }
}
