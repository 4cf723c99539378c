import { randomUUID } from 'node:crypto';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { errorResponse, identifyCall, type AwsCall } from './awsOperation.ts';

/** What a matching rule does to a call. */
export type Fault =
  /** Answer with a throttling error (default code `Throttling`, HTTP 400) without reaching the emulator. */
  | { readonly kind: 'throttle'; readonly code?: string; readonly status?: number }
  /** Answer with a server error (default HTTP 503 `ServiceUnavailable`). */
  | { readonly kind: 'error'; readonly status?: number; readonly code?: string; readonly message?: string }
  /** Wait, then forward. */
  | { readonly kind: 'latency'; readonly ms: number }
  /** Close the connection without answering. */
  | { readonly kind: 'drop' }
  /**
   * An endpoint that does not answer: the call never reaches the emulator and gets no answer;
   * the connection is held until the client gives up and closes it (or `maxMs`, default 5 min).
   * Unlike `latency`, nothing is carried out late, after the client stopped waiting.
   */
  | { readonly kind: 'hang'; readonly maxMs?: number }
  /** Forward (so the emulator carries the call out), then close the connection: the answer is lost. */
  | { readonly kind: 'dropResponse' }
  /** Forward, then rewrite the response body (e.g. to fake a slow state transition). */
  | { readonly kind: 'rewrite'; readonly rewrite: (body: string, call: AwsCall) => string }
  /**
   * Decide per call what the real service would answer where the emulator answers differently:
   * `respond` sees the call and the emulator's endpoint (to read its state, unrecorded) and
   * returns the answer to send instead of forwarding, or undefined to forward the call as usual
   * (recorded as `forwarded`). See dev/route53Fidelity.ts.
   */
  | {
      readonly kind: 'respond';
      readonly respond: (call: AwsCall, emulator: string) => Promise<ProxyAnswer | undefined>;
    }
  /**
   * A service quota: a token bucket per signing access key (one account in
   * the emulator), or per what `bucketOf` names (e.g. the account an assumed
   * role's session keys belong to: one account, however many sessions), admits
   * `ratePerSecond` calls with bursts up to `burst` (default `ratePerSecond`);
   * calls beyond it are answered like `throttle` (default `Throttling`, HTTP
   * 400). Admitted calls do not count as hits and fall through to later rules.
   */
  | {
      readonly kind: 'rateLimit';
      readonly ratePerSecond: number;
      readonly burst?: number;
      readonly code?: string;
      readonly status?: number;
      readonly bucketOf?: (call: AwsCall) => string;
    };

/** A whole HTTP answer the proxy sends in place of the emulator's (e.g. from errorResponse). */
export interface ProxyAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** When a fault applies. Omitted fields match anything. */
export interface FaultRule {
  readonly service?: string;
  readonly operation?: string | RegExp;
  /** Extra predicate over the call (e.g. a hosted zone id in the path). */
  readonly match?: (call: AwsCall) => boolean;
  readonly fault: Fault;
  /** Apply to the next N matching calls only. */
  readonly times?: number;
  /** Apply to each matching call with this probability (0..1), drawn from the proxy's rng. */
  readonly probability?: number;
}

/** A rule once installed: how often it fired, and a way to remove it. */
export interface InstalledRule {
  readonly hits: number;
  remove(): void;
}

/** One call the proxy saw, and what it did with it. */
export interface CallRecord extends Omit<AwsCall, 'body'> {
  /** The fault kind applied, or 'forwarded'. */
  readonly outcome: Fault['kind'] | 'forwarded';
  readonly status: number;
}

/** Options for {@link AwsFaultProxy.start}. */
export interface AwsFaultProxyOptions {
  /** The emulator's endpoint, e.g. http://127.0.0.1:5000. */
  readonly target: string;
  /** Random source in [0,1) for probabilistic rules; injectable for repeatable tests. */
  readonly random?: () => number;
  /** Millisecond clock for `rateLimit` rules; injectable for repeatable tests. */
  readonly now?: () => number;
  /** Address to listen on (default 127.0.0.1); a node test's Pods reach the host at its veth address. */
  readonly host?: string;
}

interface RuleState {
  readonly rule: FaultRule;
  hits: number;
  removed: boolean;
  /** `rateLimit` rules: tokens left and when they were counted, per access key. */
  readonly buckets: Map<string, { tokens: number; at: number }>;
}

/**
 * A loopback HTTP proxy between the AWS SDK and the emulator that counts
 * calls by service and operation and injects faults per rule: throttling,
 * 5xx, latency, dropped connections and rewritten responses. Rules are
 * checked in installation order; the first that matches (and has budget left)
 * applies. Safe to use from one test at a time; `stop()` is idempotent.
 */
export class AwsFaultProxy {
  readonly endpoint: string;
  private readonly server: Server;
  private readonly target: URL;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly rules: RuleState[] = [];
  private readonly log: CallRecord[] = [];
  private readonly watchers = new Set<(call: AwsCall) => void>();
  private readonly taps = new Set<(call: AwsCall, status: number, body: string) => void>();

  private constructor(
    server: Server,
    endpoint: string,
    target: URL,
    random: () => number,
    now: () => number,
  ) {
    this.server = server;
    this.endpoint = endpoint;
    this.target = target;
    this.random = random;
    this.now = now;
  }

  /** Starts listening on a free port of `host` (default loopback). */
  static async start(opts: AwsFaultProxyOptions): Promise<AwsFaultProxy> {
    const server = createServer();
    const host = opts.host ?? '127.0.0.1';
    await new Promise<void>((resolveListen, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => {
        resolveListen();
      });
    });
    const port = (server.address() as AddressInfo).port;
    const proxy = new AwsFaultProxy(
      server,
      `http://${host}:${port}`,
      new URL(opts.target),
      opts.random ?? Math.random,
      opts.now ?? Date.now,
    );
    server.on('request', (req, res) => {
      proxy.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) {
          res.writeHead(502, { 'content-type': 'text/plain' });
          res.end(`skylift fault proxy: ${err instanceof Error ? err.message : String(err)}`);
        } else {
          res.destroy();
        }
      });
    });
    return proxy;
  }

  /** Installs a rule; it stays until removed, exhausted (`times`) or {@link clearFaults}. */
  inject(rule: FaultRule): InstalledRule {
    if (rule.fault.kind === 'rateLimit') {
      const { ratePerSecond, burst } = rule.fault;
      if (!(ratePerSecond > 0) || (burst !== undefined && !(burst >= 1)))
        throw new Error('rateLimit: ratePerSecond must be > 0 and burst >= 1');
    }
    const state: RuleState = { rule, hits: 0, removed: false, buckets: new Map() };
    this.rules.push(state);
    return {
      get hits() {
        return state.hits;
      },
      remove: () => {
        state.removed = true;
      },
    };
  }

  /**
   * Calls `fn` with every call answered (forwarded, rewritten or answered by a `respond` rule —
   * whichever rule applied) and the answer's status and body, after it is sent; not for calls a
   * fault refused or dropped. Returns a function that stops it. For observers that must see what
   * the caller got whatever rules run (the ALB data plane recording imported keys).
   */
  tap(fn: (call: AwsCall, status: number, body: string) => void): () => void {
    this.taps.add(fn);
    return () => {
      this.taps.delete(fn);
    };
  }

  /**
   * Calls `fn` with every call as it arrives, body included, before any rule applies (the call
   * log keeps no bodies). Returns a function that stops it.
   */
  watch(fn: (call: AwsCall) => void): () => void {
    this.watchers.add(fn);
    return () => {
      this.watchers.delete(fn);
    };
  }

  /** Removes every rule. */
  clearFaults(): void {
    for (const r of this.rules) r.removed = true;
    this.rules.length = 0;
  }

  /** Every call seen since the last {@link resetCalls}, oldest first. */
  calls(): readonly CallRecord[] {
    return this.log;
  }

  /** How many calls matched (all faults included). */
  count(filter: { service?: string; operation?: string; outcome?: CallRecord['outcome'] } = {}): number {
    return this.log.filter(
      (c) =>
        (filter.service === undefined || c.service === filter.service) &&
        (filter.operation === undefined || c.operation === filter.operation) &&
        (filter.outcome === undefined || c.outcome === filter.outcome),
    ).length;
  }

  /** Call counts keyed `service:Operation`, for reports. */
  countsByOperation(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const c of this.log) {
      const key = `${c.service}:${c.operation}`;
      out[key] = (out[key] ?? 0) + 1;
    }
    return out;
  }

  /** Forgets the call log (rules stay). */
  resetCalls(): void {
    this.log.length = 0;
  }

  /** Stops listening and closes open connections. Idempotent. */
  async stop(): Promise<void> {
    if (!this.server.listening) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolveClose) =>
      this.server.close(() => {
        resolveClose();
      }),
    );
  }

  private pickRule(call: AwsCall): RuleState | undefined {
    for (const state of this.rules) {
      const r = state.rule;
      if (state.removed) continue;
      if (r.times !== undefined && state.hits >= r.times) continue;
      if (r.service !== undefined && r.service !== call.service) continue;
      if (r.operation !== undefined) {
        const ok =
          typeof r.operation === 'string' ? r.operation === call.operation : r.operation.test(call.operation);
        if (!ok) continue;
      }
      if (r.match !== undefined && !r.match(call)) continue;
      if (r.probability !== undefined && this.random() >= r.probability) continue;
      if (r.fault.kind === 'rateLimit' && this.admit(state, r.fault, call)) continue;
      return state;
    }
    return undefined;
  }

  /** Takes a token from the caller's bucket if one is there (the call is within the quota). */
  private admit(state: RuleState, fault: Extract<Fault, { kind: 'rateLimit' }>, call: AwsCall): boolean {
    const burst = fault.burst ?? fault.ratePerSecond;
    const key = fault.bucketOf?.(call) ?? call.accessKeyId ?? '';
    const now = this.now();
    const bucket = state.buckets.get(key) ?? { tokens: burst, at: now };
    bucket.tokens = Math.min(
      burst,
      bucket.tokens + (Math.max(0, now - bucket.at) / 1000) * fault.ratePerSecond,
    );
    bucket.at = now;
    state.buckets.set(key, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const bodyBuf = Buffer.concat(chunks);
    const call = identifyCall({
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: req.headers,
      body: bodyBuf.toString('utf8'),
    });
    const { body: _body, ...callInfo } = call;
    for (const w of this.watchers) w(call);
    const state = this.pickRule(call);
    if (state !== undefined) state.hits++;
    const fault = state?.rule.fault;
    const record = (outcome: CallRecord['outcome'], status: number): void => {
      this.log.push({ ...callInfo, outcome, status });
    };

    switch (fault?.kind) {
      case 'throttle':
      case 'rateLimit': {
        const status = fault.status ?? 400;
        const e = errorResponse(
          call.service,
          status,
          fault.code ?? 'Throttling',
          'Rate exceeded',
          randomUUID(),
        );
        record(fault.kind, status);
        res.writeHead(e.status, e.headers).end(e.body);
        return;
      }
      case 'error': {
        const status = fault.status ?? 503;
        const e = errorResponse(
          call.service,
          status,
          fault.code ?? (status === 500 ? 'InternalFailure' : 'ServiceUnavailable'),
          fault.message ?? 'injected server error',
          randomUUID(),
        );
        record('error', status);
        res.writeHead(e.status, e.headers).end(e.body);
        return;
      }
      case 'drop':
        record('drop', 0);
        req.socket.destroy();
        return;
      case 'latency':
        await delay(fault.ms);
        break;
      case 'hang': {
        record('hang', 0);
        const ac = new AbortController();
        await Promise.race([
          new Promise<void>((closed) => res.once('close', closed)),
          delay(fault.maxMs ?? 300_000, undefined, { signal: ac.signal }).catch(() => undefined),
        ]);
        ac.abort();
        req.socket.destroy();
        return;
      }
      case 'dropResponse': {
        const upstream = await this.forward(req, bodyBuf, false);
        record('dropResponse', upstream.status);
        req.socket.destroy();
        return;
      }
      case 'respond': {
        const answer = await fault.respond(call, this.target.origin);
        if (answer === undefined) break;
        record('respond', answer.status);
        res.writeHead(answer.status, { ...answer.headers }).end(answer.body);
        for (const t of this.taps) t(call, answer.status, answer.body);
        return;
      }
      case 'rewrite':
      case undefined:
        break;
    }

    const upstream = await this.forward(req, bodyBuf, fault?.kind === 'rewrite');
    let out = upstream.body;
    if (fault?.kind === 'rewrite') out = Buffer.from(fault.rewrite(out.toString('utf8'), call), 'utf8');
    // Hop-by-hop headers describe the emulator's connection to this proxy, not the SDK's: moto's
    // `Connection: close` would make the SDK open a connection per call, which AWS does not.
    const headers = Object.fromEntries(
      Object.entries(upstream.headers).filter(([name]) => !hopByHopHeaders.has(name)),
    );
    headers['content-length'] = String(out.length);
    record(fault === undefined || fault.kind === 'respond' ? 'forwarded' : fault.kind, upstream.status);
    res.writeHead(upstream.status, headers).end(out);
    if (this.taps.size > 0) {
      const text = out.toString('utf8');
      for (const t of this.taps) t(call, upstream.status, text);
    }
  }

  private forward(
    req: IncomingMessage,
    body: Buffer,
    identity: boolean,
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
    const headers = { ...req.headers };
    if (identity) headers['accept-encoding'] = 'identity';
    return new Promise((resolveForward, reject) => {
      const up = request(
        {
          protocol: this.target.protocol,
          hostname: this.target.hostname,
          port: this.target.port,
          method: req.method,
          path: req.url,
          headers,
        },
        (upRes) => {
          const chunks: Buffer[] = [];
          upRes.on('data', (c: Buffer) => chunks.push(c));
          upRes.on('end', () => {
            resolveForward({
              status: upRes.statusCode ?? 502,
              headers: upRes.headers,
              body: Buffer.concat(chunks),
            });
          });
          upRes.on('error', reject);
        },
      );
      up.on('error', reject);
      up.end(body);
    });
  }
}

/** Headers of one connection (RFC 9110 7.6.1) that a proxy does not pass on. */
const hopByHopHeaders: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** A rule that makes RDS report `creating` for the next `describes` DescribeDBInstances calls. */
export function rdsSlowCreate(describes: number, status = 'creating'): FaultRule {
  return {
    service: 'rds',
    operation: 'DescribeDBInstances',
    times: describes,
    fault: {
      kind: 'rewrite',
      rewrite: (body) =>
        body.replace(
          /<DBInstanceStatus>[^<]*<\/DBInstanceStatus>/g,
          `<DBInstanceStatus>${status}</DBInstanceStatus>`,
        ),
    },
  };
}

/** A rule that makes Route 53 report change status PENDING for the next `calls` change/GetChange calls. */
export function route53Pending(calls: number): FaultRule {
  return {
    service: 'route53',
    operation: /^(GetChange|ChangeResourceRecordSets)$/,
    times: calls,
    fault: {
      kind: 'rewrite',
      rewrite: (body) => body.replace(/<Status>INSYNC<\/Status>/g, '<Status>PENDING</Status>'),
    },
  };
}

/**
 * Route 53's quota per account, five requests per second by default (the quota before July 2026;
 * 10 since): calls
 * beyond it get `Throttling` (HTTP 400, Route 53's XML error shape). One
 * bucket per access key, or per what `bucketOf` names (see the `rateLimit` fault).
 */
export function route53RateLimit(
  ratePerSecond = 5,
  burst = ratePerSecond,
  bucketOf?: (call: AwsCall) => string,
): FaultRule {
  return {
    service: 'route53',
    fault: { kind: 'rateLimit', ratePerSecond, burst, ...(bucketOf !== undefined ? { bucketOf } : {}) },
  };
}
