// A Gateway's lifecycle around its load balancer (docs/gateway.md, "Deleting a Gateway"): Skylift's
// finalizer goes on a Gateway of its class before the load balancer is made, and comes off only
// once the Gateway's MyIngressGroup is gone — so a deleted Gateway stays (with its
// deletionTimestamp) until ELBv2 has no load balancer or target group of it (nor of its route) and
// ACM no certificate it imported; another controller's finalizer is left alone; a Gateway moved to
// another class, or whose class is deleted, loses its load balancer and the finalizer; a Gateway
// deleted while the operator is stopped stays until it is back. And a route whose rule ELBv2 refuses for
// good is not Accepted, with AWS's words, while the others are served (docs/gateway.md, "What
// Skylift says on a route"). A control plane of its own with the Gateway API's CRDs; the
// Gateway controller and the Gateway groups' controller run in the test process against moto,
// through the fault proxy (which holds a deletion back and refuses a rule on purpose).
import { ACMClient, ListCertificatesCommand } from '@aws-sdk/client-acm';
import { CreateTagsCommand, EC2Client } from '@aws-sdk/client-ec2';
import {
  DescribeListenersCommand,
  DescribeLoadBalancersCommand,
  DescribeRulesCommand,
  DescribeTargetGroupsCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acmDeleteInUseAsAws, acmReimportAsAws } from '../../dev/acmFidelity.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { startControlPlane, type ControlPlane } from '../../dev/controlplane.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { installCrds, installGatewayApiCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import {
  gatewayClassType,
  gatewayType,
  httpRouteType,
  skyliftGatewayControllerName,
  type Gateway,
  type HTTPRoute,
} from '../../src/apis/gatewayApi.ts';
import type { Condition } from '../../src/apis/managed.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { myIngressGroupType, type MyIngressGroup } from '../../src/kinds/myingress/group/api.ts';
import { gatewayFinalizer } from '../../src/kinds/myingress/gateway/finalizer.ts';
import { GatewayController } from '../../src/kinds/myingress/gateway/gatewayController.ts';
import { gatewayGroupController } from '../../src/kinds/myingress/gateway/groupController.ts';
import { gatewayGroupName } from '../../src/kinds/myingress/gateway/names.ts';
import { loadBalancerRefusedReason } from '../../src/kinds/myingress/gateway/status.ts';
import { isKubeNotFound } from '../../src/runtime/errors.ts';
import { KubeClient } from '../../src/runtime/kube/client.ts';
import { loadKubeconfig } from '../../src/runtime/kube/kubeconfigLoad.ts';
import { selfSignedCertificate } from '../support/acmCertificates.ts';
import { startController, type RunningController } from '../support/controllers.ts';
import { scratchDir } from '../support/scratch.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { vpcWithTwoSubnets } from '../support/vpc.ts';

const suffix = randomBytes(3).toString('hex');
/** The subnets' tag the Gateways' load balancers are placed by (no other test's subnets carry it). */
const subnetTag = `skylift.test/gwlife-${suffix}`;
const className = `skylift-life-${suffix}`;
const otherClass = `other-life-${suffix}`;
const foreignFinalizer = 'example.com/keep';

let cp: ControlPlane;
let admin: KubeClient;
let proxy: AwsFaultProxy;
let ec2: EC2Client;
let elb: ElasticLoadBalancingV2Client;
let acm: ACMClient;
let ns: string;
const running: RunningController[] = [];

beforeAll(async () => {
  cp = await startControlPlane({ dir: await scratchDir('gateway-lifecycle') });
  admin = new KubeClient(loadKubeconfig(cp.kubeconfigPath('admin')));
  await installCrds(admin);
  await installGatewayApiCrds(admin);
  const direct = awsClientConfig(stackInfo().awsEndpoint);
  ec2 = new EC2Client(direct);
  elb = new ElasticLoadBalancingV2Client(direct);
  acm = new ACMClient(direct);
  const { subnets } = await vpcWithTwoSubnets(ec2, 36);
  await ec2.send(new CreateTagsCommand({ Resources: subnets, Tags: [{ Key: subnetTag, Value: '1' }] }));
  proxy = await startFaultProxy();
  // ACM as AWS behaves where moto does not: a certificate a listener serves cannot be deleted.
  proxy.inject(acmReimportAsAws());
  proxy.inject(acmDeleteInUseAsAws());
  ns = `gwlife-${suffix}`;
  await admin.create('/api/v1/namespaces', { metadata: { name: ns } });
  await startOperator();
  for (const [name, controllerName] of [
    [className, skyliftGatewayControllerName],
    [otherClass, 'example.com/other-controller'],
  ] as const)
    await admin.create(resourcePath(gatewayClassType), {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name },
      spec: { controllerName },
    });
}, 180_000);

afterAll(async () => {
  await stopOperator();
  await proxy.stop();
  ec2.destroy();
  elb.destroy();
  acm.destroy();
  await cp.stop();
});

/** The Gateway controller and the Gateway groups' controller, as the operator runs them. */
async function startOperator(): Promise<void> {
  const opts = { namespace: ns, endpoint: proxy.endpoint, client: admin };
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
        }),
      opts,
    ),
  );
  running.push(
    await startController((s) => gatewayGroupController(s, { pollMs: 300 }), { ...opts, resyncPeriod: '2s' }),
  );
}

async function stopOperator(): Promise<void> {
  for (const r of running.splice(0)) await r.stop();
}

const gatewayPath = (name: string): string => resourcePath(gatewayType, { namespace: ns, name });

/** The Gateway as the apiserver has it; undefined once it is gone. */
async function gatewayNow(name: string): Promise<Gateway | undefined> {
  try {
    return await admin.get<Gateway>(gatewayPath(name));
  } catch (err) {
    if (isKubeNotFound(err)) return undefined;
    throw err;
  }
}

/** The Gateway's MyIngressGroup once its load balancer is made (its ARN in status). */
function loadBalancerOf(name: string): Promise<MyIngressGroup> {
  return waitFor(
    async () => {
      const g = await admin
        .get<MyIngressGroup>(resourcePath(myIngressGroupType, { name: gatewayGroupName(ns, name) }))
        .catch(() => undefined);
      return typeof g?.status?.arn === 'string' && g.status.arn !== '' ? g : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 200, description: `Gateway ${name}’s load balancer` },
  );
}

async function loadBalancerExists(arn: string): Promise<boolean> {
  const lbs = await elb.send(new DescribeLoadBalancersCommand({})).then((r) => r.LoadBalancers ?? []);
  return lbs.some((l) => l.LoadBalancerArn === arn);
}

async function targetGroupsOf(arn: string): Promise<string[]> {
  const tgs = await elb.send(new DescribeTargetGroupsCommand({})).then((r) => r.TargetGroups ?? []);
  return tgs.filter((t) => (t.LoadBalancerArns ?? []).includes(arn)).map((t) => t.TargetGroupArn ?? '');
}

async function targetGroupsExisting(arns: readonly string[]): Promise<string[]> {
  const tgs = await elb.send(new DescribeTargetGroupsCommand({})).then((r) => r.TargetGroups ?? []);
  return tgs.map((t) => t.TargetGroupArn ?? '').filter((a) => arns.includes(a));
}

async function certificatesFor(domain: string): Promise<string[]> {
  return ((await acm.send(new ListCertificatesCommand({}))).CertificateSummaryList ?? [])
    .filter((c) => c.DomainName === domain)
    .map((c) => c.CertificateArn ?? '');
}

async function createGateway(
  name: string,
  extra: Partial<Gateway['metadata']> = {},
  https = false,
  gatewayClassName = className,
): Promise<void> {
  await admin.create(resourcePath(gatewayType, { namespace: ns }), {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name, ...extra },
    spec: {
      gatewayClassName,
      listeners: [
        { name: 'http', port: 80, protocol: 'HTTP' },
        ...(https
          ? [
              {
                name: 'https',
                port: 443,
                protocol: 'HTTPS',
                tls: { certificateRefs: [{ name: `${name}-tls` }] },
              },
            ]
          : []),
      ],
    },
  });
}

describe('a Gateway’s finalizer', () => {
  it('holds a deleted Gateway until its load balancer, target groups and imported certificate are gone', async () => {
    const name = 'held';
    const domain = `held-${suffix}.example.com`;
    const cert = await selfSignedCertificate({ domain });
    await admin.create(`/api/v1/namespaces/${ns}/secrets`, {
      metadata: { name: `${name}-tls` },
      type: 'kubernetes.io/tls',
      data: {
        'tls.crt': Buffer.from(cert.certificatePem).toString('base64'),
        'tls.key': Buffer.from(cert.privateKeyPem).toString('base64'),
      },
    });
    await createGateway(name, {}, true);
    const group = await loadBalancerOf(name);
    const lbArn = String(group.status?.arn);
    const gw = await gatewayNow(name);
    expect(gw?.metadata.finalizers).toEqual([gatewayFinalizer]);
    await waitFor(async () => ((await certificatesFor(domain)).length === 1 ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 200,
      description: 'the listener’s certificate imported into ACM',
    });
    // A route with a backend: a rule and a target group of its own on the load balancer.
    await admin.create(`/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'web' },
      spec: { ports: [{ port: 80, targetPort: 8080 }] },
    });
    await admin.create(resourcePath(httpRouteType, { namespace: ns }), {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'web' },
      spec: { parentRefs: [{ name }], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
    });
    const tgArns = await waitFor(
      async () => {
        const arns = await targetGroupsOf(lbArn);
        return arns.length > 0 ? arns : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, description: 'the route’s target group on the load balancer' },
    );

    // ELBv2 refuses to delete the load balancer for now: the Gateway must wait for it.
    const holdBack = proxy.inject({
      service: 'elasticloadbalancing',
      operation: 'DeleteLoadBalancer',
      fault: { kind: 'error', status: 503, code: 'ServiceUnavailable', message: 'held back by the test' },
    });
    await admin.delete(gatewayPath(name));
    await waitFor(() => (holdBack.hits >= 2 ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 100,
      description: 'the operator trying to delete the load balancer',
    });
    const deleting = await gatewayNow(name);
    expect(deleting?.metadata.deletionTimestamp).toBeDefined();
    expect(deleting?.metadata.finalizers).toEqual([gatewayFinalizer]);
    expect(await loadBalancerExists(lbArn)).toBe(true);
    holdBack.remove();

    await waitFor(async () => ((await gatewayNow(name)) === undefined ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 100,
      description: 'the Gateway gone',
    });
    // Gone only after everything it had in AWS.
    expect(await loadBalancerExists(lbArn)).toBe(false);
    expect(await targetGroupsExisting(tgArns)).toEqual([]);
    expect(await certificatesFor(domain)).toEqual([]);
    await expect(
      admin.get(resourcePath(myIngressGroupType, { name: gatewayGroupName(ns, name) })),
    ).rejects.toSatisfy(isKubeNotFound);
  }, 180_000);

  it('removes only its own finalizer: another controller’s stays', async () => {
    const name = 'shared-finalizers';
    await createGateway(name, { finalizers: [foreignFinalizer] });
    const group = await loadBalancerOf(name);
    const lbArn = String(group.status?.arn);
    expect((await gatewayNow(name))?.metadata.finalizers).toEqual([foreignFinalizer, gatewayFinalizer]);
    await admin.delete(gatewayPath(name));
    const left = await waitFor(
      async () => {
        const gw = await gatewayNow(name);
        return gw !== undefined && !(gw.metadata.finalizers ?? []).includes(gatewayFinalizer)
          ? gw
          : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100, description: 'Skylift’s finalizer removed' },
    );
    expect(left.metadata.finalizers).toEqual([foreignFinalizer]);
    expect(await loadBalancerExists(lbArn)).toBe(false);
    // Theirs removed by them: the Gateway goes.
    await admin.patch(
      gatewayPath(name),
      { metadata: { finalizers: [], resourceVersion: left.metadata.resourceVersion } },
      'merge',
    );
    await waitFor(async () => ((await gatewayNow(name)) === undefined ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 100,
      description: 'the Gateway gone',
    });
  }, 180_000);

  it('a Gateway moved to another class loses its load balancer and the finalizer, and stays', async () => {
    const name = 'moved';
    await createGateway(name);
    const group = await loadBalancerOf(name);
    const lbArn = String(group.status?.arn);
    expect((await gatewayNow(name))?.metadata.finalizers).toEqual([gatewayFinalizer]);
    await admin.patch(gatewayPath(name), { spec: { gatewayClassName: otherClass } }, 'merge');
    const moved = await waitFor(
      async () => {
        const gw = await gatewayNow(name);
        return gw !== undefined && (gw.metadata.finalizers ?? []).length === 0 ? gw : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100, description: 'the finalizer removed from the moved Gateway' },
    );
    expect(moved.metadata.deletionTimestamp).toBeUndefined();
    expect(await loadBalancerExists(lbArn)).toBe(false);
    await expect(
      admin.get(resourcePath(myIngressGroupType, { name: gatewayGroupName(ns, name) })),
    ).rejects.toSatisfy(isKubeNotFound);
    // Deleted now, it goes at once: nothing of Skylift's holds it.
    await admin.delete(gatewayPath(name));
    await waitFor(async () => ((await gatewayNow(name)) === undefined ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 100,
      description: 'the moved Gateway deleted',
    });
  }, 180_000);
});

describe('a Gateway’s finalizer, when its class or the operator goes', () => {
  it('a Gateway whose GatewayClass is deleted loses its load balancer and the finalizer', async () => {
    const name = 'classless';
    const ownClass = `skylift-gone-${suffix}`;
    await admin.create(resourcePath(gatewayClassType), {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: ownClass },
      spec: { controllerName: skyliftGatewayControllerName },
    });
    await createGateway(name, {}, false, ownClass);
    const lbArn = String((await loadBalancerOf(name)).status?.arn);
    expect((await gatewayNow(name))?.metadata.finalizers).toEqual([gatewayFinalizer]);
    await admin.delete(resourcePath(gatewayClassType, { name: ownClass }));
    const left = await waitFor(
      async () => {
        const gw = await gatewayNow(name);
        return gw !== undefined && (gw.metadata.finalizers ?? []).length === 0 ? gw : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100, description: 'the finalizer removed from the classless Gateway' },
    );
    expect(left.metadata.deletionTimestamp).toBeUndefined();
    expect(await loadBalancerExists(lbArn)).toBe(false);
    await admin.delete(gatewayPath(name));
  }, 180_000);

  it('a Gateway deleted while the operator is down stays until the operator is back and has deleted its load balancer', async () => {
    const name = 'while-down';
    await createGateway(name);
    const lbArn = String((await loadBalancerOf(name)).status?.arn);
    await waitFor(
      async () =>
        (await gatewayNow(name))?.metadata.finalizers?.includes(gatewayFinalizer) ? true : undefined,
      { timeoutMs: 30_000, intervalMs: 100, description: 'the finalizer on the Gateway' },
    );
    await stopOperator();
    await admin.delete(gatewayPath(name));
    // Nothing serves it: Kubernetes keeps it for the finalizer, and the load balancer is there.
    const held = await gatewayNow(name);
    expect(held?.metadata.deletionTimestamp).toBeDefined();
    expect(held?.metadata.finalizers).toEqual([gatewayFinalizer]);
    expect(await loadBalancerExists(lbArn)).toBe(true);
    await startOperator();
    await waitFor(async () => ((await gatewayNow(name)) === undefined ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 100,
      description: 'the Gateway gone after the operator’s restart',
    });
    expect(await loadBalancerExists(lbArn)).toBe(false);
  }, 180_000);
});

/** The Skylift parent entry's condition `type` of a route, when it is at the route's generation. */
async function routeCondition(
  name: string,
  type: string,
): Promise<{ route: HTTPRoute; c: Condition | undefined }> {
  const route = await admin.get<HTTPRoute>(resourcePath(httpRouteType, { namespace: ns, name }));
  const mine = route.status?.parents?.find((p) => p.controllerName === skyliftGatewayControllerName);
  const c = mine?.conditions.find((x) => x.type === type);
  return { route, c: c?.observedGeneration === route.metadata.generation ? c : undefined };
}

/** Polls until the route's Skylift Accepted condition has `reason` at the route's generation. */
function acceptedWhere(name: string, reason: string): Promise<Condition> {
  return waitFor(
    async () => {
      const { c } = await routeCondition(name, 'Accepted');
      return c?.reason === reason ? c : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100, description: `HTTPRoute ${name} Accepted ${reason}` },
  );
}

/** The host-header values of the rules on port 80 of load balancer `arn`. */
async function hostsServed(arn: string): Promise<string[]> {
  const listeners = (await elb.send(new DescribeListenersCommand({ LoadBalancerArn: arn }))).Listeners ?? [];
  const l = listeners.find((x) => x.Port === 80);
  const rules = (await elb.send(new DescribeRulesCommand({ ListenerArn: l?.ListenerArn }))).Rules ?? [];
  return rules.flatMap((r) =>
    (r.Conditions ?? []).flatMap((c) => c.HostHeaderConfig?.Values ?? c.Values ?? []),
  );
}

describe('a route its Gateway’s load balancer cannot carry', () => {
  it('is not Accepted, with AWS’s words, when ELBv2 refuses its rule; the other routes are served; a passing failure changes nothing; fixed, it is Accepted', async () => {
    const gwName = 'routes';
    await admin.create(`/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'api' },
      spec: { ports: [{ port: 80, targetPort: 8080 }] },
    });
    // Hostnames ordered by the Gateway API's precedence (the longer first): flaky, good, bad. So
    // bad's rule is always the last, made by a CreateRule of its own.
    const host = (h: string): string => `${h}-${suffix}.example.com`;
    const refusal = 'The maximum number of rules per load balancer has been reached';
    const refused = proxy.inject({
      service: 'elasticloadbalancing',
      operation: 'CreateRule',
      match: (call) => call.body.includes(host('b')),
      fault: { kind: 'error', status: 400, code: 'TooManyRules', message: refusal },
    });
    await createGateway(gwName);
    const routeOf = (name: string, h: string): HTTPRoute => ({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name },
      spec: {
        parentRefs: [{ name: gwName }],
        hostnames: [host(h)],
        rules: [{ backendRefs: [{ name: 'api', port: 80 }] }],
      },
    });
    const routes = resourcePath(httpRouteType, { namespace: ns });
    await admin.create(routes, routeOf('good', 'good'));
    await admin.create(routes, routeOf('bad', 'b'));

    const c = await acceptedWhere('bad', loadBalancerRefusedReason);
    expect(c.status).toBe('False');
    expect(c.message).toContain(`TooManyRules: ${refusal}`);
    expect(c.message).toContain(`MyIngressGroup ${gatewayGroupName(ns, gwName)}`);
    expect(refused.hits).toBeGreaterThan(0);
    // The other route is served all the same.
    expect((await acceptedWhere('good', 'Accepted')).status).toBe('True');
    const lbArn = String((await loadBalancerOf(gwName)).status?.arn);
    const served = await hostsServed(lbArn);
    expect(served).toContain(host('good'));
    expect(served).not.toContain(host('b'));
    const group = await admin.get<MyIngressGroup>(
      resourcePath(myIngressGroupType, { name: gatewayGroupName(ns, gwName) }),
    );
    const badUid = (await routeCondition('bad', 'Accepted')).route.metadata.uid;
    expect(group.status?.members?.find((m) => m.uid === badUid)).toMatchObject({
      state: 'Invalid',
      rules: 0,
    });

    // A passing failure (ELBv2 unavailable for a new route's rule): retried, and no route's entry
    // changes meanwhile — the new route has none yet, the others keep theirs.
    const unavailable = proxy.inject({
      service: 'elasticloadbalancing',
      operation: /^(CreateRule|ModifyRule)$/,
      match: (call) => call.body.includes(host('flaky')),
      fault: { kind: 'error', status: 503, code: 'ServiceUnavailable', message: 'try again' },
    });
    await admin.create(routes, routeOf('flaky', 'flaky'));
    await waitFor(() => (unavailable.hits >= 3 ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 100,
      description: 'ELBv2 failing the new route’s rule a few times',
    });
    const flaky = await admin.get<HTTPRoute>(resourcePath(httpRouteType, { namespace: ns, name: 'flaky' }));
    expect(
      flaky.status?.parents?.filter((p) => p.controllerName === skyliftGatewayControllerName) ?? [],
    ).toEqual([]);
    expect((await routeCondition('good', 'Accepted')).c?.reason).toBe('Accepted');
    expect((await routeCondition('bad', 'Accepted')).c?.reason).toBe(loadBalancerRefusedReason);
    unavailable.remove();
    expect((await acceptedWhere('flaky', 'Accepted')).status).toBe('True');

    // ELBv2 takes the rule again (a quota raised) and the route is edited: tried again, Accepted.
    refused.remove();
    await admin.patch(
      resourcePath(httpRouteType, { namespace: ns, name: 'bad' }),
      {
        spec: {
          rules: [
            {
              matches: [{ path: { type: 'PathPrefix', value: '/v2' } }],
              backendRefs: [{ name: 'api', port: 80 }],
            },
          ],
        },
      },
      'merge',
    );
    expect((await acceptedWhere('bad', 'Accepted')).status).toBe('True');
    expect(await hostsServed(lbArn)).toContain(host('b'));
  }, 180_000);
});
