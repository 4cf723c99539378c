// Bounded load through a listener of the ALB data plane, counted per request: the sample app
// (hack/nodeimages/hello) answers `hello from <pod> at <ip:port>`, so each outcome names the Pod
// that answered. Every loop is bounded in count and time, and sends to loopback only.
import { request } from 'node:http';
import type { Endpoint } from '../../dev/albDataPlane/dataPlane.ts';
import { waitFor } from '../../dev/wait.ts';

/** One request through the load balancer: its status and the Pod that answered, or why it failed. */
export interface Outcome {
  readonly at: number;
  readonly status: number;
  readonly pod?: string;
  readonly error?: string;
}

/** Whether a request was answered 2xx by a Pod (the sample app named itself). */
export const ok = (o: Outcome): boolean => o.status >= 200 && o.status < 300 && o.pod !== undefined;

/** Requests per second the load sends (one every 20 ms). */
export const RATE = 50;
/** How long one request may take before it counts as failed. */
export const REQUEST_TIMEOUT_MS = 15_000;
/** GET / through the listener; never rejects. The sample app answers `hello from <pod> at <ip:port>`. */
export function get(ep: Endpoint): Promise<Outcome> {
  const at = Date.now();
  return new Promise((resolveOutcome) => {
    const req = request(
      {
        host: ep.host,
        port: ep.port,
        path: '/',
        timeout: REQUEST_TIMEOUT_MS,
        headers: { connection: 'close' },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => {
          const pod = /^hello from (\S+) at /.exec(body)?.[1];
          resolveOutcome({
            at,
            status: res.statusCode ?? 0,
            ...(pod !== undefined ? { pod } : { error: body.trim().slice(0, 200) }),
          });
        });
        res.on('error', (err) => {
          resolveOutcome({ at, status: 0, error: err.message });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => {
      resolveOutcome({ at, status: 0, error: err.message });
    });
    req.end();
  });
}

/** Load at {@link RATE} requests per second, each sent on its tick (not after the previous answer). */
export interface Load {
  /** Requests sent so far. */
  sent(): number;
  /**
   * The `n` requests sent just before the first one still unanswered (or the last `n`, if none is):
   * the latest run of `n` consecutive requests whose outcomes are all final. Undefined before that.
   */
  lastAnswered(n: number): Outcome[] | undefined;
  /** Stops sending and resolves with every outcome, in the order sent, once all are answered. */
  stop(): Promise<Outcome[]>;
}

/** Whether `host` is a loopback address (the data plane's listeners are on 127.0.0.1). Pure. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * Starts sending; stops by itself after `max` requests or `maxMs`, whichever comes first. Throws
 * for an endpoint that is not on loopback, or unbounded limits: load goes to the local data plane only.
 */
export function startLoad(ep: Endpoint, max: number, maxMs: number): Load {
  if (!isLoopback(ep.host)) throw new Error(`load goes to loopback only, not to ${ep.host}`);
  if (!Number.isFinite(max) || !Number.isFinite(maxMs) || max < 0 || maxMs < 0)
    throw new Error(`load must be bounded: max ${max}, maxMs ${maxMs}`);
  const bySeq: (Outcome | undefined)[] = [];
  const inFlight = new Set<Promise<void>>();
  const started = Date.now();
  let finished: () => void = () => undefined;
  const done = new Promise<void>((resolveDone) => (finished = resolveDone));
  const timer = setInterval(() => {
    if (bySeq.length >= max || Date.now() - started >= maxMs) {
      clearInterval(timer);
      finished();
      return;
    }
    const seq = bySeq.length;
    bySeq.push(undefined);
    const p = get(ep).then((o) => {
      bySeq[seq] = o;
    });
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  }, 1000 / RATE);
  return {
    sent: () => bySeq.length,
    lastAnswered(n) {
      const pending = bySeq.indexOf(undefined);
      const end = pending < 0 ? bySeq.length : pending;
      return end >= n ? (bySeq.slice(end - n, end) as Outcome[]) : undefined;
    },
    async stop() {
      clearInterval(timer);
      finished();
      await done;
      await Promise.all([...inFlight]);
      return bySeq.filter((o) => o !== undefined);
    },
  };
}

/** Sends `n` requests at {@link RATE} per second and resolves with every outcome. */
export async function burst(ep: Endpoint, n: number): Promise<Outcome[]> {
  const load = startLoad(ep, n, (n / RATE) * 1000 * 3 + 10_000);
  await waitFor(() => (load.sent() >= n ? true : undefined), {
    timeoutMs: (n / RATE) * 1000 * 3 + 10_000,
    description: `${n} requests sent`,
    intervalMs: 50,
  });
  return load.stop();
}

/** Answers per Pod, and the failures (`status reason`, one entry per failed request). */
export function tally(outcomes: readonly Outcome[]): { perPod: Record<string, number>; failures: string[] } {
  const perPod: Record<string, number> = {};
  const failures: string[] = [];
  for (const o of outcomes) {
    if (ok(o) && o.pod !== undefined) perPod[o.pod] = (perPod[o.pod] ?? 0) + 1;
    else failures.push(`${o.status} ${o.error ?? ''}`.trim());
  }
  return { perPod, failures };
}

/** Prints a phase's counts: answers per Pod, failures by kind, and when the failed requests were sent. */
export function report(phase: string, outcomes: readonly Outcome[], since?: number, tag = 'traffic'): void {
  const t = tally(outcomes);
  const kinds: Record<string, number> = {};
  for (const f of t.failures) kinds[f] = (kinds[f] ?? 0) + 1;
  const failedAt = outcomes.filter((o) => !ok(o)).map((o) => o.at - (since ?? o.at));
  const window =
    since !== undefined && failedAt.length > 0
      ? `, sent ${Math.min(...failedAt)}–${Math.max(...failedAt)} ms after the scale`
      : '';
  process.stdout.write(
    `[${tag}] ${phase}: ${outcomes.length} requests, per Pod ${JSON.stringify(t.perPod)}, ${t.failures.length} failed${t.failures.length > 0 ? ` ${JSON.stringify(kinds)}${window}` : ''}\n`,
  );
}
