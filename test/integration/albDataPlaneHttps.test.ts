// HTTPS listeners of the ALB data plane (dev/albDataPlane/) proven with real TLS: a MyIngress
// whose HTTPS listener has an imported certificate for a.example.test as its default and an
// ACM-requested one for *.b.example.test by SNI, on the real apiserver and moto through the fault
// proxy (which records the imported key for the data plane). Requests sent with each server name
// reach the real backend (over HTTP/1.1, and over HTTP/2 by ALPN), counted there, and the
// certificate served is checked: the imported one verified against itself, the requested one's
// stand-in against the data plane's local CA. Then the imported ARN is re-imported with a new
// certificate, and the default switched by a spec change: both served on the same port without the
// listener restarting.
import { ACMClient, RequestCertificateCommand } from '@aws-sdk/client-acm';
import { EC2Client } from '@aws-sdk/client-ec2';
import { X509Certificate } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlbDataPlane, Endpoint } from '../../dev/albDataPlane/dataPlane.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import { installCrds } from '../../dev/installCrds.ts';
import { waitFor } from '../../dev/wait.ts';
import { resourcePath } from '../../src/apis/meta.ts';
import { myIngressType, type MyIngressSpec } from '../../src/kinds/myingress/api.ts';
import { myIngressController } from '../../src/kinds/myingress/controller.ts';
import type { KubeClient } from '../../src/runtime/kube/client.ts';
import { importSelfSigned } from '../support/acmCertificates.ts';
import { startAlbDataPlane } from '../support/albDataPlane.ts';
import { startController, type RunningController } from '../support/controllers.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { myIngressGone, myIngressWhere, readyAtGeneration } from '../support/myingressGroupObjects.ts';
import { patchMyIngressSpec, submitMyIngress } from '../support/myingressObjects.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { vpcWithTwoSubnets } from '../support/vpc.ts';

/** The backend, on 127.0.0.81, standing for a Pod at 10.250.1.81; counts what reaches it. */
interface Backend {
  readonly ip: string;
  port: number;
  readonly hits: IncomingHttpHeaders[];
  readonly server: Server;
}

async function startBackend(loopback: string): Promise<Backend> {
  const server = createServer();
  const b: Backend = { ip: loopback.replace(/^127\.0\.0\./, '10.250.1.'), port: 0, hits: [], server };
  server.on('request', (req, res) => {
    if (req.url !== '/health') b.hits.push(req.headers);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('web');
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(0, loopback, () => resolveListen());
  });
  b.port = (server.address() as AddressInfo).port;
  return b;
}

/** An HTTPS answer with the certificate the data plane served; status 0 for a failed request. */
interface Answer {
  readonly status: number;
  readonly body: string;
  readonly cn?: string;
  readonly san?: string;
  readonly fingerprint256?: string;
  /** Whether the certificate verified against `ca` (and the server name, when one was sent). */
  readonly authorized?: boolean;
}

/**
 * GET / over TLS to the served listener with server name `sni` (none when '') and Host `sni`,
 * checking the certificate against `ca` without failing the request: `authorized` says.
 */
function send(ep: Endpoint, sni: string, ca: string): Promise<Answer> {
  return new Promise((resolveAnswer) => {
    const req = httpsRequest(
      {
        host: ep.host,
        port: ep.port,
        path: '/',
        servername: sni,
        headers: { host: sni !== '' ? sni : 'no-sni.example.test' },
        ca,
        rejectUnauthorized: false,
        timeout: 5000,
        agent: false,
      },
      (res) => {
        const socket = res.socket as TLSSocket;
        const peer: PeerCertificate = socket.getPeerCertificate();
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          resolveAnswer({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString(),
            cn: String(peer.subject.CN),
            san: peer.subjectaltname ?? '',
            fingerprint256: peer.fingerprint256,
            authorized: socket.authorized,
          });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => {
      resolveAnswer({ status: 0, body: err.message });
    });
    req.end();
  });
}

/** GET / over TLS and HTTP/2 with server name and :authority `sni`, trusting `ca`; status 0 on failure. */
function sendH2(
  ep: Endpoint,
  sni: string,
  ca: string,
): Promise<{ status: number; body: string; alpn: string | undefined }> {
  return new Promise((resolveAnswer) => {
    const session = http2Connect(`https://${ep.host}:${ep.port}`, { servername: sni, ca });
    const chunks: Buffer[] = [];
    let status = 0;
    const finish = (err?: Error): void => {
      const alpn = session.alpnProtocol;
      session.destroy();
      resolveAnswer({
        status: err !== undefined ? 0 : status,
        body: err?.message ?? Buffer.concat(chunks).toString(),
        alpn,
      });
    };
    session.on('error', finish);
    const req = session.request({ ':method': 'GET', ':path': '/', ':authority': sni });
    req.setTimeout(5000, () => req.close());
    req.on('response', (h) => {
      status = h[':status'] ?? 0;
    });
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', finish);
    req.on('close', () => finish());
    req.end();
  });
}

/** Sends `n` requests one after another; their answers summarised `status body cn verified`. */
async function round(ep: Endpoint, sni: string, ca: string, n: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const a = await send(ep, sni, ca);
    const k = `${a.status} ${a.body} ${a.cn ?? '-'} ${a.authorized === true ? 'verified' : 'unverified'}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

const fingerprintOf = (pem: string): string => new X509Certificate(pem).fingerprint256;
const ROUND = 20;

let admin: KubeClient;
let proxy: AwsFaultProxy;
let ec2: EC2Client;
let acm: ACMClient;
let dp: AlbDataPlane;
let subnets: string[];
let backend: Backend;
const running: RunningController[] = [];

beforeAll(async () => {
  admin = kubeClient();
  await installCrds(admin);
  ec2 = new EC2Client(awsClientConfig(stackInfo().awsEndpoint));
  ({ subnets } = await vpcWithTwoSubnets(ec2, 44));
  proxy = await startFaultProxy();
  // Certificates go to ACM through the proxy, where the data plane's rule records imported keys.
  acm = new ACMClient(awsClientConfig(proxy.endpoint));
  backend = await startBackend('127.0.0.81');
  dp = await startAlbDataPlane({
    proxy,
    healthCheckTimeScale: 0.05,
    propagationDelayMs: 500,
    pollMs: 200,
    dialAddress: (ip) => ip.replace(/^10\.250\.1\./, '127.0.0.'),
  });
});

afterAll(async () => {
  for (const r of running.splice(0)) await r.stop();
  await dp.stop();
  await proxy.stop();
  await new Promise((r) => {
    backend.server.close(r);
  });
  acm.destroy();
  ec2.destroy();
});

describe('ALB data plane HTTPS listeners', () => {
  it('terminates TLS with the certificate SNI chooses, routes to the backend, and serves a re-imported certificate and a new default without restarting', async () => {
    const a = await importSelfSigned(acm, { domain: 'a.example.test' });
    const requested = await acm.send(
      new RequestCertificateCommand({ DomainName: '*.b.example.test', ValidationMethod: 'DNS' }),
    );
    const b = requested.CertificateArn ?? '';
    expect(a.arn).not.toBe('');
    expect(b).not.toBe('');

    const ns = await newNamespace(admin, 'alb-https');
    running.push(
      await startController((s) => myIngressController(s, { pollMs: 300 }), {
        namespace: ns,
        endpoint: proxy.endpoint,
      }),
    );
    await admin.create(`/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'web' },
      spec: { ports: [{ port: 80, targetPort: backend.port, protocol: 'TCP' }] },
    });
    await admin.create(`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, {
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
      ports: [{ port: backend.port, protocol: 'TCP', name: '' }],
      endpoints: [
        { addresses: [backend.ip], conditions: { ready: true, serving: true, terminating: false } },
      ],
    });
    const spec: MyIngressSpec = {
      subnets,
      scheme: 'internal',
      // The managed security group lets the loopback client in (the data plane enforces it).
      inboundCIDRs: ['127.0.0.0/8'],
      listeners: [
        {
          port: 443,
          protocol: 'HTTPS',
          certificateArn: a.arn,
          additionalCertificateArns: [b],
          defaultAction: {
            forward: {
              service: {
                name: 'web',
                port: 80,
                healthCheck: {
                  path: '/health',
                  intervalSeconds: 5,
                  timeoutSeconds: 2,
                  healthyThresholdCount: 2,
                },
              },
            },
          },
        },
      ],
    };
    await submitMyIngress(admin, ns, 'shop', spec);
    const m = await myIngressWhere(admin, ns, 'shop', readyAtGeneration, 'Ready');
    const lb = m.status?.arn ?? '';
    const ep = await waitFor(() => dp.endpointOf(lb, 443), {
      timeoutMs: 30_000,
      description: 'the data plane serving the HTTPS listener',
    });
    expect(dp.servedListeners().find((l) => l.loadBalancerArn === lb)).toMatchObject({
      port: 443,
      protocol: 'HTTPS',
      endpoint: ep,
    });
    // Until the target has passed its health checks.
    await waitFor(
      async () => ((await send(ep, 'a.example.test', a.certificatePem)).body === 'web' ? true : undefined),
      {
        timeoutMs: 30_000,
        description: 'a.example.test served through the data plane',
      },
    );

    // SNI a.example.test: the imported certificate, verified against itself; every request reaches
    // the backend over plain HTTP, told it came over HTTPS on 443.
    let hits = backend.hits.length;
    expect(await round(ep, 'a.example.test', a.certificatePem, ROUND)).toEqual({
      '200 web a.example.test verified': ROUND,
    });
    expect(backend.hits.length - hits).toBe(ROUND);
    expect(backend.hits.at(-1)).toMatchObject({
      host: 'a.example.test',
      'x-forwarded-proto': 'https',
      'x-forwarded-port': '443',
    });
    // Over HTTP/2 (ALPN h2) too: the backend gets the request as HTTP/1.1, its :authority as Host.
    hits = backend.hits.length;
    for (let i = 0; i < 5; i++)
      expect(await sendH2(ep, 'a.example.test', a.certificatePem)).toEqual({
        status: 200,
        body: 'web',
        alpn: 'h2',
      });
    expect(backend.hits.length - hits).toBe(5);
    expect(backend.hits.at(-1)).toMatchObject({ host: 'a.example.test', 'x-forwarded-proto': 'https' });
    const servedA = await send(ep, 'a.example.test', a.certificatePem);
    expect(servedA).toMatchObject({
      san: 'DNS:a.example.test',
      fingerprint256: fingerprintOf(a.certificatePem),
    });

    // SNI x.b.example.test: the wildcard's stand-in, verified against the data plane's CA.
    hits = backend.hits.length;
    expect(await round(ep, 'x.b.example.test', dp.localCaPem, ROUND)).toEqual({
      '200 web *.b.example.test verified': ROUND,
    });
    expect(backend.hits.length - hits).toBe(ROUND);
    expect((await send(ep, 'x.b.example.test', dp.localCaPem)).san).toBe('DNS:*.b.example.test');

    // No server name, or one no certificate covers (the wildcard covers one label only): the default.
    for (const sni of ['', 'y.x.b.example.test', 'other.example.test'])
      expect(await send(ep, sni, a.certificatePem), sni).toMatchObject({
        status: 200,
        cn: 'a.example.test',
        fingerprint256: fingerprintOf(a.certificatePem),
      });

    // A re-import under the same ARN: the next sync serves it, on the same port.
    const renewed = await importSelfSigned(acm, { domain: 'a.example.test', arn: a.arn });
    expect(renewed.arn).toBe(a.arn);
    const after = await waitFor(
      async () => {
        const x = await send(ep, 'a.example.test', renewed.certificatePem);
        return x.fingerprint256 === fingerprintOf(renewed.certificatePem) ? x : undefined;
      },
      { timeoutMs: 15_000, description: 'the re-imported certificate served' },
    );
    expect(after).toMatchObject({ status: 200, body: 'web', authorized: true });
    expect(dp.endpointOf(lb, 443)).toEqual(ep);
    expect(await round(ep, 'a.example.test', renewed.certificatePem, 5)).toEqual({
      '200 web a.example.test verified': 5,
    });

    // The default switched by the spec (ModifyListener, the SNI certificates added and removed):
    // a client without a server name gets the stand-in for *.b.example.test, a.example.test still its own.
    await patchMyIngressSpec(admin, ns, 'shop', {
      listeners: [{ ...spec.listeners?.[0], certificateArn: b, additionalCertificateArns: [a.arn] }],
    });
    await waitFor(
      async () => ((await send(ep, '', dp.localCaPem)).cn === '*.b.example.test' ? true : undefined),
      {
        timeoutMs: 15_000,
        description: 'the new default certificate served without a server name',
      },
    );
    expect(await send(ep, 'a.example.test', renewed.certificatePem)).toMatchObject({
      status: 200,
      cn: 'a.example.test',
      authorized: true,
    });
    expect(dp.endpointOf(lb, 443)).toEqual(ep);

    await admin.delete(resourcePath(myIngressType, { namespace: ns, name: 'shop' }));
    await myIngressGone(admin, ns, 'shop');
  });
});
