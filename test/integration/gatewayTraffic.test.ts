// The Gateway API on Application Load Balancers (issue 30), proven by traffic: a Gateway of a
// Skylift GatewayClass becomes one ALB (its MyIngressGroup), Programmed with the ALB's DNS name as
// its address; HTTPRoutes of two namespaces its listener admits become its rules, and requests sent
// through the ALB data plane (dev/albDataPlane/) reach each route's Service, counted; a route of a
// namespace the listener does not admit, one asking what Skylift cannot serve, and one naming a
// Service that does not exist get the Gateway API's conditions; a header and method match and a
// 3:1 weighted split of two backends are served and counted. A route deleted takes its rules
// with it; the Gateway deleted takes the load balancer and its target groups. A control plane of
// its own with the Gateway API's CRDs (no other test's operator serves these Gateways); moto and
// the data plane are the shared stack's. The test lists each Service's endpoint itself.
import { EC2Client } from '@aws-sdk/client-ec2';
import {
  DescribeLoadBalancersCommand,
  DescribeTargetGroupsCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { ACMClient, ListCertificatesCommand } from '@aws-sdk/client-acm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlbDataPlane, Endpoint } from '../../dev/albDataPlane/dataPlane.ts';
import { acmDeleteInUseAsAws, acmReimportAsAws } from '../../dev/acmFidelity.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import type { ControlPlane } from '../../dev/controlplane.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
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
import { gatewayGroupName } from '../../src/kinds/myingress/gateway/names.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { startAlbDataPlane } from '../support/albDataPlane.ts';
import {
  serviceTo,
  startLoopbackBackend,
  stopLoopbackBackend,
  type LoopbackBackend,
} from '../support/loopbackBackends.ts';
import type { RunningController } from '../support/controllers.ts';
import {
  gatewaySubnets,
  startGatewayControlPlane,
  startGatewayControllers,
} from '../support/gatewayControllers.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { selfSignedCertificate, type SelfSigned } from '../support/acmCertificates.ts';

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly location?: string | undefined;
}

/** One GET `path` with Host `host` (and `headers`); a connection error is status 0. */
function send(
  ep: Endpoint,
  host: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolveAnswer) => {
    const req = request(
      { host: ep.host, port: ep.port, path, headers: { host, ...headers }, timeout: 5000, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolveAnswer({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString(),
            location: res.headers.location,
          }),
        );
        res.on('error', (err) => resolveAnswer({ status: 0, body: err.message }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => resolveAnswer({ status: 0, body: err.message }));
    req.end();
  });
}

/** One GET `path` over TLS with server name and Host `host`, trusting `ca`; the served certificate's serial. */
function sendTls(
  ep: Endpoint,
  host: string,
  path: string,
  ca: string,
): Promise<Answer & { authorized?: boolean; serial?: string }> {
  return new Promise((resolveAnswer) => {
    const req = httpsRequest(
      {
        host: ep.host,
        port: ep.port,
        path,
        servername: host,
        headers: { host },
        ca,
        rejectUnauthorized: false,
        timeout: 5000,
        agent: false,
      },
      (res) => {
        const socket = res.socket as TLSSocket;
        const peer = socket.getPeerCertificate();
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolveAnswer({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString(),
            authorized: socket.authorized,
            serial: peer.serialNumber,
          }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => resolveAnswer({ status: 0, body: err.message }));
    req.end();
  });
}

/** A kubernetes.io/tls Secret's data for a certificate and its key. */
function tlsData(c: SelfSigned): Record<string, string> {
  return {
    'tls.crt': Buffer.from(c.certificatePem).toString('base64'),
    'tls.key': Buffer.from(c.privateKeyPem).toString('base64'),
  };
}

async function round(
  ep: Endpoint,
  host: string,
  path: string,
  n: number,
  headers: Record<string, string> = {},
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const a = await send(ep, host, path, headers);
    const k = `${a.status} ${a.body.slice(0, 20)}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

const ROUND = 20;
const suffix = randomBytes(3).toString('hex');
const HOST_A = `a-${suffix}.gateway.example.com`;
const HOST_B = `b-${suffix}.gateway.example.com`;
/** The subnets' tag the Gateway's load balancer is placed by (no other test's subnets carry it). */
const subnetTag = `skylift.test/gateway-${suffix}`;

let cp: ControlPlane;
let admin: KubeClient;
let proxy: AwsFaultProxy;
let ec2: EC2Client;
let acm: ACMClient;
let elb: ElasticLoadBalancingV2Client;
let dp: AlbDataPlane;
let backendA: LoopbackBackend;
let backendB: LoopbackBackend;
const running: RunningController[] = [];

beforeAll(async () => {
  ({ cp, admin } = await startGatewayControlPlane('gateway-traffic'));
  const direct = awsClientConfig(stackInfo().awsEndpoint);
  ec2 = new EC2Client(direct);
  elb = new ElasticLoadBalancingV2Client(direct);
  acm = new ACMClient(direct);
  await gatewaySubnets(ec2, 33, subnetTag);
  proxy = await startFaultProxy();
  // ACM as AWS behaves where moto does not: a re-import keeps the certificate's tags, and a
  // certificate a listener serves cannot be deleted.
  proxy.inject(acmReimportAsAws());
  proxy.inject(acmDeleteInUseAsAws());
  backendA = await startLoopbackBackend('A', '127.0.0.81', 2);
  backendB = await startLoopbackBackend('B', '127.0.0.82', 2);
  // Through the operator's proxy: the keys it imports into ACM are what the data plane serves.
  dp = await startAlbDataPlane({
    proxy,
    healthCheckTimeScale: 0.05,
    propagationDelayMs: 500,
    pollMs: 200,
    dialAddress: (ip) => ip.replace(/^10\.250\.2\./, '127.0.0.'),
  });
}, 180_000);

afterAll(async () => {
  for (const r of running.splice(0)) await r.stop();
  await dp.stop();
  await proxy.stop();
  for (const b of [backendA, backendB]) await stopLoopbackBackend(b);
  elb.destroy();
  ec2.destroy();
  acm.destroy();
  await cp.stop();
});

async function namespace(prefix: string, labels: Record<string, string> = {}): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await admin.create('/api/v1/namespaces', { metadata: { name, labels } });
  return name;
}

function route(
  ns: string,
  name: string,
  gw: { ns: string; name: string },
  spec: Omit<HTTPRoute['spec'], 'parentRefs'>,
): HTTPRoute {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { namespace: ns, name },
    spec: { parentRefs: [{ name: gw.name, namespace: gw.ns }], ...spec },
  };
}

const cond = (cs: readonly Condition[] | undefined, type: string): Condition | undefined =>
  cs?.find((c) => c.type === type);

/** Polls the route until its Skylift parent entry's condition `type` has `reason`. */
function routeWhere(ns: string, name: string, type: string, reason: string): Promise<HTTPRoute> {
  return waitFor(
    async () => {
      const r = await admin.get<HTTPRoute>(resourcePath(httpRouteType, { namespace: ns, name }));
      const mine = r.status?.parents?.find((p) => p.controllerName === skyliftGatewayControllerName);
      const c = cond(mine?.conditions, type);
      return c?.reason === reason && c.observedGeneration === r.metadata.generation ? r : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100, description: `HTTPRoute ${ns}/${name} ${type} ${reason}` },
  );
}

describe('Gateway API on an ALB', () => {
  it('makes a Gateway one load balancer, serves its HTTPRoutes by host and path, reports what it cannot serve, and cleans up route by route and Gateway', async () => {
    const gwNs = await namespace('gw');
    const nsA = await namespace('route-a', { 'gateway-access': 'yes' });
    const nsB = await namespace('route-b', { 'gateway-access': 'yes' });
    const nsC = await namespace('route-c');
    const namespaces = [gwNs, nsA, nsB, nsC].join(',');
    running.push(
      ...(await startGatewayControllers({
        namespace: namespaces,
        endpoint: proxy.endpoint,
        client: admin,
        subnetTag,
        resyncPeriod: '2s',
      })),
    );
    const wildcard = `*.gateway.example.com`;
    const first = await selfSignedCertificate({ domain: wildcard });
    await admin.create(`/api/v1/namespaces/${gwNs}/secrets`, {
      metadata: { name: 'wildcard' },
      type: 'kubernetes.io/tls',
      data: tlsData(first),
    });

    const className = `skylift-${suffix}`;
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
          {
            name: 'http',
            port: 80,
            protocol: 'HTTP',
            allowedRoutes: {
              namespaces: { from: 'Selector', selector: { matchLabels: { 'gateway-access': 'yes' } } },
            },
          },
          { name: 'tcp', port: 9000, protocol: 'TCP' },
          {
            name: 'https',
            port: 443,
            protocol: 'HTTPS',
            tls: { certificateRefs: [{ name: 'wildcard' }] },
            allowedRoutes: {
              namespaces: { from: 'Selector', selector: { matchLabels: { 'gateway-access': 'yes' } } },
            },
          },
          {
            name: 'no-secret',
            port: 8443,
            protocol: 'HTTPS',
            tls: { certificateRefs: [{ name: 'nothing' }] },
          },
        ],
      },
    });
    // Programmed, with the ALB's DNS name as its address; the TCP listener is refused by name.
    const programmed = await waitFor(
      async () => {
        const g = await admin.get<Gateway>(resourcePath(gatewayType, { namespace: gwNs, name: gw.name }));
        return cond(g.status?.conditions, 'Programmed')?.status === 'True' ? g : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, description: 'the Gateway Programmed' },
    );
    expect(cond(programmed.status?.conditions, 'Accepted')).toMatchObject({
      status: 'True',
      reason: 'ListenersNotValid',
    });
    const tls = programmed.status?.listeners?.find((l) => l.name === 'tcp');
    expect(cond(tls?.conditions, 'Accepted')).toMatchObject({
      status: 'False',
      reason: 'UnsupportedProtocol',
    });
    // A Gateway none of whose listeners can be served: not Accepted, and no load balancer.
    await admin.create(resourcePath(gatewayType, { namespace: gwNs }), {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'only-tcp' },
      spec: { gatewayClassName: className, listeners: [{ name: 'tcp', port: 9001, protocol: 'TCP' }] },
    });
    const onlyTcp = await waitFor(
      async () => {
        const g = await admin.get<Gateway>(resourcePath(gatewayType, { namespace: gwNs, name: 'only-tcp' }));
        return cond(g.status?.conditions, 'Accepted')?.observedGeneration === 1 ? g : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, description: 'the TCP-only Gateway judged' },
    );
    expect(cond(onlyTcp.status?.conditions, 'Accepted')).toMatchObject({
      status: 'False',
      reason: 'ListenersNotValid',
    });
    expect(cond(onlyTcp.status?.listeners?.[0]?.conditions, 'Accepted')?.reason).toBe('UnsupportedProtocol');
    const group = await admin.get<MyIngressGroup>(
      resourcePath(myIngressGroupType, { name: gatewayGroupName(gwNs, gw.name) }),
    );
    const lbArn = group.status?.arn ?? '';
    expect(lbArn).not.toBe('');
    expect(programmed.status?.addresses).toEqual([{ type: 'Hostname', value: group.status?.dnsName }]);

    await serviceTo(admin, nsA, 'web-a', backendA);
    await serviceTo(admin, nsB, 'web-b', backendB);
    // LoopbackBackend B as a second Service of namespace a, for its header and weighted routes.
    await serviceTo(admin, nsA, 'web-a2', backendB);
    const routes = resourcePath(httpRouteType, { namespace: nsA });
    await admin.create(
      routes,
      route(nsA, 'a', gw, { hostnames: [HOST_A], rules: [{ backendRefs: [{ name: 'web-a', port: 80 }] }] }),
    );
    await admin.create(
      resourcePath(httpRouteType, { namespace: nsB }),
      route(nsB, 'b', gw, {
        hostnames: [HOST_B],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/api' } }],
            backendRefs: [{ name: 'web-b', port: 80 }],
          },
        ],
      }),
    );
    // Not admitted by the listener; asking for a header match an ALB cannot serve; naming no Service.
    await admin.create(
      resourcePath(httpRouteType, { namespace: nsC }),
      route(nsC, 'c', gw, { rules: [{ backendRefs: [{ name: 'web-a', port: 80 }] }] }),
    );
    await admin.create(
      routes,
      route(nsA, 'regex', gw, {
        hostnames: [`r-${HOST_A}`],
        rules: [
          {
            matches: [{ headers: [{ type: 'RegularExpression', name: 'x-team', value: 'a.*' }] }],
            backendRefs: [{ name: 'web-a', port: 80 }],
          },
        ],
      }),
    );
    // Served: a header and method match before the route's catch-all; a 3:1 split of two backends.
    await admin.create(
      routes,
      route(nsA, 'headers', gw, {
        hostnames: [`h-${HOST_A}`],
        rules: [
          {
            matches: [{ headers: [{ name: 'x-team', value: 'b' }], method: 'GET' }],
            backendRefs: [{ name: 'web-a2', port: 80 }],
          },
          { backendRefs: [{ name: 'web-a', port: 80 }] },
        ],
      }),
    );
    await admin.create(
      routes,
      route(nsA, 'split', gw, {
        hostnames: [`s-${HOST_A}`],
        rules: [
          {
            backendRefs: [
              { name: 'web-a', port: 80, weight: 3 },
              { name: 'web-a2', port: 80, weight: 1 },
            ],
          },
        ],
      }),
    );
    await admin.create(
      routes,
      route(nsA, 'missing', gw, {
        hostnames: [`m-${HOST_A}`],
        rules: [{ backendRefs: [{ name: 'nothing', port: 80 }] }],
      }),
    );

    // A redirect (RequestRedirect): answered by the load balancer, no backend.
    await admin.create(
      routes,
      route(nsA, 'moved', gw, {
        hostnames: [`r-${HOST_A}`],
        rules: [
          {
            filters: [
              {
                type: 'RequestRedirect',
                requestRedirect: { hostname: 'moved.example.com', statusCode: 301 },
              },
            ],
          },
        ],
      }),
    );

    await routeWhere(nsA, 'a', 'Accepted', 'Accepted');
    await routeWhere(nsA, 'a', 'ResolvedRefs', 'ResolvedRefs');
    await routeWhere(nsA, 'moved', 'Accepted', 'Accepted');
    await routeWhere(nsB, 'b', 'Accepted', 'Accepted');
    await routeWhere(nsC, 'c', 'Accepted', 'NotAllowedByListeners');
    const regex = await routeWhere(nsA, 'regex', 'Accepted', 'UnsupportedValue');
    expect(cond(regex.status?.parents?.[0]?.conditions, 'Accepted')?.message).toContain(
      'spec.rules[0].matches[0].headers[0]: RegularExpression',
    );
    await routeWhere(nsA, 'headers', 'Accepted', 'Accepted');
    await routeWhere(nsA, 'split', 'Accepted', 'Accepted');
    await routeWhere(nsA, 'missing', 'ResolvedRefs', 'BackendNotFound');
    await routeWhere(nsA, 'missing', 'Accepted', 'Accepted');

    const ep = await waitFor(() => dp.endpointOf(lbArn, 80), {
      timeoutMs: 30_000,
      description: 'the data plane serving port 80',
    });
    // Route statuses are written apart from the load balancer: wait until all three routes' rules serve.
    await waitFor(
      async () =>
        (await send(ep, HOST_A, '/')).body === 'A' &&
        (await send(ep, HOST_B, '/api/x')).body === 'B' &&
        (await send(ep, `m-${HOST_A}`, '/')).status === 500
          ? true
          : undefined,
      { timeoutMs: 60_000, intervalMs: 200, description: 'the three routes served through the data plane' },
    );
    // Counted: each host and path reaches its own backend; what no route matches gets the 404.
    const [a0, b0] = [backendA.hits, backendB.hits];
    expect(await round(ep, HOST_A, '/anything', ROUND)).toEqual({ '200 A': ROUND });
    expect(await round(ep, HOST_B, '/api/x', ROUND)).toEqual({ '200 B': ROUND });
    expect(await round(ep, HOST_B, '/api', ROUND)).toEqual({ '200 B': ROUND });
    expect(await round(ep, HOST_B, '/apix', ROUND)).toEqual({ '404 ': ROUND });
    expect(await round(ep, `m-${HOST_A}`, '/', ROUND)).toEqual({ '500 ': ROUND });
    expect([backendA.hits - a0, backendB.hits - b0]).toEqual([ROUND, 2 * ROUND]);
    // The header and method match before the route’s catch-all, counted.
    await waitFor(
      async () =>
        (await send(ep, `h-${HOST_A}`, '/', { 'x-team': 'b' })).body === 'B' &&
        (await send(ep, `s-${HOST_A}`, '/')).status === 200
          ? true
          : undefined,
      { timeoutMs: 60_000, intervalMs: 200, description: 'the header and weighted routes served' },
    );
    const [a1, b1] = [backendA.hits, backendB.hits];
    expect(await round(ep, `h-${HOST_A}`, '/', ROUND, { 'x-team': 'b' })).toEqual({ '200 B': ROUND });
    expect(await round(ep, `h-${HOST_A}`, '/', ROUND, { 'x-team': 'a' })).toEqual({ '200 A': ROUND });
    expect(await round(ep, `h-${HOST_A}`, '/', ROUND)).toEqual({ '200 A': ROUND });
    expect([backendA.hits - a1, backendB.hits - b1]).toEqual([2 * ROUND, ROUND]);
    // Weights 3:1 over 200 requests: both get some, the heavier more (a wide band on purpose).
    const split = await round(ep, `s-${HOST_A}`, '/', 200);
    console.info(`HTTPRoute split 3:1 over 200 requests: ${JSON.stringify(split)}`);
    expect((split['200 A'] ?? 0) + (split['200 B'] ?? 0)).toBe(200);
    expect(split['200 B'] ?? 0).toBeGreaterThan(0);
    expect(split['200 A'] ?? 0).toBeGreaterThan(split['200 B'] ?? 0);
    // The Gateway counts the routes attached to its listener: a, b, missing, headers, split and moved.
    const attached = await waitFor(
      async () => {
        const g = await admin.get<Gateway>(resourcePath(gatewayType, { namespace: gwNs, name: gw.name }));
        const n = g.status?.listeners?.find((l) => l.name === 'http')?.attachedRoutes;
        return n === 6 ? n : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 100, description: 'attachedRoutes 6' },
    );
    expect(attached).toBe(6);
    // The redirect, counted: every request moved with its path and query, no backend reached.
    await waitFor(async () => ((await send(ep, `r-${HOST_A}`, '/')).status === 301 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 200,
      description: 'the redirect served',
    });
    const [ra, rb] = [backendA.hits, backendB.hits];
    for (let i = 0; i < ROUND; i++) {
      const moved = await send(ep, `r-${HOST_A}`, '/x/y?z=1');
      expect([moved.status, moved.location]).toEqual([301, 'http://moved.example.com:80/x/y?z=1']);
    }
    expect([backendA.hits - ra, backendB.hits - rb]).toEqual([0, 0]);

    // HTTPS: the Secret imported into ACM and served by the 443 listener; routes attach there too.
    const tlsEp = await waitFor(() => dp.endpointOf(lbArn, 443), {
      timeoutMs: 30_000,
      description: 'the data plane serving port 443',
    });
    const overTls = await waitFor(
      async () => {
        const a = await sendTls(tlsEp, HOST_A, '/', first.certificatePem);
        return a.body === 'A' ? a : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, description: 'host A served over HTTPS' },
    );
    expect(overTls.authorized).toBe(true);
    const tlsHits = backendA.hits;
    for (let i = 0; i < ROUND; i++)
      expect((await sendTls(tlsEp, HOST_A, '/', first.certificatePem)).body).toBe('A');
    expect(backendA.hits - tlsHits).toBe(ROUND);
    const imported = async (): Promise<string[]> =>
      ((await acm.send(new ListCertificatesCommand({}))).CertificateSummaryList ?? [])
        .filter((c) => c.DomainName === wildcard)
        .map((c) => c.CertificateArn ?? '');
    const [certArn] = await imported();
    expect(await imported()).toHaveLength(1);

    // Rotation: a new certificate in the Secret is re-imported into the same ARN and served.
    const second = await selfSignedCertificate({ domain: wildcard });
    await admin.patch(`/api/v1/namespaces/${gwNs}/secrets/wildcard`, { data: tlsData(second) }, 'merge');
    const rotated = await waitFor(
      async () => {
        const a = await sendTls(tlsEp, HOST_A, '/', second.certificatePem);
        return a.authorized === true && a.body === 'A' ? a : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, description: 'the rotated certificate served' },
    );
    expect(rotated.serial).not.toBe(overTls.serial);
    expect(await imported()).toEqual([certArn]);

    // Route a deleted: its host falls to the listener's 404; b keeps being served.
    await admin.delete(resourcePath(httpRouteType, { namespace: nsA, name: 'a' }));
    await waitFor(async () => ((await send(ep, HOST_A, '/')).status === 404 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 100,
      description: 'host A at the default 404',
    });
    expect(await round(ep, HOST_B, '/api/x', ROUND)).toEqual({ '200 B': ROUND });

    // The Gateway deleted: its group, load balancer and target groups go.
    await admin.delete(resourcePath(gatewayType, { namespace: gwNs, name: gw.name }));
    await waitFor(
      async () => {
        try {
          await admin.get(resourcePath(myIngressGroupType, { name: gatewayGroupName(gwNs, gw.name) }));
          return undefined;
        } catch {
          return true;
        }
      },
      { timeoutMs: 60_000, intervalMs: 200, description: 'the Gateway’s MyIngressGroup gone' },
    );
    const lbs = await elb.send(new DescribeLoadBalancersCommand({})).then((r) => r.LoadBalancers ?? []);
    expect(lbs.find((l) => l.LoadBalancerArn === lbArn)).toBeUndefined();
    const tgs = await elb.send(new DescribeTargetGroupsCommand({})).then((r) => r.TargetGroups ?? []);
    expect(tgs.filter((t) => (t.LoadBalancerArns ?? []).includes(lbArn))).toEqual([]);
    // The imported certificate went with the group.
    expect(await imported()).toEqual([]);
  });
});
