// A Gateway judged by its own namespace's TeamPolicy (docs/gateway.md, "TeamPolicies"), on a control
// plane of its own with the Gateway API's CRDs and moto, the Gateways internet-facing: a Gateway of
// a namespace whose policy names a role is neither Accepted nor Programmed (NotAllowedByTeamPolicy,
// naming the policy) and gets no MyIngressGroup and no load balancer; one of a namespace whose
// guardrails allow only internal load balancers is refused naming the guardrail, and programmed
// once the policy allows internet-facing (changed after create); when that policy is then deleted,
// the load balancer stays as it is while the Gateway says it is not allowed, and deleting the
// Gateway still removes the load balancer (a guardrail never blocks a deletion).
import { CreateTagsCommand, EC2Client } from '@aws-sdk/client-ec2';
import {
  DescribeLoadBalancersCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import type { ControlPlane } from '../../dev/controlplane.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import {
  applyTeamPolicy,
  deleteTeamPolicies,
  deleteTeamPolicy,
  startTenants,
} from '../../dev/teamPolicies.ts';
import { waitFor } from '../../dev/wait.ts';
import {
  gatewayClassType,
  gatewayType,
  skyliftGatewayControllerName,
  type Gateway,
} from '../../src/apis/gatewayApi.ts';
import type { Condition } from '../../src/apis/managed.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { gatewayGroupName } from '../../src/kinds/myingress/gateway/names.ts';
import { myIngressGroupType, type MyIngressGroup } from '../../src/kinds/myingress/group/api.ts';
import { isKubeNotFound } from '../../src/runtime/errors.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import type { TenantDirectory } from '../../src/tenancy/directory.ts';
import type { RunningController } from '../support/controllers.ts';
import { startGatewayControllers, startGatewayControlPlane } from '../support/gatewayControllers.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { vpcWithTwoSubnets } from '../support/vpc.ts';

const policies = 'integration-gateway-own-tenancy';
const suffix = randomBytes(3).toString('hex');
/** The subnets' tag the Gateways' load balancers are placed by (no other test's subnets carry it). */
const subnetTag = `skylift.test/gateway-own-tenancy-${suffix}`;
const className = `skylift-own-tenancy-${suffix}`;

let cp: ControlPlane;
let admin: KubeClient;
let proxy: AwsFaultProxy;
let ec2: EC2Client;
let elb: ElasticLoadBalancingV2Client;
let vpcId: string;
let tenants: TenantDirectory;
const running: RunningController[] = [];

beforeAll(async () => {
  ({ cp, admin } = await startGatewayControlPlane('gateway-own-tenancy'));
  const direct = awsClientConfig(stackInfo().awsEndpoint);
  ec2 = new EC2Client(direct);
  elb = new ElasticLoadBalancingV2Client(direct);
  const vpc = await vpcWithTwoSubnets(ec2, 93);
  vpcId = vpc.vpcId;
  await ec2.send(new CreateTagsCommand({ Resources: vpc.subnets, Tags: [{ Key: subnetTag, Value: '1' }] }));
  proxy = await startFaultProxy();
  tenants = await startTenants(admin, policies);
}, 180_000);

afterAll(async () => {
  for (const r of running.splice(0)) await r.stop();
  await deleteTeamPolicies(admin, policies);
  await tenants.stop();
  await proxy.stop();
  elb.destroy();
  ec2.destroy();
  await cp.stop();
});

async function namespace(prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await admin.create('/api/v1/namespaces', { metadata: { name } });
  return name;
}

async function createGateway(ns: string, name: string): Promise<void> {
  await admin.create(resourcePath(gatewayType, { namespace: ns }), {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name },
    spec: {
      gatewayClassName: className,
      listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
    },
  });
}

async function gatewayNow(ns: string, name: string): Promise<Gateway | undefined> {
  try {
    return await admin.get<Gateway>(resourcePath(gatewayType, { namespace: ns, name }));
  } catch (err) {
    if (isKubeNotFound(err)) return undefined;
    throw err;
  }
}

async function groupNow(ns: string, name: string): Promise<MyIngressGroup | undefined> {
  try {
    return await admin.get<MyIngressGroup>(
      resourcePath(myIngressGroupType, { name: gatewayGroupName(ns, name) }),
    );
  } catch (err) {
    if (isKubeNotFound(err)) return undefined;
    throw err;
  }
}

/** Polls the Gateway until its `type` condition has `reason` at its generation (and `message` matches). */
function gatewayCondition(
  ns: string,
  name: string,
  type: string,
  reason: string,
  message?: RegExp,
  timeoutMs = 30_000,
): Promise<Condition> {
  return waitFor(
    async () => {
      const gw = await gatewayNow(ns, name);
      const c = gw?.status?.conditions?.find((x) => x.type === type);
      return c?.reason === reason &&
        c.observedGeneration === gw?.metadata.generation &&
        (message === undefined || message.test(c.message))
        ? c
        : undefined;
    },
    { timeoutMs, intervalMs: 100, description: `Gateway ${ns}/${name} ${type} ${reason}` },
  );
}

/** The ARNs of the load balancers in the test's VPC. */
async function loadBalancersInVpc(): Promise<string[]> {
  const lbs = (await elb.send(new DescribeLoadBalancersCommand({}))).LoadBalancers ?? [];
  return lbs
    .filter((l) => l.VpcId === vpcId)
    .flatMap((l) => (l.LoadBalancerArn !== undefined ? [l.LoadBalancerArn] : []));
}

describe('a Gateway under its own namespace’s TeamPolicy', () => {
  it('is not programmed as another identity or against its guardrails, is programmed once allowed, and keeps its load balancer when the policy goes, which its deletion still removes', async () => {
    const nsRole = await namespace('gwo-role');
    const nsEdge = await namespace('gwo-edge');
    const policyRole = `gwo-role-${suffix}`;
    const policyEdge = `gwo-edge-${suffix}`;
    const role = 'arn:aws:iam::222233334444:role/skylift-team-role';
    await applyTeamPolicy(admin, policies, policyRole, {
      namespaces: { names: [nsRole] },
      aws: { roleArn: role },
    });
    await applyTeamPolicy(admin, policies, policyEdge, {
      namespaces: { names: [nsEdge] },
      guardrails: { loadBalancers: { schemes: ['internal'] } },
    });
    running.push(
      ...(await startGatewayControllers({
        namespace: [nsRole, nsEdge].join(','),
        endpoint: proxy.endpoint,
        client: admin,
        subnetTag,
        tenants,
        scheme: 'internet-facing',
      })),
    );
    await admin.create(resourcePath(gatewayClassType), {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: className },
      spec: { controllerName: skyliftGatewayControllerName },
    });

    // (a) Another identity: not Accepted, not Programmed, naming the policy and the role; no group, no ALB.
    await createGateway(nsRole, 'edge');
    const refused = await gatewayCondition(nsRole, 'edge', 'Accepted', 'NotAllowedByTeamPolicy');
    expect(refused.status).toBe('False');
    expect(refused.message).toMatch(
      new RegExp(
        `^TeamPolicy ${policyRole} serves namespace ${nsRole} as role ${role}, but Gateway ${nsRole}/edge \\(MyIngressGroup .*\\)'s load balancer is the operator's own.*a MyIngress without spec\\.group\\); no load balancer is made for it$`,
      ),
    );
    const notProgrammed = await gatewayCondition(nsRole, 'edge', 'Programmed', 'NotAllowedByTeamPolicy');
    expect(notProgrammed.status).toBe('False');
    expect(await groupNow(nsRole, 'edge')).toBeUndefined();
    expect((await gatewayNow(nsRole, 'edge'))?.status?.addresses ?? []).toEqual([]);

    // (b) Guardrails allowing only internal load balancers, the Gateways internet-facing: refused.
    await createGateway(nsEdge, 'web');
    const guarded = await gatewayCondition(nsEdge, 'web', 'Accepted', 'NotAllowedByTeamPolicy');
    expect(guarded.message).toMatch(
      new RegExp(
        `^Gateway ${nsEdge}/web \\(MyIngressGroup .*\\)'s load balancer does not meet namespace ${nsEdge}'s TeamPolicy ${policyEdge} .*forbids spec\\.scheme: internet-facing load balancers are not allowed in this namespace \\(allowed: internal\\).*--gateway-scheme`,
      ),
    );
    expect(await groupNow(nsEdge, 'web')).toBeUndefined();
    // Neither refused Gateway has a load balancer.
    expect(await loadBalancersInVpc()).toEqual([]);

    // (c) After create: the policy allows internet-facing; the Gateway is programmed.
    await applyTeamPolicy(admin, policies, policyEdge, {
      namespaces: { names: [nsEdge] },
      guardrails: { loadBalancers: { schemes: ['internal', 'internet-facing'] } },
    });
    await gatewayCondition(nsEdge, 'web', 'Accepted', 'Accepted');
    await gatewayCondition(nsEdge, 'web', 'Programmed', 'Programmed', undefined, 90_000);
    const group = await groupNow(nsEdge, 'web');
    const lb = group?.status?.arn ?? '';
    expect(lb).not.toBe('');
    expect(await loadBalancersInVpc()).toEqual([lb]);
    // The role's Gateway is still refused: still no load balancer for it.
    expect(await groupNow(nsRole, 'edge')).toBeUndefined();

    // (d) Its policy deleted: no policy selects the namespace, so the Gateway is refused, but its
    // load balancer is kept as it is (not deleted, not changed).
    await deleteTeamPolicy(admin, policyEdge);
    const gone = await gatewayCondition(
      nsEdge,
      'web',
      'Programmed',
      'NotAllowedByTeamPolicy',
      /is kept as it is and not changed until the policy allows it$/,
    );
    expect(gone.status).toBe('False');
    const kept = await groupNow(nsEdge, 'web');
    expect(kept?.metadata.uid).toBe(group?.metadata.uid);
    expect(kept?.metadata.generation).toBe(group?.metadata.generation);
    expect(await loadBalancersInVpc()).toEqual([lb]);

    // Deleting it is never blocked by a guardrail: the load balancer goes, then the Gateway.
    await admin.delete(resourcePath(gatewayType, { namespace: nsEdge, name: 'web' }));
    await waitFor(async () => ((await gatewayNow(nsEdge, 'web')) === undefined ? true : undefined), {
      timeoutMs: 90_000,
      description: `Gateway ${nsEdge}/web gone (its finalizer removed)`,
    });
    expect(await groupNow(nsEdge, 'web')).toBeUndefined();
    expect(await loadBalancersInVpc()).toEqual([]);
  });
});
