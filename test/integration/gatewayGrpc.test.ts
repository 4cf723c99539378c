// GRPCRoutes on an Application Load Balancer (issue 30), proven by traffic: a Gateway with an HTTP
// and an HTTPS listener becomes one ALB; a GRPCRoute attached to the HTTPS listener becomes its
// rules — a method match (`/service/method` path pattern) split 3:1 over two target groups of
// protocol version GRPC, another method to one backend, a third to a Service of another namespace
// a ReferenceGrant from GRPCRoutes allows — and unary gRPC calls over TLS and HTTP/2 through the
// ALB data plane reach loopback gRPC servers (test/support/grpcEcho.ts), counted per backend and
// method (the same call over HTTP/1.1 answered 464, as an ALB does). The HTTPS listener lists
// GRPCRoute among its kinds and the HTTP one does not; a GRPCRoute naming the HTTP listener is
// NotAllowedByListeners, as is a younger HTTPRoute sharing the GRPCRoute's listener and hostname
// (the Gateway API accepts one of the two), and one with a RegularExpression method match is refused
// (UnsupportedValue naming the field) with no rule on the ALB. A control plane of its own with the
// Gateway API's CRDs; moto and the data plane are the shared stack's.
import { EC2Client } from '@aws-sdk/client-ec2';
import {
  DescribeListenersCommand,
  DescribeRulesCommand,
  DescribeTargetGroupsCommand,
  DescribeTargetHealthCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { randomBytes } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlbDataPlane } from '../../dev/albDataPlane/dataPlane.ts';
import { acmDeleteInUseAsAws, acmReimportAsAws } from '../../dev/acmFidelity.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import type { ControlPlane } from '../../dev/controlplane.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { waitFor } from '../../dev/wait.ts';
import {
  gatewayClassType,
  gatewayType,
  grpcRouteType,
  httpRouteType,
  referenceGrantType,
  skyliftGatewayControllerName,
  type Gateway,
  type GRPCRoute,
} from '../../src/apis/gatewayApi.ts';
import type { Condition } from '../../src/apis/managed.ts';
import { resourcePath, type ResourceType } from '../../src/apis/meta.ts';
import { gatewayGroupName } from '../../src/kinds/myingress/gateway/names.ts';
import { myIngressGroupType, type MyIngressGroup } from '../../src/kinds/myingress/group/api.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { selfSignedCertificate } from '../support/acmCertificates.ts';
import { startAlbDataPlane } from '../support/albDataPlane.ts';
import type { RunningController } from '../support/controllers.ts';
import {
  gatewaySubnets,
  startGatewayControlPlane,
  startGatewayControllers,
} from '../support/gatewayControllers.ts';
import {
  callsOf,
  grpcCall,
  startGrpcBackend,
  stopGrpcBackend,
  type GrpcAnswer,
  type GrpcBackend,
} from '../support/grpcEcho.ts';
import { serviceTo } from '../support/loopbackBackends.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';

const suffix = randomBytes(3).toString('hex');
const HOST = `grpc-${suffix}.gateway.example.com`;
const subnetTag = `skylift.test/gateway-grpc-${suffix}`;
const SAY = '/echo.Echo/Say';
const SHOUT = '/echo.Echo/Shout';
const WHISPER = '/echo.Echo/Whisper';

let cp: ControlPlane;
let admin: KubeClient;
let proxy: AwsFaultProxy;
let ec2: EC2Client;
let elb: ElasticLoadBalancingV2Client;
let dp: AlbDataPlane;
let backends: GrpcBackend[] = [];
const running: RunningController[] = [];

beforeAll(async () => {
  ({ cp, admin } = await startGatewayControlPlane('gateway-grpc'));
  const direct = awsClientConfig(stackInfo().awsEndpoint);
  ec2 = new EC2Client(direct);
  elb = new ElasticLoadBalancingV2Client(direct);
  await gatewaySubnets(ec2, 37, subnetTag);
  proxy = await startFaultProxy();
  proxy.inject(acmReimportAsAws());
  proxy.inject(acmDeleteInUseAsAws());
  backends = [
    await startGrpcBackend('A', '127.0.0.101', 5),
    await startGrpcBackend('B', '127.0.0.102', 5),
    await startGrpcBackend('C', '127.0.0.103', 5),
  ];
  dp = await startAlbDataPlane({
    proxy,
    healthCheckTimeScale: 0.05,
    propagationDelayMs: 500,
    pollMs: 200,
    dialAddress: (ip) => ip.replace(/^10\.250\.5\./, '127.0.0.'),
  });
}, 180_000);

afterAll(async () => {
  for (const r of running.splice(0)) await r.stop();
  await dp.stop();
  await proxy.stop();
  for (const b of backends) await stopGrpcBackend(b);
  elb.destroy();
  ec2.destroy();
  await cp.stop();
});

async function namespace(prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await admin.create('/api/v1/namespaces', { metadata: { name } });
  return name;
}

const cond = (cs: readonly Condition[] | undefined, type: string): Condition | undefined =>
  cs?.find((c) => c.type === type);

/** Polls the route (a GRPCRoute unless `type` says) until its Skylift parent entry's condition `type` has `reason` at its generation. */
function routeWhere(
  ns: string,
  name: string,
  type: string,
  reason: string,
  kind: ResourceType = grpcRouteType,
): Promise<GRPCRoute> {
  return waitFor(
    async () => {
      const r = await admin.get<GRPCRoute>(resourcePath(kind, { namespace: ns, name }));
      const mine = r.status?.parents?.find((p) => p.controllerName === skyliftGatewayControllerName);
      const c = cond(mine?.conditions, type);
      return c?.reason === reason && c.observedGeneration === r.metadata.generation ? r : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100, description: `${kind.kind} ${ns}/${name} ${type} ${reason}` },
  );
}

function grpcRoute(ns: string, name: string, spec: GRPCRoute['spec']): GRPCRoute {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GRPCRoute',
    metadata: { namespace: ns, name },
    spec,
  };
}

/** `n` calls of `path`, counted by `<grpc-status> <answer's backend>` (`-` for none). */
async function round(ep: { host: string; port: number }, host: string, path: string, n: number) {
  const out: Record<string, number> = {};
  const answers: GrpcAnswer[] = [];
  for (let i = 0; i < n; i++) {
    const a = await grpcCall(ep, host, path, `hello ${i}`);
    answers.push(a);
    const k = `${a.grpcStatus ?? `http ${a.status}`} ${a.message === '' ? '-' : (a.message.split(':')[0] ?? '-')}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return { counts: out, answers };
}

describe('GRPCRoute on an ALB', () => {
  it('serves a GRPCRoute’s method matches and weighted backends over HTTPS and HTTP/2, and refuses what an ALB cannot match', async () => {
    const gwNs = await namespace('gw');
    const routeNs = await namespace('grpc');
    const otherNs = await namespace('other');
    running.push(
      ...(await startGatewayControllers({
        namespace: [gwNs, routeNs, otherNs].join(','),
        endpoint: proxy.endpoint,
        client: admin,
        subnetTag,
      })),
    );
    const cert = await selfSignedCertificate({ domain: '*.gateway.example.com' });
    await admin.create(`/api/v1/namespaces/${gwNs}/secrets`, {
      metadata: { name: 'cert' },
      type: 'kubernetes.io/tls',
      data: {
        'tls.crt': Buffer.from(cert.certificatePem).toString('base64'),
        'tls.key': Buffer.from(cert.privateKeyPem).toString('base64'),
      },
    });
    const className = `skylift-grpc-${suffix}`;
    await admin.create(resourcePath(gatewayClassType), {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: className },
      spec: { controllerName: skyliftGatewayControllerName },
    });
    const fromAll = { namespaces: { from: 'All' as const } };
    await admin.create(resourcePath(gatewayType, { namespace: gwNs }), {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'grpc' },
      spec: {
        gatewayClassName: className,
        listeners: [
          { name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: fromAll },
          {
            name: 'https',
            port: 443,
            protocol: 'HTTPS',
            tls: { certificateRefs: [{ name: 'cert' }] },
            allowedRoutes: fromAll,
          },
        ],
      },
    });
    const programmed = await waitFor(
      async () => {
        const g = await admin.get<Gateway>(resourcePath(gatewayType, { namespace: gwNs, name: 'grpc' }));
        return cond(g.status?.conditions, 'Programmed')?.status === 'True' ? g : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, description: 'the Gateway Programmed' },
    );
    const kinds = (name: string): string[] =>
      (programmed.status?.listeners?.find((l) => l.name === name)?.supportedKinds ?? []).map((k) => k.kind);
    expect(kinds('http')).toEqual(['HTTPRoute']);
    expect(kinds('https')).toEqual(['HTTPRoute', 'GRPCRoute']);
    const group = await admin.get<MyIngressGroup>(
      resourcePath(myIngressGroupType, { name: gatewayGroupName(gwNs, 'grpc') }),
    );
    const lbArn = group.status?.arn ?? '';
    expect(lbArn).not.toBe('');

    const [a, b, c] = backends as [GrpcBackend, GrpcBackend, GrpcBackend];
    await serviceTo(admin, routeNs, 'echo-a', a);
    await serviceTo(admin, routeNs, 'echo-b', b);
    await serviceTo(admin, otherNs, 'echo-c', c);
    await admin.create(resourcePath(referenceGrantType, { namespace: otherNs }), {
      apiVersion: 'gateway.networking.k8s.io/v1beta1',
      kind: 'ReferenceGrant',
      metadata: { name: 'from-grpc' },
      spec: {
        from: [{ group: 'gateway.networking.k8s.io', kind: 'GRPCRoute', namespace: routeNs }],
        to: [{ group: '', kind: 'Service' }],
      },
    });
    const routes = resourcePath(grpcRouteType, { namespace: routeNs });
    const parent = { name: 'grpc', namespace: gwNs };
    await admin.create(
      routes,
      grpcRoute(routeNs, 'echo', {
        parentRefs: [parent],
        hostnames: [HOST],
        rules: [
          {
            matches: [{ method: { service: 'echo.Echo', method: 'Say' } }],
            backendRefs: [
              { name: 'echo-a', port: 80, weight: 3 },
              { name: 'echo-b', port: 80, weight: 1 },
            ],
          },
          {
            matches: [{ method: { service: 'echo.Echo', method: 'Shout' } }],
            backendRefs: [{ name: 'echo-b', port: 80 }],
          },
          {
            matches: [{ method: { service: 'echo.Echo', method: 'Whisper' } }],
            backendRefs: [{ name: 'echo-c', namespace: otherNs, port: 80 }],
          },
        ],
      }),
    );
    // Naming the HTTP listener: an ALB serves gRPC on HTTPS listeners only.
    await admin.create(
      routes,
      grpcRoute(routeNs, 'plain', {
        parentRefs: [{ ...parent, sectionName: 'http' }],
        hostnames: [`p-${HOST}`],
        rules: [{ backendRefs: [{ name: 'echo-a', port: 80 }] }],
      }),
    );
    const REGEX_HOST = `x-${HOST}`;
    await admin.create(
      routes,
      grpcRoute(routeNs, 'regex', {
        parentRefs: [parent],
        hostnames: [REGEX_HOST],
        rules: [
          {
            matches: [{ method: { type: 'RegularExpression', service: 'echo\\..*', method: 'Say' } }],
            backendRefs: [{ name: 'echo-a', port: 80 }],
          },
        ],
      }),
    );

    // An HTTPRoute on the HTTPS listener with the GRPCRoute's hostname: the Gateway API accepts one
    // of the two, the older (here the first by namespace/name, were both made in one second).
    await admin.create(resourcePath(httpRouteType, { namespace: routeNs }), {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'web' },
      spec: {
        parentRefs: [{ ...parent, sectionName: 'https' }],
        hostnames: [HOST],
        rules: [{ backendRefs: [{ name: 'echo-a', port: 80 }] }],
      },
    });
    const web = await routeWhere(routeNs, 'web', 'Accepted', 'NotAllowedByListeners', httpRouteType);
    expect(cond(web.status?.parents?.[0]?.conditions, 'Accepted')?.message).toContain('an older GRPCRoute');
    await routeWhere(routeNs, 'echo', 'Accepted', 'Accepted');
    await routeWhere(routeNs, 'echo', 'ResolvedRefs', 'ResolvedRefs');
    await routeWhere(routeNs, 'plain', 'Accepted', 'NotAllowedByListeners');
    const regex = await routeWhere(routeNs, 'regex', 'Accepted', 'UnsupportedValue');
    expect(cond(regex.status?.parents?.[0]?.conditions, 'Accepted')?.message).toContain(
      'spec.rules[0].matches[0].method.type: RegularExpression',
    );

    // In ELBv2: the GRPCRoute's target groups are of protocol version GRPC, health checked as gRPC;
    // its rules are on the HTTPS listener only; the refused route has no rule.
    const tgs =
      (await elb.send(new DescribeTargetGroupsCommand({ LoadBalancerArn: lbArn }))).TargetGroups ?? [];
    expect(tgs).toHaveLength(3);
    for (const tg of tgs)
      expect(tg).toMatchObject({
        ProtocolVersion: 'GRPC',
        HealthCheckPath: '/AWS.ALB/healthcheck',
        Matcher: { GrpcCode: '12' },
      });
    const listeners =
      (await elb.send(new DescribeListenersCommand({ LoadBalancerArn: lbArn }))).Listeners ?? [];
    const rulesOn = async (port: number) => {
      const l = listeners.find((x) => x.Port === port);
      const rules =
        (await elb.send(new DescribeRulesCommand({ ListenerArn: l?.ListenerArn ?? '' }))).Rules ?? [];
      return rules.filter((r) => r.IsDefault !== true);
    };
    const httpsRules = await rulesOn(443);
    expect(
      httpsRules.map((r) => r.Conditions?.find((x) => x.Field === 'path-pattern')?.PathPatternConfig?.Values),
    ).toEqual(expect.arrayContaining([[SAY], [SHOUT], [WHISPER]]));
    expect(httpsRules).toHaveLength(3);
    expect(await rulesOn(80)).toEqual([]);
    expect(JSON.stringify(httpsRules)).not.toContain(REGEX_HOST);

    const ep = await waitFor(() => dp.endpointOf(lbArn, 443), {
      timeoutMs: 30_000,
      description: 'the data plane serving port 443',
    });
    // Every backend healthy (the data plane's gRPC health checks answered 12) and every rule served.
    await waitFor(
      async () => {
        const answers = await Promise.all([
          grpcCall(ep, HOST, SHOUT, 'x'),
          grpcCall(ep, HOST, WHISPER, 'x'),
          grpcCall(ep, HOST, SAY, 'x'),
        ]);
        return answers.every((x) => x.grpcStatus === '0') ? answers : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, description: 'the GRPCRoute served through the data plane' },
    );

    // Healthy by the data plane's gRPC health checks (grpc-status 12 matches GrpcCode 12), as
    // DescribeTargetHealth through the fault proxy reports them: not routed by failing open.
    const measured = new ElasticLoadBalancingV2Client(awsClientConfig(proxy.endpoint));
    await waitFor(
      async () => {
        const states = await Promise.all(
          tgs.map(async (tg) =>
            (
              await measured.send(new DescribeTargetHealthCommand({ TargetGroupArn: tg.TargetGroupArn }))
            ).TargetHealthDescriptions?.map((d) => d.TargetHealth?.State),
          ),
        );
        return states.every((s) => s?.length === 1 && s[0] === 'healthy') ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, description: 'every gRPC target healthy' },
    );
    measured.destroy();

    const ROUND = 20;
    const before = backends.map((x) => [callsOf(x, SAY), callsOf(x, SHOUT), callsOf(x, WHISPER)]);
    const shout = await round(ep, HOST, SHOUT, ROUND);
    expect(shout.counts).toEqual({ '0 B': ROUND });
    expect(
      shout.answers.every((x) => x.alpn === 'h2' && x.message === `B:hello ${shout.answers.indexOf(x)}`),
    ).toBe(true);
    expect((await round(ep, HOST, WHISPER, ROUND)).counts).toEqual({ '0 C': ROUND });
    // A method no rule matches falls to the listener's default 404 (no backend reached).
    expect((await round(ep, HOST, '/echo.Echo/Other', ROUND)).counts).toEqual({ 'http 404 -': ROUND });
    // Weights 3:1 over 200 calls: both get some, the heavier more (a wide band on purpose).
    const split = (await round(ep, HOST, SAY, 200)).counts;
    console.info(`GRPCRoute split 3:1 over 200 calls: ${JSON.stringify(split)}`);
    expect((split['0 A'] ?? 0) + (split['0 B'] ?? 0)).toBe(200);
    expect(split['0 B'] ?? 0).toBeGreaterThan(0);
    expect(split['0 A'] ?? 0).toBeGreaterThan(split['0 B'] ?? 0);
    // Counted at the backends: each call reached the one backend its method and weight chose.
    const after = backends.map((x) => [callsOf(x, SAY), callsOf(x, SHOUT), callsOf(x, WHISPER)]);
    const delta = after.map((row, i) => row.map((n, j) => n - (before[i]?.[j] ?? 0)));
    expect(delta).toEqual([
      [split['0 A'], 0, 0],
      [split['0 B'], ROUND, 0],
      [0, 0, ROUND],
    ]);
    // A gRPC target group takes HTTP/2 only: the same call over HTTP/1.1 is answered 464, as an ALB does.
    const overHttp1 = await new Promise<number>((resolveStatus) => {
      const req = httpsRequest(
        {
          host: ep.host,
          port: ep.port,
          method: 'POST',
          path: SAY,
          servername: HOST,
          headers: { host: HOST, 'content-type': 'application/grpc' },
          rejectUnauthorized: false,
          agent: false,
          timeout: 5000,
        },
        (res) => {
          res.resume();
          resolveStatus(res.statusCode ?? 0);
        },
      );
      req.on('error', () => resolveStatus(0));
      req.end();
    });
    expect(overHttp1).toBe(464);
    // The Gateway counts the GRPCRoute on its HTTPS listener only.
    await waitFor(
      async () => {
        const g = await admin.get<Gateway>(resourcePath(gatewayType, { namespace: gwNs, name: 'grpc' }));
        const n = (name: string) => g.status?.listeners?.find((l) => l.name === name)?.attachedRoutes;
        return n('https') === 1 && n('http') === 0 ? true : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 100, description: 'attachedRoutes https 1, http 0' },
    );

    // The Gateway deleted: its group, load balancer and target groups go.
    await admin.delete(resourcePath(gatewayType, { namespace: gwNs, name: 'grpc' }));
    await waitFor(
      async () => {
        const left = (await elb.send(new DescribeTargetGroupsCommand({}))).TargetGroups ?? [];
        return left.some((t) => tgs.some((x) => x.TargetGroupArn === t.TargetGroupArn)) ? undefined : true;
      },
      { timeoutMs: 60_000, intervalMs: 200, description: 'the GRPC target groups gone' },
    );
  });
});
