import { fetch } from 'undici';
import { realClock, type Clock } from '../clock.ts';
import { ConnectionPool } from './connectionPool.ts';
import { UserCredentials } from './credentials.ts';
import type { Kubeconfig } from './kubeconfig.ts';

/** An error answer from the apiserver, with its HTTP status and Status reason. */
export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  readonly statusCode: number;
  /** Kubernetes Status reason: NotFound, Conflict, AlreadyExists, Invalid, Forbidden, Expired, Gone, … */
  readonly reason: string;
  constructor(statusCode: number, reason: string, message: string) {
    super(message);
    this.statusCode = statusCode;
    this.reason = reason;
  }
}

/**
 * The apiserver did not answer: the connection failed (refused, reset, DNS)
 * or no answer came within the request's deadline. Nothing is known about
 * whether a write was carried out.
 */
export class KubeUnreachableError extends Error {
  override readonly name = 'KubeUnreachableError';
}

/** Default deadline of one apiserver request (watches excepted). */
export const kubeRequestTimeoutMs = 30_000;

/** Options of a {@link KubeClient}. */
export interface KubeClientOptions {
  /** Deadline of every request but watch streams (default {@link kubeRequestTimeoutMs}). */
  readonly timeoutMs?: number;
  /** Token-file age, exec credential expiry and pool renewal are judged on it (default the wall clock). */
  readonly clock?: Pick<Clock, 'now'>;
  /** Deadline of one exec credential plugin run (default execPluginTimeoutMs). */
  readonly execTimeoutMs?: number;
}

/** Patch content types. */
export type PatchType = 'merge' | 'json' | 'apply';

const patchContentType: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  apply: 'application/apply-patch+yaml',
};

/** Options of one request. */
export interface RequestOptions {
  readonly query?: Record<string, string | number | boolean | undefined>;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly signal?: AbortSignal;
  /** Deadline of this request; default the client's. Watch streams (`raw`) have none unless given. */
  readonly timeoutMs?: number;
}

/** A hook told about every request, for metrics and write counting in tests. */
export type RequestObserver = (method: string, path: string, statusCode: number) => void;

/**
 * A thin JSON REST client for the Kubernetes API, authenticated as a
 * {@link Kubeconfig}'s user (token or token file, client certificate, exec
 * plugin, basic; see credentials.ts). It knows nothing about resource types
 * beyond paths; error answers become {@link KubeApiError}, no answer
 * {@link KubeUnreachableError}, credentials that cannot be had
 * KubeCredentialError. Every request but a watch stream has a deadline; none
 * is retried here. All requests share one connection pool (connectionPool.ts).
 */
export class KubeClient {
  readonly config: Kubeconfig;
  private readonly server: string;
  private readonly observers: RequestObserver[] = [];
  private readonly timeoutMs: number;
  private readonly credentials: UserCredentials;
  private readonly pool: ConnectionPool;

  constructor(config: Kubeconfig, opts: KubeClientOptions = {}) {
    this.config = config;
    this.timeoutMs = opts.timeoutMs ?? kubeRequestTimeoutMs;
    this.server = config.cluster.server;
    const clock = opts.clock ?? realClock;
    this.credentials = new UserCredentials(config, {
      clock,
      ...(opts.execTimeoutMs !== undefined ? { execTimeoutMs: opts.execTimeoutMs } : {}),
    });
    this.pool = new ConnectionPool(config.cluster, config.user.name, clock);
  }

  /** Registers a hook called after every request. */
  observe(fn: RequestObserver): void {
    this.observers.push(fn);
  }

  /**
   * Sends a request and parses the JSON answer, within the deadline; throws
   * KubeApiError on non-2xx and KubeUnreachableError when no answer came.
   */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const ms = opts.timeoutMs ?? this.timeoutMs;
    const deadline = AbortSignal.timeout(ms);
    const signal = opts.signal !== undefined ? AbortSignal.any([opts.signal, deadline]) : deadline;
    let text: string;
    let res: Awaited<ReturnType<typeof fetch>>;
    try {
      res = await this.raw(method, path, { ...opts, signal });
      text = await res.text();
    } catch (err) {
      if (opts.signal?.aborted === true || !noAnswer(err)) throw err;
      throw this.unreachable(method, path, ms, err);
    }
    for (const o of this.observers) o(method, path, res.status);
    if (res.status < 200 || res.status >= 300) throw toApiError(res.status, text);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }

  /** Sends a request and returns the raw response (for watch streams). The caller reads or cancels the body. */
  async raw(
    method: string,
    path: string,
    opts: RequestOptions = {},
  ): Promise<Awaited<ReturnType<typeof fetch>>> {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries(opts.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const auth = await this.credentials.forRequest();
    const headers: [string, string][] = [...auth.headers, ['accept', 'application/json']];
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers.push(['content-type', opts.contentType ?? 'application/json']);
    }
    const res = await fetch(url, {
      method,
      headers,
      dispatcher: this.pool.dispatcher(auth.clientCertificate),
      ...(body !== undefined ? { body } : {}),
      ...(opts.signal !== undefined ? { signal: opts.signal } : {}),
    });
    // A refused credential (expired, revoked, rotated): the next request fetches it anew.
    if (res.status === 401) this.credentials.rejected();
    return res;
  }

  /** What a request that got no answer failed with, naming the server and the cause. */
  private unreachable(method: string, path: string, ms: number, err: unknown): Error {
    if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
      return new KubeUnreachableError(
        `the Kubernetes API server ${this.server} did not answer ${method} ${path} within ${ms / 1000} s`,
        { cause: err },
      );
    }
    const cause: unknown = err instanceof Error ? err.cause : undefined;
    const code = cause instanceof Error ? (cause as Error & { code?: unknown }).code : undefined;
    const detail =
      cause instanceof Error
        ? `${typeof code === 'string' && !cause.message.includes(code) ? `${code}: ` : ''}${cause.message}`
        : err instanceof Error
          ? err.message
          : String(err);
    return new KubeUnreachableError(`cannot reach the Kubernetes API server ${this.server}: ${detail}`, {
      cause: err,
    });
  }

  /** GET within the deadline; `signal` aborts it earlier. */
  get<T>(path: string, query?: RequestOptions['query'], signal?: AbortSignal): Promise<T> {
    return this.request<T>('GET', path, {
      ...(query !== undefined ? { query } : {}),
      ...(signal !== undefined ? { signal } : {}),
    });
  }

  create<T>(path: string, body: unknown, query?: RequestOptions['query']): Promise<T> {
    return this.request<T>('POST', path, { body, ...(query !== undefined ? { query } : {}) });
  }

  /** PATCH with the given patch type; `fieldManager` is required for apply patches. */
  patch<T>(path: string, body: unknown, type: PatchType, query?: RequestOptions['query']): Promise<T> {
    return this.request<T>('PATCH', path, {
      body,
      contentType: patchContentType[type],
      ...(query !== undefined ? { query } : {}),
    });
  }

  delete<T>(path: string, body?: unknown): Promise<T> {
    return this.request<T>('DELETE', path, body !== undefined ? { body } : {});
  }
}

/** True for fetch's "no answer" failures: the connection failed, or the deadline passed. Pure. */
function noAnswer(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return (
    err.name === 'TimeoutError' ||
    err.name === 'AbortError' ||
    (err instanceof TypeError && err.message === 'fetch failed') ||
    (err as Error & { code?: unknown }).code === 'UND_ERR_SOCKET'
  );
}

function toApiError(statusCode: number, text: string): KubeApiError {
  try {
    const status = JSON.parse(text) as { reason?: string; message?: string };
    return new KubeApiError(statusCode, status.reason ?? String(statusCode), status.message ?? text);
  } catch {
    return new KubeApiError(statusCode, String(statusCode), text.slice(0, 500));
  }
}
