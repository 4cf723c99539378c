// MyIngress on real Pods: a Deployment of the sample app behind a Service on
// the node cluster; the EndpointSlices are the ones kube-controller-manager
// made from Pods the kubelet runs. The load balancer's target group follows
// the Pods through a scale-up, a rolling update and a scale-down.
import { CreateSubnetCommand, CreateTagsCommand, CreateVpcCommand, EC2Client } from '@aws-sdk/client-ec2';
import {
  DescribeLoadBalancersCommand,
  DescribeTargetHealthCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourcePath } from '../../src/apis/meta.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import { myIngressType } from '../../src/kinds/myingress/api.ts';
import { kubeClient, newNamespace, readObject } from '../support/kube.ts';
import { kubectl } from '../../dev/kubectl.ts';
import { spawnSkylift, type SkyliftProcess } from '../support/skyliftProcess.ts';
import { nodeInfo, stackInfo } from '../support/stack.ts';
import { awsClientConfig } from '../../dev/emulator.ts';

interface PodList {
  items: {
    metadata: { name: string; deletionTimestamp?: string };
    status?: { phase?: string; podIP?: string; conditions?: { type: string; status: string }[] };
  }[];
}
interface MyIngressView {
  status?: {
    arn?: string;
    targetGroups?: { arn: string; registeredTargets: number }[];
    conditions?: { type: string; status: string }[];
  };
}

const admin = kubeClient();
let ns: string;
let operator: SkyliftProcess | undefined;
const elb = new ElasticLoadBalancingV2Client(awsClientConfig(stackInfo().awsEndpoint));

const app = (image: string): string => `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: { app: web }
  strategy:
    rollingUpdate: { maxSurge: 1, maxUnavailable: 0 }
  template:
    metadata:
      labels: { app: web }
    spec:
      terminationGracePeriodSeconds: 2
      containers:
        - name: hello
          image: ${image}
          ports: [{ containerPort: 8080 }]
          readinessProbe:
            httpGet: { path: /, port: 8080 }
            periodSeconds: 1
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: { app: web }
  ports: [{ port: 80, targetPort: 8080 }]
---
apiVersion: aws.skylift.dev/v1alpha1
kind: MyIngress
metadata:
  name: shop
spec:
  scheme: internet-facing
  subnetSelector:
    tags:
      kubernetes.io/role/elb: '1'
  listeners:
    - port: 80
      protocol: HTTP
      defaultAction:
        forward:
          service: { name: web, port: 80, healthCheck: { path: / } }
`;

/** IPs of the Deployment's Pods that are Ready and not being deleted, sorted. */
async function readyPodIps(): Promise<string[]> {
  const pods = await admin.get<PodList>(`/api/v1/namespaces/${ns}/pods`, { labelSelector: 'app=web' });
  return pods.items
    .filter(
      (p) =>
        p.metadata.deletionTimestamp === undefined &&
        p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
    )
    .map((p) => p.status?.podIP ?? '')
    .sort();
}

async function targetGroupArn(): Promise<string> {
  return waitFor(
    async () => {
      const m = await readObject<MyIngressView & { metadata: { name: string } }>(
        admin,
        myIngressType,
        ns,
        'shop',
      );
      return m?.status?.targetGroups?.[0]?.arn;
    },
    { timeoutMs: 60_000, description: 'MyIngress shop has a target group' },
  );
}

async function targets(tgArn: string): Promise<string[]> {
  const h = await elb.send(new DescribeTargetHealthCommand({ TargetGroupArn: tgArn }));
  return (h.TargetHealthDescriptions ?? []).map((t) => `${t.Target?.Id ?? ''}:${t.Target?.Port ?? 0}`).sort();
}

/** Waits until the target group holds exactly the Ready Pods (port 8080), `count` of them. */
async function targetsFollowPods(tgArn: string, count: number, description: string): Promise<string[]> {
  return waitFor(
    async () => {
      const ips = await readyPodIps();
      if (ips.length !== count) return undefined;
      const want = ips.map((ip) => `${ip}:8080`);
      const got = await targets(tgArn);
      return JSON.stringify(got) === JSON.stringify(want) ? ips : undefined;
    },
    { timeoutMs: 120_000, description, intervalMs: 250 },
  );
}

beforeAll(async () => {
  await installCrds(admin);
  ns = await newNamespace(admin, 'node-targets');
  const ec2 = new EC2Client(awsClientConfig(stackInfo().awsEndpoint));
  const vpc = await ec2.send(new CreateVpcCommand({ CidrBlock: '10.77.0.0/16' }));
  const subnets: string[] = [];
  for (const [cidr, az] of [
    ['10.77.1.0/24', 'us-east-1a'],
    ['10.77.2.0/24', 'us-east-1b'],
  ] as const) {
    const s = await ec2.send(
      new CreateSubnetCommand({ VpcId: vpc.Vpc?.VpcId ?? '', CidrBlock: cidr, AvailabilityZone: az }),
    );
    subnets.push(s.Subnet?.SubnetId ?? '');
  }
  await ec2.send(
    new CreateTagsCommand({ Resources: subnets, Tags: [{ Key: 'kubernetes.io/role/elb', Value: '1' }] }),
  );
  operator = spawnSkylift(ns, stackInfo().awsEndpoint);
});

afterAll(async () => {
  await operator?.stop();
});

describe('MyIngress targets on real Pods', () => {
  it('registers the Pod IPs of the EndpointSlices the cluster made, through scale and roll', async () => {
    const kc = stackInfo().adminKubeconfig;
    const applied = await kubectl(kc, ['apply', '-n', ns, '-f', '-'], app(nodeInfo().helloImage));
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);

    const tgArn = await targetGroupArn();
    const first = await targetsFollowPods(tgArn, 2, 'two Pods registered');
    // Real Pods: addresses from the node's Pod CIDR, given by the CNI bridge plugin.
    const prefix = nodeInfo().podCidr.replace(/\.0\/24$/, '.');
    for (const ip of first) expect(ip.startsWith(prefix)).toBe(true);
    // The cluster made the EndpointSlice (the endpointslice controller), not a test.
    const slices = await admin.get<{ items: { metadata: { labels?: Record<string, string> } }[] }>(
      `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`,
      { labelSelector: 'kubernetes.io/service-name=web' },
    );
    expect(slices.items.map((s) => s.metadata.labels?.['endpointslice.kubernetes.io/managed-by'])).toEqual([
      'endpointslice-controller.k8s.io',
    ]);

    const scaled = await kubectl(kc, ['scale', '-n', ns, 'deployment/web', '--replicas=3']);
    expect(scaled.code).toBe(0);
    const three = await targetsFollowPods(tgArn, 3, 'three Pods registered after scale-up');
    expect(three).toEqual(expect.arrayContaining(first));

    // A rolling update replaces every Pod: the targets become the new Pods' IPs only.
    const rolled = await kubectl(kc, [
      'patch',
      '-n',
      ns,
      'deployment/web',
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { template: { metadata: { annotations: { 'skylift.test/rev': '2' } } } } }),
    ]);
    expect(rolled.code).toBe(0);
    const waitedRollout = await kubectl(kc, [
      'rollout',
      'status',
      '-n',
      ns,
      'deployment/web',
      '--timeout=120s',
    ]);
    expect(waitedRollout.code).toBe(0);
    const after = await targetsFollowPods(tgArn, 3, 'the new Pods registered after the roll');
    // host-local IPAM hands out the next free address, so new Pods have new IPs.
    expect(after.filter((ip) => three.includes(ip))).toEqual([]);

    const down = await kubectl(kc, ['scale', '-n', ns, 'deployment/web', '--replicas=1']);
    expect(down.code).toBe(0);
    const one = await targetsFollowPods(tgArn, 1, 'one Pod registered after scale-down');
    expect(after).toEqual(expect.arrayContaining(one));

    // Deleting the MyIngress removes the load balancer it made.
    const lbArn = (
      await readObject<MyIngressView & { metadata: { name: string } }>(admin, myIngressType, ns, 'shop')
    )?.status?.arn;
    expect(lbArn).toMatch(/^arn:aws:elasticloadbalancing:/);
    await admin.delete(resourcePath(myIngressType, { namespace: ns, name: 'shop' }));
    await waitFor(
      async () => ((await readObject(admin, myIngressType, ns, 'shop')) === undefined ? true : undefined),
      { timeoutMs: 60_000, description: 'MyIngress shop gone' },
    );
    const lbs = await elb.send(new DescribeLoadBalancersCommand({}));
    expect((lbs.LoadBalancers ?? []).map((l) => l.LoadBalancerArn)).not.toContain(lbArn);
  });
});
