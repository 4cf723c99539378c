// KubeClient's HTTP behaviour (src/runtime/kube/client.ts, transport.ts, connectionPool.ts) against
// a local plain-http server: JSON answers and error answers, the deadline of a request and none for
// a watch stream, aborts that close the connection, connections reused, and a pool renewed while a
// watch runs on the old one without cutting it. Real TLS and credentials: the integration tests.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../dev/wait.ts';
import {
  KubeApiError,
  KubeClient,
  KubeResponseError,
  KubeUnreachableError,
} from '../../src/runtime/kube/client.ts';
import { kubeDispatcherReuseMs } from '../../src/runtime/kube/connectionPool.ts';
import { lines } from '../../src/runtime/kube/informer.ts';
import { currentKubeconfig, kubeconfigEntries, type Kubeconfig } from '../../src/runtime/kube/kubeconfig.ts';
import { FakeClock } from '../support/fakeClock.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A local apiserver stand-in: counts the connections made to it and which are still open. */
interface Apiserver {
  readonly url: string;
  /** Connections accepted so far. */
  connections: number;
  readonly open: Set<Socket>;
  readonly server: Server;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function apiserver(handler: Handler): Promise<Apiserver> {
  const server = createServer(handler);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const api: Apiserver = { url, connections: 0, open: new Set(), server };
  server.on('connection', (s: Socket) => {
    api.connections++;
    api.open.add(s);
    s.on('close', () => api.open.delete(s));
  });
  return api;
}

/** A kubeconfig for `server` whose user has `user`'s fields. */
function kubeconfig(server: string, user: Record<string, unknown> = { token: 't' }): Kubeconfig {
  const file = '/kube/config';
  return currentKubeconfig(
    kubeconfigEntries(
      {
        clusters: [{ name: 'c', cluster: { server } }],
        users: [{ name: 'u', user }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      },
      file,
    ),
    file,
  );
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

/** Resolves once `check` holds (the project's waitFor); fails after 5 s. */
async function until(check: () => boolean, what: string): Promise<void> {
  await waitFor(() => (check() ? true : undefined), { timeoutMs: 5_000, intervalMs: 10, description: what });
}

describe('KubeClient requests', () => {
  it('sends JSON with its credentials, parses the answer and tells observers', async () => {
    let seen:
      { method: string | undefined; url: string | undefined; headers: string[]; body: string } | undefined;
    const api = await apiserver((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen = { method: req.method, url: req.url, headers: req.rawHeaders, body };
        json(res, 201, { metadata: { name: 'x' } });
      });
    });
    const client = new KubeClient(kubeconfig(api.url, { token: 'secret', 'as-groups': ['g1', 'g2'] }));
    const observed: string[] = [];
    client.observe((method, path, status) => observed.push(`${method} ${path} ${status}`));
    const made = await client.patch<{ metadata: { name: string } }>(
      '/api/v1/namespaces/n/configmaps/x',
      { data: { a: 'b' } },
      'merge',
      { fieldManager: 'skylift' },
    );
    expect(made.metadata.name).toBe('x');
    expect(observed).toEqual(['PATCH /api/v1/namespaces/n/configmaps/x 201']);
    expect(seen?.method).toBe('PATCH');
    expect(seen?.url).toBe('/api/v1/namespaces/n/configmaps/x?fieldManager=skylift');
    expect(seen?.body).toBe('{"data":{"a":"b"}}');
    const headers = seen?.headers ?? [];
    const values = (name: string): string[] =>
      headers.filter((_, i) => i % 2 === 1 && headers[i - 1]?.toLowerCase() === name);
    expect(values('authorization')).toEqual(['Bearer secret']);
    expect(values('impersonate-group')).toEqual(['g1', 'g2']);
    expect(values('content-type')).toEqual(['application/merge-patch+json']);
    expect(values('accept')).toEqual(['application/json']);
  });

  it.each([
    {
      reason: 'a Status answer gives its reason and message',
      status: 404,
      body: JSON.stringify({ kind: 'Status', reason: 'NotFound', message: 'configmaps "x" not found' }),
      want: { statusCode: 404, reason: 'NotFound', message: 'configmaps "x" not found' },
    },
    {
      reason: 'another answer gives the status as reason and the text as message',
      status: 502,
      body: 'bad gateway',
      want: { statusCode: 502, reason: '502', message: 'bad gateway' },
    },
  ])('an error answer is a KubeApiError: $reason', async ({ status, body, want }) => {
    const api = await apiserver((_req, res) => {
      res.writeHead(status);
      res.end(body);
    });
    const client = new KubeClient(kubeconfig(api.url));
    const statuses: number[] = [];
    client.observe((_m, _p, s) => statuses.push(s));
    const err = await client.get('/api/v1/namespaces/n/configmaps/x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject(want);
    expect(statuses).toEqual([status]);
  });

  it.each([
    { reason: 'JSON without message', body: JSON.stringify({ error: 'x'.repeat(2_000) }) },
    { reason: 'not JSON', body: `<html>${'y'.repeat(2_000)}</html>` },
    {
      reason: 'a Status whose message is longer still',
      body: JSON.stringify({ message: 'z'.repeat(9_000) }),
    },
  ])('the message of an error answer is cut: $reason', async ({ body }) => {
    const api = await apiserver((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(body);
    });
    const err = await new KubeClient(kubeconfig(api.url)).get('/api').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as Error).message.length).toBeLessThanOrEqual(2_001);
    if (!body.startsWith('{"message"')) expect((err as Error).message.length).toBeLessThanOrEqual(501);
  });

  it('a 2xx answer that is not JSON: KubeResponseError with status, content type and length, not the body', async () => {
    const body = '<html>session=abcdef0123456789</html>';
    const api = await apiserver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(body);
    });
    const err = await new KubeClient(kubeconfig(api.url)).get('/api/v1/namespaces').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeResponseError);
    expect(err).toMatchObject({ statusCode: 200, contentType: 'text/html' });
    expect((err as Error).message).toBe(
      `the Kubernetes API server ${api.url} answered GET /api/v1/namespaces with status 200 and ${body.length} bytes of text/html, not JSON`,
    );
  });

  it('an answer larger than maxResponseBytes: KubeResponseError, read no further, the connection closed', async () => {
    const api = await apiserver((_req, res) => {
      // 1 MiB of an unfinished list: only the client's limit ends the answer before the deadline.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"items":[${`{"a":"${'x'.repeat(1_000)}"},`.repeat(1_024)}`);
    });
    const client = new KubeClient(kubeconfig(api.url), { maxResponseBytes: 64 * 1024, timeoutMs: 5_000 });
    const err = await client.get('/api/v1/namespaces').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeResponseError);
    expect((err as Error).message).toBe(
      `the Kubernetes API server ${api.url} answered GET /api/v1/namespaces with status 200 and more than 65536 bytes of application/json`,
    );
    await until(() => api.open.size === 0, 'the connection to close');
  });

  it('a server that does not answer within the deadline: KubeUnreachableError naming server, method and path; the connection is closed', async () => {
    const api = await apiserver(() => undefined);
    const client = new KubeClient(kubeconfig(api.url), { timeoutMs: 200 });
    const err = await client.get('/api/v1/namespaces').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeUnreachableError);
    expect((err as Error).message).toBe(
      `the Kubernetes API server ${api.url} did not answer GET /api/v1/namespaces within 0.2 s`,
    );
    await until(() => api.open.size === 0, 'the connection to close');
  });

  it('the deadline covers the body too', async () => {
    const api = await apiserver((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"items": [');
    });
    const client = new KubeClient(kubeconfig(api.url), { timeoutMs: 200 });
    await expect(client.get('/api/v1/namespaces')).rejects.toThrow(
      /did not answer GET \/api\/v1\/namespaces within 0.2 s/,
    );
    await until(() => api.open.size === 0, 'the connection to close');
  });

  it('a refused connection: KubeUnreachableError naming the server and the cause', async () => {
    const api = await apiserver(() => undefined);
    api.server.close();
    await once(api.server, 'close');
    const err = await new KubeClient(kubeconfig(api.url)).get('/version').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeUnreachableError);
    expect((err as Error).message).toMatch(
      new RegExp(
        `^cannot reach the Kubernetes API server ${api.url}: connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+$`,
      ),
    );
  });

  it("the caller's signal aborts with its own reason, closing the connection", async () => {
    const api = await apiserver(() => undefined);
    const client = new KubeClient(kubeconfig(api.url));
    const stop = new AbortController();
    const pending = client.get('/api/v1/namespaces', undefined, stop.signal).catch((e: unknown) => e);
    await until(() => api.open.size === 1, 'the request to arrive');
    const why = new Error('stopping');
    stop.abort(why);
    expect(await pending).toBe(why);
    await until(() => api.open.size === 0, 'the connection to close');
  });

  it('reuses a connection: one for sequential requests, one more per further concurrent one', async () => {
    const api = await apiserver((_req, res) => {
      setTimeout(() => json(res, 200, {}), 5);
    });
    const client = new KubeClient(kubeconfig(api.url));
    for (let i = 0; i < 20; i++) await client.get('/api');
    expect(api.connections).toBe(1);
    await Promise.all(Array.from({ length: 5 }, () => client.get('/api')));
    expect(api.connections).toBe(5);
  });
});

describe('idle connections', () => {
  /**
   * A server standing in for a proxy that announces a shorter keep-alive than it was configured
   * with: it answers `Keep-Alive: timeout=<seconds>` but would itself keep connections open a minute.
   */
  async function announcing(seconds: number): Promise<Apiserver> {
    const api = await apiserver((_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        connection: 'keep-alive',
        'keep-alive': `timeout=${seconds}`,
      });
      res.end('{}');
    });
    api.server.keepAliveTimeout = 60_000;
    return api;
  }

  it('are not kept when the server announces a keep-alive of 1 s (Node: too short to reuse safely)', async () => {
    const api = await announcing(1);
    const client = new KubeClient(kubeconfig(api.url));
    await client.get('/api');
    await until(() => api.open.size === 0, 'the client to close the connection');
    await client.get('/api');
    expect(api.connections).toBe(2);
  });

  it("close a second before the server's announced keep-alive, not after the client's 30 s", async () => {
    const api = await announcing(2);
    const client = new KubeClient(kubeconfig(api.url));
    await client.get('/api');
    await client.get('/api');
    expect(api.connections).toBe(1); // reused meanwhile
    const idleSince = Date.now();
    await until(() => api.open.size === 0, 'the client to close the idle connection');
    expect(Date.now() - idleSince).toBeLessThan(2_000);
  });
});

describe('KubeClient watch streams (raw)', () => {
  /** A server whose watches stay open; `send` writes a line to every open one. */
  const watches = new Set<ServerResponse>();
  /** Writes a line to every open watch. */
  const send = (line: string): void => {
    for (const w of watches) w.write(`${line}\n`);
  };
  /** A server whose watches stay open; anything else gets an empty answer. */
  const watchServer = (): Promise<Apiserver> =>
    apiserver((req, res) => {
      if (!(req.url ?? '').includes('watch=1')) {
        json(res, 200, {});
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      watches.add(res);
      res.on('close', () => watches.delete(res));
    });

  it('has no deadline unless given, and aborting it closes the connection', async () => {
    const api = await watchServer();
    const client = new KubeClient(kubeconfig(api.url), { timeoutMs: 100 });
    const stop = new AbortController();
    const res = await client.raw('GET', '/api/v1/configmaps', { query: { watch: 1 }, signal: stop.signal });
    expect(res.status).toBe(200);
    const got: string[] = [];
    const reading = (async () => {
      for await (const line of lines(res.body)) got.push(line);
    })().catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 300)); // three request deadlines
    send('{"type":"ADDED"}');
    await until(() => got.length === 1, 'the line');
    stop.abort();
    expect(await reading).toMatchObject({ name: 'AbortError' });
    await until(() => api.open.size === 0, 'the connection to close');
  });

  it('a replaced connection pool leaves a watch on the old one running', async () => {
    const api = await watchServer();
    const clock = new FakeClock();
    const client = new KubeClient(kubeconfig(api.url), { clock });
    const res = await client.raw('GET', '/api/v1/configmaps', { query: { watch: 1 } });
    const got: string[] = [];
    const reading = (async () => {
      for await (const line of lines(res.body)) got.push(line);
    })();
    clock.advance(kubeDispatcherReuseMs);
    await client.get('/api'); // on a new pool: a new connection
    expect(api.connections).toBe(2);
    send('{"type":"ADDED"}');
    send('{"type":"MODIFIED"}');
    await until(() => got.length === 2, 'both lines on the old pool');
    expect(watches.size).toBe(1);
    res.cancel();
    await reading.catch(() => undefined);
    await until(() => watches.size === 0, 'the watch to close');
  });
});

describe('lines of a watch stream', () => {
  const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
  const chunks = (...parts: Uint8Array[]): AsyncIterable<Uint8Array> => Readable.from(parts);
  const euro = enc('€'); // three bytes

  it.each([
    { reason: 'one line per newline', parts: [enc('a\nb\n')], want: ['a', 'b'] },
    {
      reason: 'a line split across chunks',
      parts: [enc('{"a"'), enc(':1}\n{"b"'), enc(':2}\n')],
      want: ['{"a":1}', '{"b":2}'],
    },
    { reason: 'a last line without newline', parts: [enc('a\nb')], want: ['a', 'b'] },
    { reason: 'empty lines kept', parts: [enc('\n\na\n')], want: ['', '', 'a'] },
    {
      reason: 'a character split across chunks',
      parts: [euro.subarray(0, 1), euro.subarray(1), enc('\n')],
      want: ['€'],
    },
    { reason: 'nothing', parts: [], want: [] },
  ])('$reason', async ({ parts, want }) => {
    const got: string[] = [];
    for await (const line of lines(chunks(...parts))) got.push(line);
    expect(got).toEqual(want);
  });
});
