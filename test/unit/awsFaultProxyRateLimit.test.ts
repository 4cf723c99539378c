// The fault proxy's `rateLimit` rule (a per-account token bucket, as Route 53
// enforces five requests per second), against a stand-in upstream on
// loopback and an injected clock, so no emulator and no sleeping is needed.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AwsFaultProxy, route53RateLimit } from '../../dev/awsFaultProxy.ts';

let upstream: Server;
let upstreamUrl: string;
let upstreamHits = 0;
let proxy: AwsFaultProxy | undefined;
let clockMs = 1_000_000;

beforeAll(async () => {
  upstream = createServer((_req, res) => {
    upstreamHits++;
    res.writeHead(200, { 'content-type': 'text/xml' }).end('<ok/>');
  });
  await new Promise<void>((done) => upstream.listen(0, '127.0.0.1', done));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((done) => upstream.close(() => done()));
});

afterEach(async () => {
  await proxy?.stop();
  proxy = undefined;
});

async function startProxy(): Promise<AwsFaultProxy> {
  upstreamHits = 0;
  clockMs = 1_000_000;
  proxy = await AwsFaultProxy.start({ target: upstreamUrl, now: () => clockMs });
  return proxy;
}

/** A SigV4-signed-looking Route 53 (or other service) request; the proxy reads only the credential scope. */
async function call(
  p: AwsFaultProxy,
  service = 'route53',
  accessKey = 'AKIDEXAMPLE',
): Promise<{ status: number; body: string }> {
  const res = await fetch(`${p.endpoint}/2013-04-01/hostedzone/Z1/rrset`, {
    method: 'GET',
    headers: {
      authorization: `AWS4-HMAC-SHA256 Credential=${accessKey}/20260101/us-east-1/${service}/aws4_request, SignedHeaders=host, Signature=0`,
    },
  });
  return { status: res.status, body: await res.text() };
}

async function callMany(p: AwsFaultProxy, n: number, service?: string, key?: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) statuses.push((await call(p, service, key)).status);
  return statuses;
}

describe('AwsFaultProxy rateLimit rule', () => {
  it('admits a burst, then answers Throttling in Route 53 XML without reaching the emulator', async () => {
    const p = await startProxy();
    const rule = p.inject(route53RateLimit(5));
    const statuses = await callMany(p, 5);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const rejected = await call(p);
    expect(rejected.status).toBe(400);
    expect(rejected.body).toContain(
      '<ErrorResponse xmlns="https://route53.amazonaws.com/doc/2013-04-01/"><Error><Type>Sender</Type><Code>Throttling</Code>',
    );
    expect(upstreamHits).toBe(5);
    expect(rule.hits).toBe(1);
    expect(p.count({ service: 'route53', outcome: 'rateLimit' })).toBe(1);
    expect(p.count({ service: 'route53', outcome: 'forwarded' })).toBe(5);
  });

  it.each([
    { reason: 'a fifth of a second refills one token at 5/s', advanceMs: 200, admitted: 1 },
    { reason: 'a tenth of a second is half a token: nothing', advanceMs: 100, admitted: 0 },
    { reason: 'one second refills the whole burst', advanceMs: 1000, admitted: 5 },
    { reason: 'a long pause refills no more than the burst', advanceMs: 60_000, admitted: 5 },
  ])('refills with time: $reason', async ({ advanceMs, admitted }) => {
    const p = await startProxy();
    p.inject(route53RateLimit(5));
    await callMany(p, 5);
    clockMs += advanceMs;
    const statuses = await callMany(p, 7);
    expect(statuses.filter((s) => s === 200)).toHaveLength(admitted);
    // Admitted calls come first: a bucket never admits after it ran dry at the same instant.
    expect(statuses).toEqual([
      ...Array<number>(admitted).fill(200),
      ...Array<number>(7 - admitted).fill(400),
    ]);
  });

  it('keeps one bucket per account (access key) and leaves other services alone', async () => {
    const p = await startProxy();
    p.inject(route53RateLimit(2));
    expect(await callMany(p, 3, 'route53', 'ACCOUNTA')).toEqual([200, 200, 400]);
    expect(await callMany(p, 3, 'route53', 'ACCOUNTB')).toEqual([200, 200, 400]);
    expect(await callMany(p, 4, 'elasticloadbalancing', 'ACCOUNTA')).toEqual([200, 200, 200, 200]);
  });

  it('shares one bucket among the access keys bucketOf puts together (sessions of one account)', async () => {
    const p = await startProxy();
    const accountOf: Record<string, string> = { SESSION1: '111111111111', SESSION2: '111111111111' };
    p.inject(route53RateLimit(2, 2, (c) => accountOf[c.accessKeyId ?? ''] ?? c.accessKeyId ?? ''));
    expect(await callMany(p, 1, 'route53', 'SESSION1')).toEqual([200]);
    expect(await callMany(p, 2, 'route53', 'SESSION2')).toEqual([200, 400]);
    expect(await callMany(p, 2, 'route53', 'OTHER')).toEqual([200, 200]);
  });

  it('lets admitted calls fall through to later rules, and honours a custom code and burst', async () => {
    const p = await startProxy();
    p.inject({
      service: 'route53',
      fault: { kind: 'rateLimit', ratePerSecond: 1, burst: 3, code: 'PriorRequestNotComplete' },
    });
    const later = p.inject({ service: 'route53', fault: { kind: 'error', status: 503 }, times: 1 });
    expect(await callMany(p, 3)).toEqual([503, 200, 200]);
    expect(later.hits).toBe(1);
    const rejected = await call(p);
    expect(rejected.status).toBe(400);
    expect(rejected.body).toContain('<Code>PriorRequestNotComplete</Code>');
  });

  it('rejects a rule with a rate or burst that could never admit a call', async () => {
    const p = await startProxy();
    expect(() => p.inject(route53RateLimit(0))).toThrow(/ratePerSecond must be > 0/);
    expect(() => p.inject(route53RateLimit(5, 0.5))).toThrow(/burst >= 1/);
  });
});

describe('AwsFaultProxy respond rule and watchers', () => {
  it('answers a call itself or forwards it, as the rule decides, and shows watchers every call', async () => {
    const p = await startProxy();
    const seen: string[] = [];
    const unwatch = p.watch((c) => seen.push(`${c.service} ${c.method} ${c.path}`));
    const emulators: string[] = [];
    let refuse = true;
    p.inject({
      service: 'route53',
      fault: {
        kind: 'respond',
        respond: (_call, emulator) => {
          emulators.push(emulator);
          return Promise.resolve(
            refuse ? { status: 400, headers: { 'content-type': 'text/xml' }, body: '<refused/>' } : undefined,
          );
        },
      },
    });
    expect(await call(p)).toEqual({ status: 400, body: '<refused/>' });
    refuse = false;
    expect(await call(p)).toEqual({ status: 200, body: '<ok/>' });
    expect(upstreamHits).toBe(1);
    expect(emulators).toEqual([upstreamUrl, upstreamUrl]);
    expect(p.count({ outcome: 'respond' })).toBe(1);
    expect(p.count({ outcome: 'forwarded' })).toBe(1);
    unwatch();
    await call(p);
    expect(seen).toEqual([
      'route53 GET /2013-04-01/hostedzone/Z1/rrset',
      'route53 GET /2013-04-01/hostedzone/Z1/rrset',
    ]);
  });
});

describe('hang rule', () => {
  it('never forwards a call and holds it until the client gives up, nor afterwards', async () => {
    const p = await startProxy();
    const rule = p.inject({ service: 'route53', fault: { kind: 'hang' } });
    const ac = new AbortController();
    const pending = fetch(`${p.endpoint}/2013-04-01/hostedzone/Z1/rrset`, {
      method: 'POST',
      signal: ac.signal,
      headers: {
        authorization:
          'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/route53/aws4_request, SignedHeaders=host, Signature=0',
      },
    });
    await expect.poll(() => rule.hits).toBe(1);
    ac.abort();
    await expect(pending).rejects.toThrow();
    // Once the rule is gone calls go through again; the abandoned one was never carried out.
    rule.remove();
    expect((await call(p)).status).toBe(200);
    expect(upstreamHits).toBe(1);
    expect(p.count({ outcome: 'hang' })).toBe(1);
  });
});
