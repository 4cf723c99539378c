// The ALB data plane (dev/albDataPlane/) against moto: a load balancer, target groups, a listener
// and rules created with the ELBv2 SDK, three loopback HTTP servers registered as IP targets, and
// requests sent through the data plane, counted where they arrive.
//
// The backends listen on 127.0.0.1, 127.0.0.2 and 127.0.0.3 rather than on one address with three
// ports: moto keys a target group's targets by Id alone, so 127.0.0.1:A and 127.0.0.1:B in one
// group would be one target (AWS keys them by Id and Port).
import { EC2Client } from '@aws-sdk/client-ec2';
import { vpcWithTwoSubnets } from '../support/vpc.ts';
import {
  CreateListenerCommand,
  CreateLoadBalancerCommand,
  CreateRuleCommand,
  CreateTargetGroupCommand,
  DeregisterTargetsCommand,
  DescribeTargetHealthCommand,
  ElasticLoadBalancingV2Client,
  ModifyTargetGroupAttributesCommand,
  RegisterTargetsCommand,
  type Action,
  type RuleCondition,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlbDataPlane, Endpoint, ServedListener } from '../../dev/albDataPlane/dataPlane.ts';
import { dialMapOf } from '../../dev/conformanceDialMap.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { waitFor } from '../../dev/wait.ts';
import { startAlbDataPlane } from '../support/albDataPlane.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';

interface Hit {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly at: number;
}

/** A backend that answers its own name and counts what reaches it; `/health` answers `healthStatus`. */
interface Backend {
  readonly name: string;
  readonly host: string;
  port: number;
  readonly hits: Hit[];
  healthStatus: number;
  readonly server: Server;
}

async function startBackend(name: string, host: string): Promise<Backend> {
  const server = createServer();
  const b: Backend = { name, host, port: 0, hits: [], healthStatus: 200, server };
  server.on('request', (req, res) => {
    if (req.url === '/health') {
      res.writeHead(b.healthStatus).end();
      return;
    }
    b.hits.push({ path: req.url ?? '', headers: req.headers, at: Date.now() });
    res.writeHead(200, { 'content-type': 'text/plain' }).end(name);
  });
  await new Promise<void>((resolveListen) => server.listen(0, host, resolveListen));
  b.port = (server.address() as AddressInfo).port;
  return b;
}

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

function send(
  ep: Endpoint,
  path: string,
  opts: { method?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return new Promise((resolveAnswer, reject) => {
    const req = request(
      {
        host: ep.host,
        port: ep.port,
        path,
        method: opts.method ?? 'GET',
        headers: opts.headers,
        timeout: 5000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          resolveAnswer({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
          });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

const PROPAGATION_MS = 1500;
const DEREGISTRATION_DELAY_S = 3;

let ec2: EC2Client;
let elb: ElasticLoadBalancingV2Client;
let proxy: AwsFaultProxy;
let viaProxy: ElasticLoadBalancingV2Client;
let dp: AlbDataPlane;
let lbArn: string;
let lbDnsName: string;
/** What onListenersChanged reported, in order. */
const reported: (readonly ServedListener[])[] = [];
let tgA: string; // backends a and b
let tgC: string; // backend c
let a: Backend;
let b: Backend;
let c: Backend;
let ep: Endpoint;
/** Weighted forwarding draws from this sequence (cycled). */
const draws = [0.1, 0.9];
/** What beforeAll started, to stop in afterAll. */
const cleanups: (() => Promise<void> | void)[] = [];
let drawIndex = 0;

beforeAll(async () => {
  const direct = awsClientConfig(stackInfo().awsEndpoint);
  ec2 = new EC2Client(direct);
  elb = new ElasticLoadBalancingV2Client(direct);
  cleanups.push(() => {
    ec2.destroy();
    elb.destroy();
  });
  proxy = await startFaultProxy();
  cleanups.push(() => proxy.stop());
  viaProxy = new ElasticLoadBalancingV2Client(awsClientConfig(proxy.endpoint));
  cleanups.push(() => {
    viaProxy.destroy();
  });
  a = await startBackend('a', '127.0.0.1');
  b = await startBackend('b', '127.0.0.2');
  c = await startBackend('c', '127.0.0.3');
  for (const x of [a, b, c])
    cleanups.push(async () => {
      x.server.closeAllConnections();
      await new Promise<void>((closed) => x.server.close(() => closed()));
    });

  const { vpcId, subnets } = await vpcWithTwoSubnets(ec2, 61);
  const lb = await elb.send(
    new CreateLoadBalancerCommand({ Name: 'dataplane-test', Subnets: subnets, Type: 'application' }),
  );
  lbArn = lb.LoadBalancers?.[0]?.LoadBalancerArn ?? '';
  lbDnsName = lb.LoadBalancers?.[0]?.DNSName ?? '';
  const group = async (name: string): Promise<string> => {
    const tg = await elb.send(
      new CreateTargetGroupCommand({
        Name: name,
        Protocol: 'HTTP',
        Port: 80,
        VpcId: vpcId,
        TargetType: 'ip',
        HealthCheckPath: '/health',
        HealthCheckIntervalSeconds: 5,
        HealthCheckTimeoutSeconds: 2,
        HealthyThresholdCount: 2,
        UnhealthyThresholdCount: 2,
        Matcher: { HttpCode: '200-299' },
      }),
    );
    const arn = tg.TargetGroups?.[0]?.TargetGroupArn ?? '';
    await elb.send(
      new ModifyTargetGroupAttributesCommand({
        TargetGroupArn: arn,
        Attributes: [{ Key: 'deregistration_delay.timeout_seconds', Value: String(DEREGISTRATION_DELAY_S) }],
      }),
    );
    return arn;
  };
  tgA = await group('dataplane-a');
  tgC = await group('dataplane-c');
  await elb.send(
    new RegisterTargetsCommand({
      TargetGroupArn: tgA,
      Targets: [
        { Id: a.host, Port: a.port },
        { Id: b.host, Port: b.port },
      ],
    }),
  );
  await elb.send(
    new RegisterTargetsCommand({ TargetGroupArn: tgC, Targets: [{ Id: c.host, Port: c.port }] }),
  );

  const listener = await elb.send(
    new CreateListenerCommand({
      LoadBalancerArn: lbArn,
      Protocol: 'HTTP',
      Port: 80,
      DefaultActions: [
        {
          Type: 'fixed-response',
          FixedResponseConfig: { StatusCode: '404', ContentType: 'text/plain', MessageBody: 'no route' },
        },
      ],
    }),
  );
  const listenerArn = listener.Listeners?.[0]?.ListenerArn ?? '';
  const forward = (arn: string): Action[] => [{ Type: 'forward', TargetGroupArn: arn }];
  const fixed = (status: string, body: string): Action[] => [
    {
      Type: 'fixed-response',
      FixedResponseConfig: { StatusCode: status, ContentType: 'text/plain', MessageBody: body },
    },
  ];
  const rules: [number, RuleCondition[], Action[]][] = [
    [10, [{ Field: 'host-header', HostHeaderConfig: { Values: ['*.api.example.com'] } }], forward(tgC)],
    [20, [{ Field: 'path-pattern', PathPatternConfig: { Values: ['/a/*'] } }], forward(tgA)],
    [
      30,
      [{ Field: 'http-header', HttpHeaderConfig: { HttpHeaderName: 'X-Team', Values: ['blue*'] } }],
      forward(tgC),
    ],
    [
      40,
      [{ Field: 'query-string', QueryStringConfig: { Values: [{ Key: 'backend', Value: 'c' }] } }],
      forward(tgC),
    ],
    [
      50,
      [{ Field: 'http-request-method', HttpRequestMethodConfig: { Values: ['DELETE'] } }],
      fixed('405', 'no deletes'),
    ],
    [
      55,
      [
        { Field: 'source-ip', SourceIpConfig: { Values: ['10.0.0.0/8'] } },
        { Field: 'path-pattern', PathPatternConfig: { Values: ['/src'] } },
      ],
      fixed('200', 'from 10/8'),
    ],
    [
      60,
      [
        { Field: 'source-ip', SourceIpConfig: { Values: ['127.0.0.0/8'] } },
        { Field: 'path-pattern', PathPatternConfig: { Values: ['/src'] } },
      ],
      fixed('200', 'from loopback'),
    ],
    [
      70,
      [{ Field: 'path-pattern', PathPatternConfig: { Values: ['/old/*'] } }],
      [
        {
          Type: 'redirect',
          RedirectConfig: { StatusCode: 'HTTP_301', Protocol: 'HTTPS', Port: '443', Path: '/new/#{path}' },
        },
      ],
    ],
    [
      80,
      [{ Field: 'path-pattern', PathPatternConfig: { Values: ['/weighted'] } }],
      [
        {
          Type: 'forward',
          ForwardConfig: {
            TargetGroups: [
              { TargetGroupArn: tgA, Weight: 1 },
              { TargetGroupArn: tgC, Weight: 1 },
            ],
          },
        },
      ],
    ],
  ];
  for (const [priority, conditions, actions] of rules)
    await elb.send(
      new CreateRuleCommand({
        ListenerArn: listenerArn,
        Priority: priority,
        Conditions: conditions,
        Actions: actions,
      }),
    );

  dp = await startAlbDataPlane({
    proxy,
    pollMs: 200,
    propagationDelayMs: PROPAGATION_MS,
    healthCheckTimeScale: 0.1,
    random: () => draws[drawIndex++ % draws.length] ?? 0,
    onListenersChanged: (listeners) => reported.push(listeners),
  });
  cleanups.push(() => dp.stop());
  ep = await waitFor(() => dp.endpointOf(lbArn, 80), {
    timeoutMs: 10_000,
    description: 'the listener served',
  });
  await waitFor(
    () => {
      const all = [...(dp.targetHealth(tgA) ?? []), ...(dp.targetHealth(tgC) ?? [])];
      return all.length === 3 && all.every((t) => t.state === 'healthy') ? true : undefined;
    },
    { timeoutMs: 15_000, description: 'all three targets healthy' },
  );
}, 60_000);

afterAll(async () => {
  // In reverse order of start; a beforeAll that failed half-way registered only what it started.
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** Measured health through the fault proxy, as the operator reads it: `host` → state. */
async function healthViaProxy(arn: string): Promise<Record<string, string>> {
  const out = await viaProxy.send(new DescribeTargetHealthCommand({ TargetGroupArn: arn }));
  return Object.fromEntries(
    (out.TargetHealthDescriptions ?? []).map((d) => [
      d.Target?.Id ?? '',
      [d.TargetHealth?.State, d.TargetHealth?.Reason].filter((x) => x !== undefined).join(' '),
    ]),
  );
}

describe('ALB data plane', () => {
  it.each([
    {
      reason: 'host-header wildcard → c',
      path: '/',
      headers: { host: 'v1.API.example.com' },
      backends: ['c'],
    },
    { reason: 'path-pattern → a and b, round robin', path: '/a/x', backends: ['a', 'b'] },
    { reason: 'path-pattern is case-sensitive → default', path: '/A/x', status: 404, body: 'no route' },
    {
      reason: 'http-header wildcard, any case → c',
      path: '/',
      headers: { 'x-team': 'BLUE-7' },
      backends: ['c'],
    },
    { reason: 'query-string key/value → c', path: '/q?x=1&backend=C', backends: ['c'] },
    {
      reason: 'http-request-method → fixed response',
      path: '/',
      method: 'DELETE',
      status: 405,
      body: 'no deletes',
    },
    { reason: 'source-ip: the loopback CIDR, not 10/8', path: '/src', status: 200, body: 'from loopback' },
    {
      reason: 'redirect with #{path}, HTTPS 443, query kept',
      path: '/old/page?x=1',
      headers: { host: 'www.example.com' },
      status: 301,
      location: 'https://www.example.com:443/new/old/page?x=1',
    },
    {
      reason: 'weighted forward 1:1, draws 0.1, 0.9, 0.1, 0.9 → a/b group (round robin), c, a/b group, c',
      path: '/weighted',
      backends: ['a', 'b', 'c'],
    },
    { reason: 'default action', path: '/nothing', status: 404, body: 'no route' },
  ])('$reason', async ({ path, method, headers, backends, status, body, location }) => {
    drawIndex = 0;
    const seen = new Set<string>();
    const before = { a: a.hits.length, b: b.hits.length, c: c.hits.length };
    for (let i = 0; i < 4; i++) {
      const r = await send(ep, path, { ...(method ? { method } : {}), ...(headers ? { headers } : {}) });
      if (backends !== undefined) {
        expect(r.status).toBe(200);
        seen.add(r.body);
      } else {
        expect(r.status).toBe(status);
        if (body !== undefined) expect(r.body).toBe(body);
        if (location !== undefined) expect(r.headers.location).toBe(location);
      }
    }
    const counted = { a: a.hits.length - before.a, b: b.hits.length - before.b, c: c.hits.length - before.c };
    if (backends === undefined) expect(counted).toEqual({ a: 0, b: 0, c: 0 });
    else {
      expect([...seen].sort()).toEqual(backends);
      for (const k of ['a', 'b', 'c'] as const) expect(counted[k] > 0).toBe(backends.includes(k));
    }
  });

  it('reports the listeners it serves by DNS name: what the conformance dial map is made of', () => {
    const served = { loadBalancerArn: lbArn, dnsName: lbDnsName, port: 80, protocol: 'HTTP', endpoint: ep };
    expect(lbDnsName).toMatch(/\.elb\.amazonaws\.com$/);
    // The emulator is shared with other test files, whose load balancers the data plane serves too:
    // only this file's is looked at.
    const ours = (ls: readonly ServedListener[]): ServedListener[] =>
      ls.filter((l) => l.loadBalancerArn === lbArn);
    expect(ours(dp.servedListeners())).toEqual([served]);
    // Served from the sync that first reported it on, never reported changed or gone since (other
    // load balancers' listeners may come and go in between).
    const all = reported.map(ours);
    const since = all.slice(all.findIndex((ls) => ls.length > 0));
    expect(since.length).toBeGreaterThan(0);
    for (const ls of since) expect(ls).toEqual([served]);
    expect(dialMapOf(dp.servedListeners()).addresses[`${lbDnsName.toLowerCase()}:80`]).toBe(
      `${ep.host}:${ep.port}`,
    );
  });

  it('forwards with X-Forwarded-For, -Proto and -Port', async () => {
    await send(ep, '/a/headers', { headers: { 'x-forwarded-for': '203.0.113.9' } });
    const hit = [...a.hits, ...b.hits].find((h) => h.path === '/a/headers');
    expect(hit?.headers).toMatchObject({
      'x-forwarded-for': '203.0.113.9, 127.0.0.1',
      'x-forwarded-proto': 'http',
      'x-forwarded-port': '80',
    });
  });

  it('a target failing its health check stops getting traffic, and DescribeTargetHealth says so', async () => {
    b.healthStatus = 500;
    await waitFor(
      () => (dp.targetHealth(tgA)?.find((t) => t.id === b.host)?.state === 'unhealthy' ? true : undefined),
      {
        timeoutMs: 10_000,
        description: 'b unhealthy',
      },
    );
    const before = b.hits.length;
    for (let i = 0; i < 10; i++) expect((await send(ep, '/a/after-failing')).body).toBe('a');
    expect(b.hits.length).toBe(before);
    expect(await healthViaProxy(tgA)).toEqual({
      [a.host]: 'healthy',
      [b.host]: 'unhealthy Target.ResponseCodeMismatch',
    });
    b.healthStatus = 200;
    await waitFor(() => (dp.targetHealth(tgA)?.every((t) => t.state === 'healthy') ? true : undefined), {
      timeoutMs: 10_000,
      description: 'b healthy again',
    });
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) seen.add((await send(ep, '/a/back')).body);
    expect([...seen].sort()).toEqual(['a', 'b']);
  });

  it('a deregistered target gets new requests for the propagation delay only, then drains', async () => {
    const deregisteredAt = Date.now();
    await elb.send(
      new DeregisterTargetsCommand({ TargetGroupArn: tgA, Targets: [{ Id: a.host, Port: a.port }] }),
    );
    // Right after DeregisterTargets, a still gets new requests (round robin with b)…
    let sawA = false;
    for (let i = 0; i < 20 && !sawA; i++) sawA = (await send(ep, '/a/drain')).body === 'a';
    expect(sawA).toBe(true);
    // …until the propagation delay has passed: then 10 requests in a row all reach b.
    await waitFor(
      async () => {
        for (let i = 0; i < 10; i++) if ((await send(ep, '/a/drain')).body === 'a') return undefined;
        return true;
      },
      { timeoutMs: PROPAGATION_MS + 5000, intervalMs: 50, description: 'a no longer getting new requests' },
    );
    const lastA = Math.max(...a.hits.filter((h) => h.path === '/a/drain').map((h) => h.at));
    // The data plane notices within a poll (200 ms) and routes to a for PROPAGATION_MS from then.
    expect(lastA - deregisteredAt).toBeGreaterThanOrEqual(PROPAGATION_MS - 300);
    expect(lastA - deregisteredAt).toBeLessThan(PROPAGATION_MS + 1000);
    const aBefore = a.hits.length;
    for (let i = 0; i < 20; i++) expect((await send(ep, '/a/after-drain')).body).toBe('b');
    expect(a.hits.length).toBe(aBefore);

    expect(await healthViaProxy(tgA)).toEqual({
      [a.host]: 'draining Target.DeregistrationInProgress',
      [b.host]: 'healthy',
    });
    await waitFor(async () => ((await healthViaProxy(tgA))[a.host] === undefined ? true : undefined), {
      timeoutMs: DEREGISTRATION_DELAY_S * 1000 + 5000,
      description: 'a gone after the deregistration delay',
    });
    expect(await healthViaProxy(tgA)).toEqual({ [b.host]: 'healthy' });
  });
});
