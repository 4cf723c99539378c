// The target-health readiness gate, with the MyIngress controller, moto through the fault proxy and
// the ALB data plane health-checking real loopback backends. No kubelet runs here: the test plays
// it, creating Pods that carry the gate (as the MutatingAdmissionPolicy would make them, see
// readinessGatePolicy.test.ts) and writing their status (IP, ContainersReady), and plays the
// EndpointSlice controller, listing their endpoints as not ready (the gate keeps them so).
import { EC2Client } from '@aws-sdk/client-ec2';
import {
  DescribeTargetHealthCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AlbDataPlane } from '../../dev/albDataPlane/dataPlane.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { myIngressType, type MyIngress, type MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import { myIngressController } from '../../src/kinds/myingress/controller.ts';
import { targetHealthGate, type PodLike } from '../../src/kinds/myingress/readinessGate.ts';
import { startAlbDataPlane } from '../support/albDataPlane.ts';
import { startController, type RunningController } from '../support/controllers.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { vpcWithTwoSubnets } from '../support/vpc.ts';
import { createMyIngress } from '../support/myingressObjects.ts';

const admin = kubeClient();
let proxy: AwsFaultProxy;
let dp: AlbDataPlane;
let ec2: EC2Client;
let elb: ElasticLoadBalancingV2Client;
let subnets: string[];
const running: RunningController[] = [];

/**
 * A backend on its own loopback address 127.0.0.x, standing for a Pod at 10.250.0.x: `/health`
 * answers `healthStatus`, `/b-health` `bStatus`.
 */
interface Backend {
  /** The Pod IP it stands for. */
  readonly ip: string;
  healthStatus: number;
  bStatus: number;
  readonly server: Server;
}
const backends: Backend[] = [];
/** The port every backend listens on (one Service targetPort). */
let port = 0;

async function startBackend(loopback: string): Promise<Backend> {
  const ip = loopback.replace(/^127\.0\.0\./, '10.250.0.');
  const server = createServer();
  const b: Backend = { ip, healthStatus: 200, bStatus: 200, server };
  server.on('request', (req, res) => {
    const status = req.url === '/health' ? b.healthStatus : req.url === '/b-health' ? b.bStatus : 200;
    res.writeHead(status, { 'content-type': 'text/plain' }).end(ip);
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(port, loopback, () => resolveListen());
  });
  port = (server.address() as AddressInfo).port;
  backends.push(b);
  return b;
}

beforeAll(async () => {
  await installCrds(admin);
  ec2 = new EC2Client(awsClientConfig(stackInfo().awsEndpoint));
  ({ subnets } = await vpcWithTwoSubnets(ec2, 91));
  proxy = await startFaultProxy();
  // Health checks 20 times faster than configured: an interval of 5 s probes every 250 ms.
  // Kubernetes refuses loopback addresses in EndpointSlices: the Pods get 10.250.0.x, which the data
  // plane dials as 127.0.0.x, where the backends listen.
  dp = await startAlbDataPlane({
    proxy,
    healthCheckTimeScale: 0.05,
    dialAddress: (ip) => ip.replace(/^10\.250\.0\./, '127.0.0.'),
  });
  elb = new ElasticLoadBalancingV2Client(awsClientConfig(proxy.endpoint));
  for (const ip of ['127.0.0.61', '127.0.0.62', '127.0.0.63', '127.0.0.64']) await startBackend(ip);
});

afterAll(async () => {
  await dp.stop();
  await proxy.stop();
  for (const b of backends) await new Promise((r) => b.server.close(r));
  elb.destroy();
  ec2.destroy();
});

afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

async function setup(prefix: string): Promise<string> {
  const ns = await newNamespace(admin, prefix);
  running.push(
    await startController((s) => myIngressController(s, { pollMs: 300, gatePollMs: 200 }), {
      namespace: ns,
      endpoint: proxy.endpoint,
    }),
  );
  // A Service without a selector: the test lists its endpoints itself.
  await admin.create(`/api/v1/namespaces/${ns}/services`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web' },
    spec: { ports: [{ port: 80, targetPort: port }] },
  });
  return ns;
}

/** A Pod as the kubelet would show it: its IP and whether its containers are ready; `gated`: it carries the gate. */
async function pod(ns: string, name: string, ip: string, opts: { gated: boolean }): Promise<void> {
  await admin.create(`/api/v1/namespaces/${ns}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      labels: { app: 'web', ...(opts.gated ? { [targetHealthGate.label]: targetHealthGate.enabled } : {}) },
    },
    spec: {
      containers: [{ name: 'c', image: 'example.invalid/none:1' }],
      ...(opts.gated ? { readinessGates: [{ conditionType: targetHealthGate.conditionType }] } : {}),
    },
  });
  await admin.patch(
    `/api/v1/namespaces/${ns}/pods/${name}/status`,
    {
      status: {
        podIP: ip,
        podIPs: [{ ip }],
        conditions: [
          { type: 'ContainersReady', status: 'True' },
          { type: 'Ready', status: 'False' },
        ],
      },
    },
    'strategic',
  );
}

/** The Service's EndpointSlice as the EndpointSlice controller makes it: each Pod's endpoint, with its conditions. */
async function endpoints(
  ns: string,
  eps: { pod: string; ip: string; ready: boolean; terminating?: boolean }[],
): Promise<void> {
  await admin.patch(
    `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices/web-1`,
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'web-1',
        labels: {
          'kubernetes.io/service-name': 'web',
          'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
        },
      },
      addressType: 'IPv4',
      ports: [{ port, protocol: 'TCP', name: '' }],
      endpoints: eps.map((e) => ({
        addresses: [e.ip],
        conditions: {
          ready: e.ready,
          serving: e.ready || e.terminating === true,
          terminating: e.terminating === true,
        },
        targetRef: { kind: 'Pod', name: e.pod, namespace: ns },
      })),
    },
    'apply',
    { fieldManager: 'test', force: true },
  );
}

const spec = (healthPath = '/health'): MyIngressSpec => ({
  subnets,
  scheme: 'internal',
  listeners: [
    {
      port: 80,
      protocol: 'HTTP',
      defaultAction: {
        forward: {
          service: {
            name: 'web',
            port: 80,
            healthCheck: {
              path: healthPath,
              intervalSeconds: 5,
              timeoutSeconds: 2,
              healthyThresholdCount: 2,
            },
          },
        },
      },
    },
  ],
});

const ingress = (ns: string, name: string, s: MyIngressSpec): Promise<MyIngress> =>
  createMyIngress(admin, ns, name, s);

const tgOf = (m: MyIngress): string =>
  String((m.status?.targetGroups as { arn: string }[] | undefined)?.[0]?.arn);

/** The targets AWS (moto, directly) has registered in a target group, `ip:port`, sorted. */
async function registered(tgArn: string): Promise<string[]> {
  const direct = new ElasticLoadBalancingV2Client(awsClientConfig(stackInfo().awsEndpoint));
  try {
    const out = await direct.send(new DescribeTargetHealthCommand({ TargetGroupArn: tgArn }));
    return (out.TargetHealthDescriptions ?? [])
      .map((d) => `${d.Target?.Id ?? ''}:${d.Target?.Port ?? ''}`)
      .sort();
  } finally {
    direct.destroy();
  }
}

async function gateOf(
  ns: string,
  name: string,
): Promise<{ status: string; reason?: string; message?: string } | undefined> {
  const p = await admin.get<PodLike>(`/api/v1/namespaces/${ns}/pods/${name}`);
  return p.status?.conditions?.find((c) => c.type === targetHealthGate.conditionType);
}

async function waitGate(
  ns: string,
  name: string,
  status: string,
  reason: string,
): Promise<{ message?: string }> {
  let last: unknown;
  return waitFor(
    async () => {
      const c = await gateOf(ns, name);
      last = c;
      return c?.status === status && c.reason === reason ? c : undefined;
    },
    { timeoutMs: 30_000, description: `Pod ${name} gate ${status} (${reason})`, intervalMs: 100 },
  ).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; last seen ${JSON.stringify(last)}`);
  });
}

describe('the target-health readiness gate', () => {
  it('registers a gated Pod as soon as its containers are ready, and opens its gate once it is healthy', async () => {
    const ns = await setup('gate-basic');
    const [a, b, c] = backends;
    await pod(ns, 'web-a', a?.ip ?? '', { gated: true });
    await pod(ns, 'web-b', b?.ip ?? '', { gated: true });
    // An ungated Pod whose endpoint is not ready is not a target (as before the gate).
    await pod(ns, 'web-c', c?.ip ?? '', { gated: false });
    if (b !== undefined) b.healthStatus = 500;
    await endpoints(ns, [
      { pod: 'web-a', ip: a?.ip ?? '', ready: false },
      { pod: 'web-b', ip: b?.ip ?? '', ready: false },
      { pod: 'web-c', ip: c?.ip ?? '', ready: false },
    ]);
    const m = await ingress(ns, 'shop', spec());
    await waitFor(
      async () => {
        const r = await registered(tgOf(m));
        return r.length === 2 ? r : undefined;
      },
      { timeoutMs: 30_000, description: 'the two gated Pods registered', intervalMs: 100 },
    ).then((r) => expect(r).toEqual([`${a?.ip ?? ''}:${port}`, `${b?.ip ?? ''}:${port}`]));

    // a passes its health checks: its gate opens; b fails them: its gate stays shut, saying why.
    const opened = await waitGate(ns, 'web-a', 'True', 'TargetHealthy');
    expect(opened.message).toBe(`target ${a?.ip ?? ''}:${port} healthy in MyIngress shop backend web:80`);
    const shut = await waitGate(ns, 'web-b', 'False', 'TargetUnhealthy');
    expect(shut.message).toContain(
      `target ${b?.ip ?? ''}:${port} is unhealthy in MyIngress shop backend web:80`,
    );

    // b recovers: its gate opens too.
    if (b !== undefined) b.healthStatus = 200;
    await waitGate(ns, 'web-b', 'True', 'TargetHealthy');
    // The ungated Pod was never touched.
    expect(await gateOf(ns, 'web-c')).toBeUndefined();
    expect(await registered(tgOf(m))).not.toContain(`${c?.ip ?? ''}:${port}`);
  });

  it('opens a gate only once every MyIngress routing to the Pod has it healthy', async () => {
    const ns = await setup('gate-two');
    const d = backends[3];
    if (d !== undefined) d.bStatus = 500;
    await ingress(ns, 'first', spec('/health'));
    await ingress(ns, 'second', spec('/b-health'));
    await pod(ns, 'web-d', d?.ip ?? '', { gated: true });
    await endpoints(ns, [{ pod: 'web-d', ip: d?.ip ?? '', ready: false }]);
    // Healthy behind `first`, unhealthy behind `second`: shut, naming `second`.
    const shut = await waitGate(ns, 'web-d', 'False', 'TargetUnhealthy');
    expect(shut.message).toContain('in MyIngress second backend web:80');
    if (d !== undefined) d.bStatus = 200;
    const opened = await waitGate(ns, 'web-d', 'True', 'TargetHealthy');
    expect(opened.message).toContain('MyIngress first backend web:80, MyIngress second backend web:80');
  });

  it('deregisters an endpoint at once when it turns terminating, and stops reading health once no gate waits', async () => {
    const ns = await setup('gate-term');
    const [a] = backends;
    await pod(ns, 'web-a', a?.ip ?? '', { gated: true });
    await endpoints(ns, [{ pod: 'web-a', ip: a?.ip ?? '', ready: false }]);
    const m = await ingress(ns, 'shop', spec());
    await waitGate(ns, 'web-a', 'True', 'TargetHealthy');
    // The kubelet makes it Ready; the EndpointSlice controller lists it ready.
    await endpoints(ns, [{ pod: 'web-a', ip: a?.ip ?? '', ready: true }]);
    await waitFor(async () => ((await registered(tgOf(m))).length === 1 ? true : undefined), {
      timeoutMs: 30_000,
      description: 'one target',
      intervalMs: 100,
    });
    // No Pod waits for a gate: a look reads no target health.
    proxy.resetCalls();
    await admin.patch(
      resourcePath(myIngressType, { namespace: ns, name: 'shop' }),
      { metadata: { annotations: { 'skylift.test/poke': '1' } } },
      'merge',
    );
    // Terminating (still serving while its preStop runs): deregistered at once.
    await endpoints(ns, [{ pod: 'web-a', ip: a?.ip ?? '', ready: false, terminating: true }]);
    await waitFor(
      async () =>
        (await registered(tgOf(m))).every((t) => !t.startsWith(`${a?.ip ?? ''}:`)) ? true : undefined,
      {
        timeoutMs: 30_000,
        description: 'the terminating endpoint deregistered',
        intervalMs: 100,
      },
    );
    const calls = proxy.countsByOperation();
    expect(calls['elasticloadbalancing:DeregisterTargets']).toBe(1);
    // DescribeTargetHealth only as the look before the deregistration reads the registered targets.
    expect(calls['elasticloadbalancing:DescribeTargetHealth'] ?? 0).toBeLessThanOrEqual(1);
  });
});
