// Vitest global setup for the node tests (test/node/): starts one node cluster
// (control plane in node mode, a real node in its own network namespace, moto
// on the address Pods reach) per run and hands its coordinates to the test
// files through `inject('stack')` and `inject('node')`.
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { skyliftImage } from '../../src/dev/images.ts';
import { startNodeCluster, nodeImages, type NodeCluster } from '../../src/dev/nodeCluster.ts';
import { repoRoot } from '../../src/dev/paths.ts';
import { reapStaleProcesses } from '../../src/dev/reaper.ts';
import type { NodeInfo, StackInfo } from './stackInfo.ts';

const runsDir = join(repoRoot, '.skylift', 'node-runs');
const keepRuns = 3;

let cluster: NodeCluster | undefined;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await mkdir(runsDir, { recursive: true });
  await reapStaleProcesses(runsDir);
  await pruneOldRuns();
  // Short: unix socket paths below it must stay under 108 characters.
  const dir = join(runsDir, new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19));
  const started = Date.now();
  // The operator image `make image` built (make test builds it first): helm installs it.
  cluster = await startNodeCluster({
    dir,
    extraImages: [skyliftImage().archive],
    log: (line) => process.stdout.write(`[skylift node] ${line}\n`),
  });
  const cp = cluster.controlPlane;
  const stack: StackInfo = {
    dir,
    server: cp.server,
    caPem: cp.caPem,
    adminToken: cp.identities.admin.token,
    operatorToken: cp.identities.operator.token,
    operatorUser: cp.identities.operator.user,
    operatorGroup: cp.identities.operator.groups[0] ?? '',
    adminKubeconfig: cp.kubeconfigPath('admin'),
    operatorKubeconfig: cp.kubeconfigPath('operator'),
    awsEndpoint: cluster.emulator.endpoint,
    logDir: cp.logDir,
  };
  const node: NodeInfo = {
    nodeName: cluster.nodeName,
    containerdSocket: cluster.node.containerdSocket,
    helloImage: nodeImages.hello.name,
    operatorImage: skyliftImage().name,
    ...cluster.addresses,
  };
  project.provide('stack', stack);
  project.provide('node', node);
  process.stdout.write(
    `[skylift] node cluster up in ${Date.now() - started} ms (slot ${node.index}): kube-apiserver ${cp.server}, moto ${stack.awsEndpoint}; logs in ${dir}\n`,
  );
  return async () => {
    await cluster?.stop();
    cluster = undefined;
  };
}

/** Logs of earlier runs are kept for post-mortems; only the newest few. */
async function pruneOldRuns(): Promise<void> {
  const entries = (await readdir(runsDir)).sort();
  for (const old of entries.slice(0, Math.max(0, entries.length - (keepRuns - 1)))) {
    await rm(join(runsDir, old), { recursive: true, force: true });
  }
}
