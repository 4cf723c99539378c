// The fault proxy's connections to the SDK: the emulator (moto's Werkzeug server) answers every call
// with `Connection: close`, a header about its own connection to the proxy. Passed on, it made the
// SDK open a new connection for every AWS call, as AWS does not (its endpoints keep connections
// alive), so the operator's CPU in the bench included a TCP connection per call.
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';

let upstream: Server;
let upstreamUrl: string;
let proxy: AwsFaultProxy | undefined;
let agent: Agent | undefined;

beforeAll(async () => {
  upstream = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/xml', connection: 'close' }).end('<ok/>');
  });
  await new Promise<void>((done) => upstream.listen(0, '127.0.0.1', done));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((done) => upstream.close(() => done()));
});

afterEach(async () => {
  agent?.destroy();
  agent = undefined;
  await proxy?.stop();
  proxy = undefined;
});

interface Answer {
  readonly status: number;
  readonly connection: string | undefined;
  readonly reusedSocket: boolean;
  /** What became of the connection after the answer: back in the agent's pool, or closed. */
  readonly afterwards: 'pooled' | 'closed';
}

/** One ELBv2-looking call through `agent`; resolves once its connection was pooled or closed. */
function call(p: AwsFaultProxy, keepAlive: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${p.endpoint}/`, {
      method: 'POST',
      agent: keepAlive,
      headers: {
        authorization:
          'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/elasticloadbalancing/aws4_request, SignedHeaders=host, Signature=0',
        'content-type': 'application/x-www-form-urlencoded',
      },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      const settled = (afterwards: Answer['afterwards']): void =>
        resolve({
          status: res.statusCode ?? 0,
          connection: res.headers.connection,
          reusedSocket: req.reusedSocket,
          afterwards,
        });
      keepAlive.once('free', () => settled('pooled'));
      req.socket?.once('close', () => settled('closed'));
      res.resume();
    });
    req.end('Action=DescribeLoadBalancers&Version=2015-12-01');
  });
}

describe('AwsFaultProxy connections', () => {
  it("keeps the SDK's connection alive although the emulator answers Connection: close", async () => {
    proxy = await AwsFaultProxy.start({ target: upstreamUrl });
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const first = await call(proxy, agent);
    expect(first).toEqual({
      status: 200,
      connection: 'keep-alive',
      reusedSocket: false,
      afterwards: 'pooled',
    });
    const second = await call(proxy, agent);
    expect(second).toEqual({
      status: 200,
      connection: 'keep-alive',
      reusedSocket: true,
      afterwards: 'pooled',
    });
    expect(proxy.count({ service: 'elasticloadbalancing', outcome: 'forwarded' })).toBe(2);
  });
});
