// `make dev`: the local stack a developer works against, like `kind create
// cluster`. Starts the control plane and the AWS emulator, writes
// .skylift/dev/kubeconfig and .skylift/dev/aws.env, and runs until Ctrl-C.
import { once } from 'node:events';
import {
  CreateSubnetCommand,
  CreateTagsCommand,
  CreateVpcCommand,
  DescribeSubnetsCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import {
  CreateHostedZoneCommand,
  ListHostedZonesByNameCommand,
  Route53Client,
} from '@aws-sdk/client-route-53';
import { KubeConfig } from '@kubernetes/client-node';
import { installCrds } from '../apis/install.ts';
import { KubeClient } from '../runtime/kube/client.ts';
import { emulatorCredentials } from './emulator.ts';
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
const kc = new KubeConfig();
kc.loadFromFile(stack.kubeconfig);
await installCrds(new KubeClient(kc));
const sampleZone = await ensureZone(stack.emulator.endpoint, 'example.com');
const sampleSubnets = await ensureElbSubnets(stack.emulator.endpoint);
const rel = (p: string): string => relative(process.cwd(), p) || p;
process.stdout.write(
  [
    `Local stack ready in ${((Date.now() - started) / 1000).toFixed(1)} s.`,
    '',
    `  Kubernetes  ${stack.controlPlane.server}   (admin kubeconfig: ${rel(stack.kubeconfig)})`,
    `  AWS (moto)  ${stack.emulator.endpoint}`,
    `  Logs        ${rel(stack.controlPlane.logDir)}, ${rel(stack.emulator.logFile)}`,
    `  CRDs        installed from src/apis (kubectl get crd)`,
    `  Route 53    hosted zone example.com (${sampleZone}) for the samples in examples/`,
    `  EC2         subnets ${sampleSubnets.join(', ')} tagged kubernetes.io/role/elb=1`,
    '',
    'In another shell:',
    `  export KUBECONFIG=${stack.kubeconfig}`,
    `  source ${stack.awsEnvFile}`,
    '  kubectl get namespaces',
    '',
    'Run the operator against it:  make run',
    'Then:                         kubectl apply -f examples/dnsrecord.yaml',
    '',
    'Press Ctrl-C to stop everything.',
    '',
  ].join('\n'),
);
await Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]);

/** Creates a VPC with two subnets tagged for load balancers unless such subnets exist; returns their IDs. */
async function ensureElbSubnets(endpoint: string): Promise<string[]> {
  const ec2 = new EC2Client({
    endpoint,
    region: emulatorCredentials.region,
    credentials: {
      accessKeyId: emulatorCredentials.accessKeyId,
      secretAccessKey: emulatorCredentials.secretAccessKey,
    },
  });
  try {
    const tagged = await ec2.send(
      new DescribeSubnetsCommand({ Filters: [{ Name: 'tag:kubernetes.io/role/elb', Values: ['1'] }] }),
    );
    const existing = (tagged.Subnets ?? []).map((s) => s.SubnetId ?? '');
    if (existing.length >= 2) return existing;
    const vpc = await ec2.send(new CreateVpcCommand({ CidrBlock: '10.77.0.0/16' }));
    const ids: string[] = [];
    for (const [cidr, az] of [
      ['10.77.1.0/24', 'us-east-1a'],
      ['10.77.2.0/24', 'us-east-1b'],
    ] as const) {
      const subnet = await ec2.send(
        new CreateSubnetCommand({ VpcId: vpc.Vpc?.VpcId ?? '', CidrBlock: cidr, AvailabilityZone: az }),
      );
      ids.push(subnet.Subnet?.SubnetId ?? '');
    }
    await ec2.send(
      new CreateTagsCommand({ Resources: ids, Tags: [{ Key: 'kubernetes.io/role/elb', Value: '1' }] }),
    );
    return ids;
  } finally {
    ec2.destroy();
  }
}

/** Creates a public hosted zone in the emulator unless one of that name exists; returns its ID. */
async function ensureZone(endpoint: string, name: string): Promise<string> {
  const r53 = new Route53Client({
    endpoint,
    region: emulatorCredentials.region,
    credentials: {
      accessKeyId: emulatorCredentials.accessKeyId,
      secretAccessKey: emulatorCredentials.secretAccessKey,
    },
  });
  try {
    const found = await r53.send(new ListHostedZonesByNameCommand({ DNSName: name, MaxItems: 1 }));
    const existing = found.HostedZones?.find((z) => z.Name === `${name}.`);
    if (existing?.Id !== undefined) return existing.Id.replace('/hostedzone/', '');
    const created = await r53.send(
      new CreateHostedZoneCommand({ Name: name, CallerReference: `skylift-dev-${name}` }),
    );
    return (created.HostedZone?.Id ?? '').replace('/hostedzone/', '');
  } finally {
    r53.destroy();
  }
}
process.stdout.write('\nStopping…\n');
await stack.stop();
process.stdout.write('Stopped.\n');
