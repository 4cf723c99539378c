// Vitest global setup for the node tests (test/node/): starts one node cluster
// (control plane in node mode, a real node in its own network namespace, moto
// on the address Pods reach) per run and hands its coordinates to the test
// files through `inject('stack')` and `inject('node')`.
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { skyliftImage } from '../../dev/images.ts';
import { startNodeCluster, nodeImages, type NodeCluster } from '../../dev/nodeCluster.ts';
import { repoRoot } from '../../dev/paths.ts';
import type { NodeInfo } from './stackInfo.ts';
import { newTestRun, stackInfoOf } from './testRuns.ts';

const runsDir = join(repoRoot, '.skylift', 'node-runs');
const keepRuns = 3;

let cluster: NodeCluster | undefined;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Short: unix socket paths below it must stay under 108 characters.
  const dir = await newTestRun(runsDir, keepRuns, 19);
  const started = Date.now();
  // The operator image `make image` built (make test builds it first): helm installs it.
  cluster = await startNodeCluster({
    dir,
    extraImages: [skyliftImage().archive],
    log: (line) => process.stdout.write(`[skylift node] ${line}\n`),
  });
  const cp = cluster.controlPlane;
  const stack = stackInfoOf(dir, cp, cluster.emulator.endpoint);
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
