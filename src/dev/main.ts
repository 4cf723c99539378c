// `make dev`: the local stack a developer works against, like `kind create
// cluster`. Starts the control plane and the AWS emulator, writes
// .skylift/dev/kubeconfig and .skylift/dev/aws.env, and runs until Ctrl-C.
import { once } from 'node:events';
import { join, relative } from 'node:path';
import { repoRoot } from './paths.ts';
import { reapStaleProcesses } from './reaper.ts';
import { startLocalStack } from './stack.ts';

const dir = process.env.SKYLIFT_DEV_DIR ?? join(repoRoot, '.skylift', 'dev');
const reaped = await reapStaleProcesses(dir);
if (reaped > 0) process.stdout.write(`Stopped ${reaped} processes left over from an earlier \`make dev\`.\n`);
const started = Date.now();
process.stdout.write('Starting kube-apiserver, etcd, kube-controller-manager and moto…\n');
const stack = await startLocalStack({ dir });
const rel = (p: string): string => relative(process.cwd(), p) || p;
process.stdout.write(
  [
    `Local stack ready in ${((Date.now() - started) / 1000).toFixed(1)} s.`,
    '',
    `  Kubernetes  ${stack.controlPlane.server}   (admin kubeconfig: ${rel(stack.kubeconfig)})`,
    `  AWS (moto)  ${stack.emulator.endpoint}`,
    `  Logs        ${rel(stack.controlPlane.logDir)}, ${rel(stack.emulator.logFile)}`,
    '',
    'In another shell:',
    `  export KUBECONFIG=${stack.kubeconfig}`,
    `  source ${stack.awsEnvFile}`,
    '  kubectl get namespaces',
    '',
    'Press Ctrl-C to stop everything.',
    '',
  ].join('\n'),
);
await Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]);
process.stdout.write('\nStopping…\n');
await stack.stop();
process.stdout.write('Stopped.\n');
