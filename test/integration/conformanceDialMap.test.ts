// The conformance dial map end to end, as `make conformance` wires it: a load balancer in moto
// whose listener forwards to a loopback echo server, the ALB data plane serving it and, on every
// listener change, rewriting the dial map (dev/conformanceDialMap.ts); then the compiled
// conformance binary's TestDialMapProbe sends a request to the load balancer's DNS name with the
// suite's own round tripper, through the map (hack/gatewayapi/conformance_test.go).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { EC2Client } from '@aws-sdk/client-ec2';
import {
  CreateListenerCommand,
  CreateLoadBalancerCommand,
  CreateTargetGroupCommand,
  ElasticLoadBalancingV2Client,
  RegisterTargetsCommand,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { afterAll, describe, expect, it } from 'vitest';
import type { AlbDataPlane } from '../../dev/albDataPlane/dataPlane.ts';
import { dialMapEnv, dialMapOf, writeDialMap, type DialMap } from '../../dev/conformanceDialMap.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { toolPaths } from '../../dev/paths.ts';
import { waitFor } from '../../dev/wait.ts';
import { startAlbDataPlane } from '../support/albDataPlane.ts';
import { stackInfo } from '../support/stack.ts';
import { vpcWithTwoSubnets } from '../support/vpc.ts';

const run = promisify(execFile);
const cleanups: (() => Promise<void> | void)[] = [];

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** A loopback server answering as echo-basic does (JSON, the fields the suite reads). */
async function startEcho(): Promise<{ server: Server; port: number; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(req.url ?? '');
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        path: req.url,
        host: req.headers.host,
        method: req.method,
        headers: {},
        namespace: 'probe',
        pod: 'loopback-echo',
      }),
    );
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return { server, port: (server.address() as AddressInfo).port, seen };
}

describe('the conformance dial map', () => {
  it('takes the suite’s request for an ALB DNS name to the data plane and through it to a target', async () => {
    const echo = await startEcho();
    cleanups.push(async () => {
      echo.server.closeAllConnections();
      await new Promise<void>((closed) => echo.server.close(() => closed()));
    });
    const direct = awsClientConfig(stackInfo().awsEndpoint);
    const ec2 = new EC2Client(direct);
    const elb = new ElasticLoadBalancingV2Client(direct);
    cleanups.push(() => {
      ec2.destroy();
      elb.destroy();
    });
    const { vpcId, subnets } = await vpcWithTwoSubnets(ec2, 62);
    const lb = (
      await elb.send(
        new CreateLoadBalancerCommand({ Name: 'dialmap-test', Subnets: subnets, Type: 'application' }),
      )
    ).LoadBalancers?.[0];
    const dnsName = lb?.DNSName ?? '';
    expect(dnsName).toMatch(/\.elb\.amazonaws\.com$/);
    const tgArn =
      (
        await elb.send(
          new CreateTargetGroupCommand({
            Name: 'dialmap-echo',
            Protocol: 'HTTP',
            Port: 80,
            VpcId: vpcId,
            TargetType: 'ip',
          }),
        )
      ).TargetGroups?.[0]?.TargetGroupArn ?? '';
    await elb.send(
      new RegisterTargetsCommand({ TargetGroupArn: tgArn, Targets: [{ Id: '127.0.0.1', Port: echo.port }] }),
    );
    await elb.send(
      new CreateListenerCommand({
        LoadBalancerArn: lb?.LoadBalancerArn ?? '',
        Protocol: 'HTTP',
        Port: 80,
        DefaultActions: [{ Type: 'forward', TargetGroupArn: tgArn }],
      }),
    );

    // As dev/conformance.ts does: every listener change rewrites the map, one write after the other.
    const dir = await mkdtemp(join(tmpdir(), 'skylift-dialmap-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const mapPath = join(dir, 'dial-map.json');
    let writes: Promise<void> = writeDialMap(mapPath, dialMapOf([]));
    const dp: AlbDataPlane = await startAlbDataPlane({
      pollMs: 200,
      healthCheckTimeScale: 0.1,
      onListenersChanged: (listeners) => {
        writes = writes.then(() => writeDialMap(mapPath, dialMapOf(listeners)));
      },
    });
    cleanups.push(() => dp.stop());
    const key = `${dnsName.toLowerCase()}:80`;
    const servedAt = await waitFor(
      async () => {
        await writes;
        const map = JSON.parse(await readFile(mapPath, 'utf8')) as DialMap;
        return map.addresses[key];
      },
      { timeoutMs: 10_000, description: `the dial map to name ${key}` },
    );
    const ep = dp.servedListeners().find((l) => l.dnsName === dnsName)?.endpoint;
    expect(servedAt).toBe(`${ep?.host ?? ''}:${String(ep?.port ?? '')}`);
    // The target is routable once the data plane's first health check passed.
    await waitFor(() => (dp.targetHealth(tgArn)?.[0]?.state === 'healthy' ? true : undefined), {
      timeoutMs: 10_000,
      description: 'the echo target healthy in the data plane',
    });

    const suite = join(toolPaths().gatewayApiDir, 'conformance.test');
    if (!existsSync(suite)) throw new Error(`${suite} is missing: run make gateway-api (make test does)`);
    const probe = (url: string) =>
      run(suite, ['-test.run=^TestDialMapProbe$', '-test.v'], {
        env: { ...process.env, [dialMapEnv]: mapPath, SKYLIFT_CONFORMANCE_PROBE_URL: url },
        timeout: 30_000,
      });
    const { stdout } = await probe(`http://${dnsName}/conformance/probe`);
    expect(stdout).toContain(
      `probe: status 200; the echo server saw path /conformance/probe host ${dnsName} pod loopback-echo`,
    );
    expect(stdout).toContain('--- PASS: TestDialMapProbe');
    expect(echo.seen).toContain('/conformance/probe');

    // A name the map does not hold is dialed as given, and the error says it is not in the map.
    const missing = await probe('http://not-served.invalid/').then(
      () => '',
      (err: unknown) => String((err as { stdout?: string }).stdout),
    );
    expect(missing).toContain('not-served.invalid:80 is not in the dial map');
  });
});
