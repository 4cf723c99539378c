// MyIngress the way a user meets it: `skylift run` as a process, the example
// applied with kubectl, SIGKILL of the operator in the middle of creating the
// load balancer, a DNSRecord alias following it, and deletion leaving nothing.
import { once } from 'node:events';
import { join } from 'node:path';
import { CreateSubnetCommand, CreateTagsCommand, CreateVpcCommand, EC2Client } from '@aws-sdk/client-ec2';
import {
  DescribeLoadBalancersCommand,
  DescribeTargetGroupsCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { repoRoot } from '../../dev/paths.ts';
import { waitFor } from '../../dev/wait.ts';
import { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { ensureZone, findRecord, listRecords, route53At } from '../support/dns.ts';
import { kubectl } from '../../dev/kubectl.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { spawnSkylift, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { stackInfo } from '../support/stack.ts';
import { awsClientConfig } from '../../dev/emulator.ts';

let proxy: AwsFaultProxy;
let ns: string;
let zoneId: string;
const operators: SkyliftProcess[] = [];

function startOperator(): SkyliftProcess {
  const p = spawnSkylift(ns, proxy.endpoint, ['--route53-batch-window', '300ms']);
  operators.push(p);
  return p;
}

beforeAll(async () => {
  const admin = kubeClient();
  await installCrds(admin);
  ns = await newNamespace(admin, 'e2e-ming');
  proxy = await AwsFaultProxy.start({ target: stackInfo().awsEndpoint });
  const direct = awsClientConfig(stackInfo().awsEndpoint);
  const ec2 = new EC2Client(direct);
  const vpc = await ec2.send(new CreateVpcCommand({ CidrBlock: '10.88.0.0/16' }));
  const ids: string[] = [];
  for (const [cidr, az] of [
    ['10.88.1.0/24', 'us-east-1a'],
    ['10.88.2.0/24', 'us-east-1b'],
  ] as const) {
    ids.push(
      (
        await ec2.send(
          new CreateSubnetCommand({ VpcId: vpc.Vpc?.VpcId ?? '', CidrBlock: cidr, AvailabilityZone: az }),
        )
      ).Subnet?.SubnetId ?? '',
    );
  }
  await ec2.send(
    new CreateTagsCommand({ Resources: ids, Tags: [{ Key: 'kubernetes.io/role/elb', Value: '1' }] }),
  );
  const r53 = route53At(stackInfo().awsEndpoint);
  zoneId = await ensureZone(r53, 'example.com');
});

afterAll(async () => {
  for (const p of operators) await p.stop();
  await proxy.stop();
});

describe('MyIngress with kubectl', () => {
  it('survives SIGKILL during creation, serves a DNSRecord alias, and deletes everything', async () => {
    const kc = stackInfo().adminKubeconfig;
    const first = startOperator();
    // Kill the operator the moment its CreateLoadBalancer reaches AWS; the call still goes through.
    proxy.inject({
      service: 'elasticloadbalancing',
      operation: 'CreateLoadBalancer',
      times: 1,
      match: () => {
        first.child.kill('SIGKILL');
        return false;
      },
      fault: { kind: 'latency', ms: 0 },
    });
    await waitFor(() => (first.output().includes('controllers started') ? true : undefined), {
      timeoutMs: 30_000,
      description: 'first operator started',
    });
    const applied = await kubectl(kc, ['apply', '-n', ns, '-f', join(repoRoot, 'examples/myingress.yaml')]);
    expect(applied.code, applied.stderr).toBe(0);
    const [, signal] = (await once(first.child, 'exit')) as [number | null, string | null];
    expect(signal).toBe('SIGKILL');

    const second = startOperator();
    const waited = await kubectl(kc, [
      'wait',
      '-n',
      ns,
      '--for=condition=Ready',
      'myingress/shop',
      '--timeout=120s',
    ]);
    expect(waited.code, `${waited.stderr}\n${second.output().slice(-2000)}`).toBe(0);

    const elb = new ElasticLoadBalancingV2Client(awsClientConfig(stackInfo().awsEndpoint));
    const ours = async (): Promise<{ lbs: number; tgs: number }> => {
      const lbs = ((await elb.send(new DescribeLoadBalancersCommand({}))).LoadBalancers ?? []).filter((l) =>
        (l.LoadBalancerName ?? '').includes(ns.slice(0, 10)),
      );
      const tgs = ((await elb.send(new DescribeTargetGroupsCommand({}))).TargetGroups ?? []).filter((t) =>
        (t.TargetGroupName ?? '').endsWith('-web-80'),
      );
      return { lbs: lbs.length, tgs: tgs.length };
    };
    expect(await ours()).toEqual({ lbs: 1, tgs: 1 });

    const get = await kubectl(kc, ['get', 'ming', '-n', ns]);
    expect(get.stdout).toMatch(/NAME\s+DNS NAME\s+SCHEME\s+READY\s+SYNCED\s+AGE/);
    expect(get.stdout).toMatch(/shop\s+\S+elb\.amazonaws\.com\s+internet-facing\s+True\s+True/);
    const dnsName = (await kubectl(kc, ['get', 'ming', 'shop', '-n', ns, '-o', 'jsonpath={.status.dnsName}']))
      .stdout;

    const alias = await kubectl(kc, [
      'apply',
      '-n',
      ns,
      '-f',
      join(repoRoot, 'examples/dnsrecord-alias.yaml'),
    ]);
    expect(alias.code, alias.stderr).toBe(0);
    const dnsReady = await kubectl(kc, [
      'wait',
      '-n',
      ns,
      '--for=condition=Ready',
      'dnsrecord/shop',
      '--timeout=90s',
    ]);
    expect(dnsReady.code, dnsReady.stderr).toBe(0);
    const record = findRecord(
      await listRecords(route53At(stackInfo().awsEndpoint), zoneId),
      'shop.example.com',
      'A',
    );
    expect(record?.AliasTarget?.DNSName?.toLowerCase().replace(/\.$/, '')).toBe(dnsName.toLowerCase());

    expect(
      (
        await kubectl(kc, [
          'delete',
          '-n',
          ns,
          '-f',
          join(repoRoot, 'examples/dnsrecord-alias.yaml'),
          '--timeout=90s',
        ])
      ).code,
    ).toBe(0);
    const deleted = await kubectl(kc, ['delete', '-n', ns, 'myingress/shop', '--timeout=120s']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(await ours()).toEqual({ lbs: 0, tgs: 0 });
  });
});
