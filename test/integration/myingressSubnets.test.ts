// MyIngress with spec.subnetSelector, on the real apiserver and moto: readiness follows what exists
// in AWS (issue 14, item 9: a selector matching 0 subnets showed Ready=True beside a Terminal
// message while no load balancer existed).
import {
  CreateSubnetCommand,
  CreateTagsCommand,
  CreateVpcCommand,
  DeleteTagsCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import {
  DeleteLoadBalancerCommand,
  DescribeLoadBalancersCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import { myIngressType, type MyIngress } from '../../src/kinds/myingress/api.ts';
import { myIngressController } from '../../src/kinds/myingress/controller.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { startController, type RunningController } from '../support/controllers.ts';
import { kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { awsClientConfig } from '../../dev/emulator.ts';

let admin: KubeClient;
let proxy: AwsFaultProxy;
let ec2: EC2Client;
let elb: ElasticLoadBalancingV2Client;
let subnets: string[];
let vpcId: string;
const running: RunningController[] = [];

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  proxy = await startFaultProxy();
  const direct = awsClientConfig(stackInfo().awsEndpoint);
  ec2 = new EC2Client(direct);
  elb = new ElasticLoadBalancingV2Client(direct);
  const vpc = await ec2.send(new CreateVpcCommand({ CidrBlock: '10.30.0.0/16' }));
  vpcId = vpc.Vpc?.VpcId ?? '';
  subnets = [];
  for (const [cidr, az] of [
    ['10.30.1.0/24', 'us-east-1a'],
    ['10.30.2.0/24', 'us-east-1b'],
  ] as const) {
    const s = await ec2.send(
      new CreateSubnetCommand({ VpcId: vpc.Vpc?.VpcId ?? '', CidrBlock: cidr, AvailabilityZone: az }),
    );
    subnets.push(s.Subnet?.SubnetId ?? '');
  }
});
afterAll(async () => {
  await proxy.stop();
});
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

function condition(m: MyIngress | undefined, type: string) {
  return m?.status?.conditions?.find((c) => c.type === type);
}

/** The subnets load balancer `arn` is in, sorted. */
async function subnetsOf(arn: string): Promise<string[]> {
  const lb = (await elb.send(new DescribeLoadBalancersCommand({ LoadBalancerArns: [arn] })))
    .LoadBalancers?.[0];
  return (lb?.AvailabilityZones ?? []).map((z) => z.SubnetId ?? '').sort();
}

describe('MyIngress with a subnet selector', () => {
  it('is not Ready once its load balancer is gone and the selector matches no subnet any more', async () => {
    const ns = await newNamespace(admin, 'ming-selector');
    running.push(
      await startController((s) => myIngressController(s, { pollMs: 300 }), {
        namespace: ns,
        endpoint: proxy.endpoint,
        resyncPeriod: '1s',
      }),
    );
    const tag = { Key: 'skylift-test-tier', Value: ns };
    await ec2.send(new CreateTagsCommand({ Resources: subnets, Tags: [tag] }));
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'picky' },
      spec: {
        subnetSelector: { tags: { [tag.Key]: tag.Value } },
        scheme: 'internal',
        listeners: [{ port: 80, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 200 } } }],
      },
    });
    const ready = await waitFor(
      async () => {
        const m = await readObject<MyIngress>(admin, myIngressType, ns, 'picky');
        return condition(m, 'Ready')?.status === 'True' ? m : undefined;
      },
      { timeoutMs: 60_000, description: 'picky Ready' },
    );
    const arn = typeof ready.status?.arn === 'string' ? ready.status.arn : '';
    expect(arn).not.toBe('');

    // Behind Skylift's back: the subnets lose their tag and the load balancer is deleted.
    await ec2.send(new DeleteTagsCommand({ Resources: subnets, Tags: [tag] }));
    await elb.send(new DeleteLoadBalancerCommand({ LoadBalancerArn: arn }));
    const stuck = await waitFor(
      async () => {
        const m = await readObject<MyIngress>(admin, myIngressType, ns, 'picky');
        return condition(m, 'Synced')?.reason === 'Terminal' ? m : undefined;
      },
      { timeoutMs: 60_000, description: 'picky Synced=False Terminal' },
    );
    expect(condition(stuck, 'Synced')?.message).toContain('spec.subnetSelector matches 0 subnet(s)');
    expect(condition(stuck, 'Ready')).toMatchObject({ status: 'False', reason: 'Terminal' });
    const lbs = await elb.send(new DescribeLoadBalancersCommand({}));
    expect((lbs.LoadBalancers ?? []).some((lb) => lb.LoadBalancerArn === arn)).toBe(false);

    // The message's advice: tag two subnets so that the selector matches them.
    await ec2.send(new CreateTagsCommand({ Resources: subnets, Tags: [tag] }));
    await waitFor(
      async () => {
        const m = await readObject<MyIngress>(admin, myIngressType, ns, 'picky');
        return condition(m, 'Ready')?.status === 'True' && m?.status?.arn !== arn ? m : undefined;
      },
      { timeoutMs: 60_000, description: 'picky Ready again with a new load balancer' },
    );
    await admin.delete(resourcePath(myIngressType, { namespace: ns, name: 'picky' }));
    await waitFor(
      async () => ((await readObject(admin, myIngressType, ns, 'picky')) === undefined ? true : undefined),
      { timeoutMs: 60_000, description: 'picky deleted' },
    );
  });
});

// Issue 29, item 7: the selector was resolved only when the spec changed and at a full look (by
// default once an hour), so subnets tagged or untagged in EC2 since were not followed at a resync.
describe('MyIngress subnet selector at resync', () => {
  it('joins a subnet tagged since, leaves one untagged, and never goes below two', async () => {
    const ns = await newNamespace(admin, 'ming-reselect');
    // Resyncs every second; the full-check period stays an hour: no full look within the test.
    running.push(
      await startController((s) => myIngressController(s, { pollMs: 300 }), {
        namespace: ns,
        endpoint: proxy.endpoint,
        resyncPeriod: '1s',
      }),
    );
    const third =
      (
        await ec2.send(
          new CreateSubnetCommand({
            VpcId: vpcId,
            CidrBlock: '10.30.3.0/24',
            AvailabilityZone: 'us-east-1c',
          }),
        )
      ).Subnet?.SubnetId ?? '';
    const [a, b] = subnets;
    const tag = { Key: 'skylift-test-tier', Value: ns };
    await ec2.send(new CreateTagsCommand({ Resources: subnets, Tags: [tag] }));
    await admin.create(resourcePath(myIngressType, { namespace: ns }), {
      apiVersion: 'aws.skylift.dev/v1alpha1',
      kind: 'MyIngress',
      metadata: { name: 'moving' },
      spec: {
        subnetSelector: { tags: { [tag.Key]: tag.Value } },
        scheme: 'internal',
        listeners: [{ port: 80, protocol: 'HTTP', defaultAction: { fixedResponse: { statusCode: 200 } } }],
      },
    });
    const ready = await waitFor(
      async () => {
        const m = await readObject<MyIngress>(admin, myIngressType, ns, 'moving');
        return condition(m, 'Ready')?.status === 'True' ? m : undefined;
      },
      { timeoutMs: 60_000, description: 'moving Ready' },
    );
    const arn = String(ready.status?.arn);
    expect(await subnetsOf(arn)).toEqual([...subnets].sort());
    const inSubnets = (want: string[]) => async () =>
      (await subnetsOf(arn)).join(',') === [...want].sort().join(',') ? true : undefined;

    await ec2.send(new CreateTagsCommand({ Resources: [third], Tags: [tag] }));
    await waitFor(inSubnets([a ?? '', b ?? '', third]), {
      timeoutMs: 30_000,
      description: 'the subnet tagged since joined',
    });
    await ec2.send(new DeleteTagsCommand({ Resources: [a ?? ''], Tags: [tag] }));
    await waitFor(inSubnets([b ?? '', third]), {
      timeoutMs: 30_000,
      description: 'the untagged subnet left',
    });

    // One subnet matched: the load balancer stays where it is, and the object says why.
    await ec2.send(new DeleteTagsCommand({ Resources: [b ?? ''], Tags: [tag] }));
    const stuck = await waitFor(
      async () => {
        const m = await readObject<MyIngress>(admin, myIngressType, ns, 'moving');
        return condition(m, 'Synced')?.status === 'False' ? m : undefined;
      },
      { timeoutMs: 30_000, description: 'Synced=False naming spec.subnetSelector' },
    );
    expect(condition(stuck, 'Synced')).toMatchObject({ status: 'False', reason: 'SubnetSelectorTooNarrow' });
    expect(condition(stuck, 'Synced')?.message).toContain('spec.subnetSelector matches 1 subnet(s)');
    expect(condition(stuck, 'Ready')?.status).toBe('True');
    expect(await subnetsOf(arn)).toEqual([b ?? '', third].sort());
    expect(proxy.count({ operation: 'SetSubnets' })).toBe(2);

    await ec2.send(new CreateTagsCommand({ Resources: [b ?? ''], Tags: [tag] }));
    await waitFor(
      async () => {
        const m = await readObject<MyIngress>(admin, myIngressType, ns, 'moving');
        return condition(m, 'Synced')?.status === 'True' ? m : undefined;
      },
      { timeoutMs: 30_000, description: 'Synced again once two subnets match' },
    );
    expect(await subnetsOf(arn)).toEqual([b ?? '', third].sort());
    await admin.delete(resourcePath(myIngressType, { namespace: ns, name: 'moving' }));
    await waitFor(
      async () => ((await readObject(admin, myIngressType, ns, 'moving')) === undefined ? true : undefined),
      { timeoutMs: 60_000, description: 'moving deleted' },
    );
  });
});
