// TeamPolicies and a Gateway's HTTPRoutes, on a control plane of its own with the Gateway API's
// CRDs and moto: a Gateway's load balancer is the operator's, so a route is served only when its
// namespace's tenancy allows that. A route of a namespace whose policy names a role is Accepted=False
// NotAllowedByTeamPolicy with the message and has no rule on the load balancer; a route of a
// namespace served with the operator's identity is Accepted and served, but a hand-made
// EndpointSlice (another manager's) gives its target group no targets until the namespace's policy
// lists that manager (spec.guardrails.loadBalancers.endpointSliceManagers), changed after create.
import { CreateTagsCommand, EC2Client } from '@aws-sdk/client-ec2';
import {
  DescribeListenersCommand,
  DescribeRulesCommand,
  DescribeTagsCommand,
  DescribeTargetGroupsCommand,
  DescribeTargetHealthCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { startControlPlane, type ControlPlane } from '../../dev/controlplane.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { installCrds, installGatewayApiCrds } from '../../dev/installCrds.ts';
import { applyTeamPolicy, deleteTeamPolicies, startTenants } from '../../dev/teamPolicies.ts';
import { waitFor } from '../../dev/wait.ts';
import {
  gatewayClassType,
  gatewayType,
  httpRouteType,
  skyliftGatewayControllerName,
  type Gateway,
  type HTTPRoute,
} from '../../src/apis/gatewayApi.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import type { Condition } from '../../src/apis/managed.ts';
import { myIngressGroupType, type MyIngressGroup } from '../../src/kinds/myingress/group/api.ts';
import { GatewayController } from '../../src/kinds/myingress/gateway/gatewayController.ts';
import { gatewayGroupController } from '../../src/kinds/myingress/gateway/groupController.ts';
import { gatewayTenancyOptions } from '../../src/kinds/myingress/group/controller.ts';
import { defaultMyIngressSettings } from '../../src/kinds/myingress/settings.ts';
import { KubeClient } from '../../src/runtime/kube/client.ts';
import { loadKubeconfig } from '../../src/runtime/kube/kubeconfigLoad.ts';
import type { TenantDirectory } from '../../src/tenancy/directory.ts';
import { startController, type RunningController } from '../support/controllers.ts';
import { scratchDir } from '../support/scratch.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { vpcWithTwoSubnets } from '../support/vpc.ts';

const policies = 'integration-gateway-tenancy';
const suffix = randomBytes(3).toString('hex');
/** The subnets' tag the Gateway's load balancer is placed by (no other test's subnets carry it). */
const subnetTag = `skylift.test/gateway-tenancy-${suffix}`;
/** The manager of the test's hand-made EndpointSlice (not Kubernetes' EndpointSlice controller). */
const mesh = 'mesh-controller.example.com';
const meshPodIp = '10.250.9.5';

let cp: ControlPlane;
let admin: KubeClient;
let proxy: AwsFaultProxy;
let ec2: EC2Client;
let elb: ElasticLoadBalancingV2Client;
let tenants: TenantDirectory;
const running: RunningController[] = [];

beforeAll(async () => {
  cp = await startControlPlane({ dir: await scratchDir('gateway-tenancy') });
  admin = new KubeClient(loadKubeconfig(cp.kubeconfigPath('admin')));
  await installCrds(admin);
  await installGatewayApiCrds(admin);
  const direct = awsClientConfig(stackInfo().awsEndpoint);
  ec2 = new EC2Client(direct);
  elb = new ElasticLoadBalancingV2Client(direct);
  const { subnets } = await vpcWithTwoSubnets(ec2, 37);
  await ec2.send(new CreateTagsCommand({ Resources: subnets, Tags: [{ Key: subnetTag, Value: '1' }] }));
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

/** Service web:80 of `ns` (no selector) and an EndpointSlice of `manager` listing `ip` as ready. */
async function serviceWithSlice(ns: string, manager: string, ip: string): Promise<void> {
  await admin.create(`/api/v1/namespaces/${ns}/services`, {
    metadata: { name: 'web' },
    spec: { ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
  });
  await admin.create(`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: 'web-mesh',
      labels: { 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': manager },
    },
    addressType: 'IPv4',
    ports: [{ port: 8080, protocol: 'TCP', name: '' }],
    endpoints: [{ addresses: [ip], conditions: { ready: true, serving: true, terminating: false } }],
  });
}

async function createRoute(ns: string, name: string, gw: { ns: string; name: string }, host: string) {
  await admin.create(resourcePath(httpRouteType, { namespace: ns }), {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name },
    spec: {
      parentRefs: [{ name: gw.name, namespace: gw.ns }],
      hostnames: [host],
      rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
    },
  });
}

const cond = (cs: readonly Condition[] | undefined, type: string): Condition | undefined =>
  cs?.find((c) => c.type === type);

/** Polls the route until its Skylift parent entry's Accepted has `reason` at its generation. */
function routeAccepted(ns: string, name: string, reason: string): Promise<Condition> {
  return waitFor(
    async () => {
      const r = await admin.get<HTTPRoute>(resourcePath(httpRouteType, { namespace: ns, name }));
      const mine = r.status?.parents?.find((p) => p.controllerName === skyliftGatewayControllerName);
      const c = cond(mine?.conditions, 'Accepted');
      return c?.reason === reason && c.observedGeneration === r.metadata.generation ? c : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100, description: `HTTPRoute ${ns}/${name} Accepted ${reason}` },
  );
}

/** The hosts of the non-default rules of the load balancer's listener on port 80, sorted. */
async function ruleHosts(lbArn: string): Promise<string[]> {
  const listeners =
    (await elb.send(new DescribeListenersCommand({ LoadBalancerArn: lbArn }))).Listeners ?? [];
  const l = listeners.find((x) => x.Port === 80);
  const rules = (await elb.send(new DescribeRulesCommand({ ListenerArn: l?.ListenerArn ?? '' }))).Rules ?? [];
  return rules
    .filter((r) => r.IsDefault !== true)
    .flatMap((r) => (r.Conditions ?? []).flatMap((c) => c.HostHeaderConfig?.Values ?? c.Values ?? []))
    .sort();
}

/** The registered targets (IPs) of the target groups made for member `uid`, or undefined while none exists. */
async function memberTargets(uid: string): Promise<string[] | undefined> {
  const tgs = (await elb.send(new DescribeTargetGroupsCommand({}))).TargetGroups ?? [];
  const arns = tgs.flatMap((t) => (t.TargetGroupArn !== undefined ? [t.TargetGroupArn] : []));
  const mine: string[] = [];
  for (let i = 0; i < arns.length; i += 20) {
    const tags = await elb.send(new DescribeTagsCommand({ ResourceArns: arns.slice(i, i + 20) }));
    for (const d of tags.TagDescriptions ?? [])
      if (d.Tags?.some((t) => t.Key === 'skylift.dev/member' && t.Value === uid))
        mine.push(d.ResourceArn ?? '');
  }
  if (mine.length === 0) return undefined;
  const out: string[] = [];
  for (const arn of mine) {
    const h = await elb.send(new DescribeTargetHealthCommand({ TargetGroupArn: arn }));
    for (const t of h.TargetHealthDescriptions ?? []) out.push(t.Target?.Id ?? '');
  }
  return out.sort();
}

describe('HTTPRoutes under TeamPolicies', () => {
  it('refuses a route whose namespace’s policy names a role, serves one of the operator’s identity, and registers a hand-made EndpointSlice’s address only once the policy trusts its manager', async () => {
    const gwNs = await namespace('gwt');
    const nsA = await namespace('gwt-a');
    const nsB = await namespace('gwt-b');
    const policyA = `gwt-a-${suffix}`;
    const policyB = `gwt-b-${suffix}`;
    const role = 'arn:aws:iam::222233334444:role/skylift-team-b';
    // The Gateway's own namespace is judged too: served with the operator's identity.
    await applyTeamPolicy(admin, policies, `gwt-gw-${suffix}`, { namespaces: { names: [gwNs] } });
    await applyTeamPolicy(admin, policies, policyA, { namespaces: { names: [nsA] } });
    await applyTeamPolicy(admin, policies, policyB, { namespaces: { names: [nsB] }, aws: { roleArn: role } });
    const opts = { namespace: [gwNs, nsA, nsB].join(','), endpoint: proxy.endpoint, client: admin, tenants };
    running.push(
      await startController(
        (s) =>
          new GatewayController({
            client: s.client,
            clock: s.clock,
            logger: s.logger,
            metrics: s.metrics,
            namespaces: s.settings.namespaces,
            defaults: { scheme: 'internal', subnetTags: { [subnetTag]: '1' }, inboundCIDRs: ['127.0.0.0/8'] },
            ...gatewayTenancyOptions(s, defaultMyIngressSettings),
          }),
        opts,
      ),
    );
    running.push(await startController((s) => gatewayGroupController(s, { pollMs: 300 }), opts));
    await serviceWithSlice(nsA, mesh, meshPodIp);
    await serviceWithSlice(nsB, 'endpointslice-controller.k8s.io', '10.250.9.6');

    const className = `skylift-tenancy-${suffix}`;
    await admin.create(resourcePath(gatewayClassType), {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: className },
      spec: { controllerName: skyliftGatewayControllerName },
    });
    const gw = { ns: gwNs, name: 'shared' };
    await admin.create(resourcePath(gatewayType, { namespace: gwNs }), {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: gw.name },
      spec: {
        gatewayClassName: className,
        listeners: [
          { name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } },
        ],
      },
    });
    const hostA = `a-${suffix}.gateway.example.com`;
    await createRoute(nsA, 'shop', gw, hostA);
    await createRoute(nsB, 'pay', gw, `b-${suffix}.gateway.example.com`);

    // The route of the namespace served as another role: not Accepted, saying why and how to fix it.
    const refused = await routeAccepted(nsB, 'pay', 'NotAllowedByTeamPolicy');
    expect(refused.status).toBe('False');
    expect(refused.message).toMatch(
      new RegExp(
        `^TeamPolicy ${policyB} serves namespace ${nsB} as role ${role}, but Gateway ${gwNs}/shared \\(MyIngressGroup .*\\)'s load balancer is the operator's own.*or the team uses a load balancer in its own account`,
      ),
    );
    await routeAccepted(nsA, 'shop', 'Accepted');
    const groups = await admin.get<{ items: MyIngressGroup[] }>(resourcePath(myIngressGroupType));
    const group = groups.items.find(
      (g) => g.metadata.annotations?.['skylift.dev/gateway'] === `${gwNs}/shared`,
    );
    const lb = group?.status?.arn ?? '';
    expect(lb).not.toBe('');
    expect(group?.status?.members?.map((m) => [m.namespace, m.name, m.state])).toEqual(
      [
        [nsA, 'shop', 'Attached'],
        [nsB, 'pay', 'Forbidden'],
      ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
    // Only the served route's rule is on the load balancer, and only it counts as attached.
    expect(await ruleHosts(lb)).toEqual([hostA]);
    await waitFor(
      async () => {
        const g = await admin.get<Gateway>(resourcePath(gatewayType, { namespace: gwNs, name: 'shared' }));
        return g.status?.listeners?.find((l) => l.name === 'http')?.attachedRoutes === 1 ? true : undefined;
      },
      { timeoutMs: 30_000, description: 'the listener counting the served route only' },
    );

    // The served route's target group exists, without the hand-made slice's address: only
    // Kubernetes' EndpointSlice controller is trusted while the policy lists no other manager.
    const uidA = (await admin.get<HTTPRoute>(resourcePath(httpRouteType, { namespace: nsA, name: 'shop' })))
      .metadata.uid;
    const before = await waitFor(async () => memberTargets(uidA ?? ''), {
      timeoutMs: 30_000,
      description: `the target group of route ${nsA}/shop`,
    });
    expect(before).toEqual([]);

    // After create: the policy trusts the mesh's slices; the address is registered.
    await applyTeamPolicy(admin, policies, policyA, {
      namespaces: { names: [nsA] },
      guardrails: { loadBalancers: { endpointSliceManagers: [mesh] } },
    });
    await waitFor(
      async () => ((await memberTargets(uidA ?? ''))?.includes(meshPodIp) === true ? true : undefined),
      { timeoutMs: 30_000, description: `${meshPodIp} registered for route ${nsA}/shop` },
    );
    // And the refused route still has nothing on the load balancer.
    expect(await ruleHosts(lb)).toEqual([hostA]);
  });
});
