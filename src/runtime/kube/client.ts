import type { OutgoingHttpHeaders } from 'node:http';
import { realClock, type Clock } from '../clock.ts';
import { ConnectionPool } from './connectionPool.ts';
import { UserCredentials, type RequestAuth } from './credentials.ts';
import type { Kubeconfig } from './kubeconfig.ts';
import {
  maxResponseBytes,
  ResponseTooLargeError,
  send,
  type HttpCall,
  type KubeResponse,
} from './transport.ts';

export type { KubeResponse } from './transport.ts';

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

/**
 * The apiserver (or something in front of it) answered, but not as the Kubernetes API does: a 2xx
 * body that is not JSON, or a body longer than the client's limit. The status says whether the
 * request was carried out; the message gives status, content type and length, never the body.
 */
export class KubeResponseError extends Error {
  override readonly name = 'KubeResponseError';
  readonly statusCode: number;
  /** The answer's Content-Type; undefined: none. */
  readonly contentType: string | undefined;
  constructor(statusCode: number, contentType: string | undefined, message: string) {
    super(message);
    this.statusCode = statusCode;
    this.contentType = contentType;
  }
}

/** At most this much of an error answer's body becomes the message of its KubeApiError. */
const maxErrorTextChars = 500;
/** At most this much of a Status's own message (validation lists several fields, webhooks explain). */
const maxStatusMessageChars = 2_000;

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
  /** The longest answer body `request()` reads (default transport.ts's maxResponseBytes, 64 MiB). */
  readonly maxResponseBytes?: number;
}

/** Patch content types. */
export type PatchType = 'merge' | 'json' | 'apply' | 'strategic';

const patchContentType: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  apply: 'application/apply-patch+yaml',
  /** Built-in types only (a Pod's conditions merge by type). */
  strategic: 'application/strategic-merge-patch+json',
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
 * is retried here. All requests share one connection pool (connectionPool.ts)
 * and speak HTTP/1.1 over node:https (transport.ts).
 */
export class KubeClient {
  readonly config: Kubeconfig;
  private readonly server: string;
  private readonly observers: RequestObserver[] = [];
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly credentials: UserCredentials;
  private readonly pool: ConnectionPool;

  constructor(config: Kubeconfig, opts: KubeClientOptions = {}) {
    this.config = config;
    this.timeoutMs = opts.timeoutMs ?? kubeRequestTimeoutMs;
    this.maxResponseBytes = opts.maxResponseBytes ?? maxResponseBytes;
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
   * Sends a request and parses the JSON answer, within the deadline (the answer's body included);
   * throws KubeApiError on non-2xx, KubeResponseError for a 2xx answer that is not JSON or any body
   * over the client's limit, KubeUnreachableError when no answer came, and the abort reason when
   * `signal` aborted it.
   */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const ms = opts.timeoutMs ?? this.timeoutMs;
    const deadline = AbortSignal.timeout(ms);
    const signal = opts.signal !== undefined ? AbortSignal.any([opts.signal, deadline]) : deadline;
    const answer = this.exchange(...(await this.prepare(method, path, opts, signal)));
    let res: KubeResponse;
    let text: string;
    try {
      res = await answer;
    } catch (err) {
      throw this.noAnswer(method, path, err, opts.signal, ms);
    }
    const { status, contentType } = res;
    const answered = `the Kubernetes API server ${this.server} answered ${method} ${path} with status ${status} and`;
    const type = contentType ?? 'no content type';
    try {
      text = await res.text(this.maxResponseBytes);
    } catch (err) {
      if (!(err instanceof ResponseTooLargeError)) throw this.noAnswer(method, path, err, opts.signal, ms);
      for (const o of this.observers) o(method, path, status);
      throw new KubeResponseError(status, contentType, `${answered} more than ${err.limit} bytes of ${type}`);
    }
    for (const o of this.observers) o(method, path, status);
    if (status < 200 || status >= 300) throw toApiError(status, text);
    if (text === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      // Not the body, nor the SyntaxError (it quotes the body): what came, not what it said.
      throw new KubeResponseError(
        status,
        contentType,
        `${answered} ${Buffer.byteLength(text)} bytes of ${type}, not JSON`,
      );
    }
  }

  /**
   * Sends a request and returns the answer with its body unread (for watch streams): the caller
   * reads or cancels it, and aborting `signal` closes it. No deadline unless `timeoutMs` is given
   * (it then covers the body too). Throws KubeUnreachableError when no answer came, the abort
   * reason when `signal` aborted it; a non-2xx answer is returned like any other.
   */
  async raw(method: string, path: string, opts: RequestOptions = {}): Promise<KubeResponse> {
    const ms = opts.timeoutMs;
    const deadline = ms !== undefined ? AbortSignal.timeout(ms) : undefined;
    const signal =
      opts.signal !== undefined && deadline !== undefined
        ? AbortSignal.any([opts.signal, deadline])
        : (opts.signal ?? deadline);
    const answer = this.exchange(...(await this.prepare(method, path, opts, signal)));
    try {
      return await answer;
    } catch (err) {
      throw this.noAnswer(method, path, err, opts.signal, ms);
    }
  }

  /**
   * The request with its credentials (these may throw KubeCredentialError) and connection pool,
   * and what it authenticates with.
   */
  private async prepare(
    method: string,
    path: string,
    opts: RequestOptions,
    signal: AbortSignal | undefined,
  ): Promise<[HttpCall, RequestAuth]> {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries(opts.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const auth = await this.credentials.forRequest();
    const headers: OutgoingHttpHeaders = { accept: 'application/json' };
    for (const [name, value] of auth.headers) {
      const prev = headers[name];
      headers[name] = prev === undefined ? value : [...(Array.isArray(prev) ? prev : [String(prev)]), value];
    }
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = opts.contentType ?? 'application/json';
      // Framed by its length: Node sends a DELETE's body unframed (no chunking for DELETE), and the
      // apiserver then reads that body as the next request on the kept-alive connection (400).
      headers['content-length'] = Buffer.byteLength(body);
    }
    return [{ method, url, headers, body, agent: this.pool.agent(auth.clientCertificate), signal }, auth];
  }

  /**
   * The answer to `call`, sent with `auth`; throws at once for a request Node will not send (see
   * send).
   */
  private exchange(call: HttpCall, auth: RequestAuth): Promise<KubeResponse> {
    return send(call).then((res) => {
      // A refused credential (expired, revoked, rotated): the next request fetches it anew — unless
      // it was replaced meanwhile (this answers a request sent before).
      if (res.status === 401) this.credentials.rejected(auth);
      return res;
    });
  }

  /**
   * What a request that got no answer throws: the caller's abort reason as it is; otherwise
   * KubeUnreachableError naming the server and the cause, or — its deadline of `ms` passed — the
   * method and path.
   */
  private noAnswer(
    method: string,
    path: string,
    err: unknown,
    callerSignal: AbortSignal | undefined,
    ms: number | undefined,
  ): unknown {
    if (callerSignal?.aborted === true) return err;
    if (ms !== undefined && err instanceof Error && err.name === 'TimeoutError') {
      return new KubeUnreachableError(
        `the Kubernetes API server ${this.server} did not answer ${method} ${path} within ${ms / 1000} s`,
        { cause: err },
      );
    }
    const code = err instanceof Error ? (err as Error & { code?: unknown }).code : undefined;
    const detail =
      err instanceof Error
        ? `${typeof code === 'string' && !err.message.includes(code) ? `${code}: ` : ''}${err.message}`
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

  /**
   * PATCH with the given patch type; `fieldManager` is required for apply patches. `timeoutMs`: the
   * deadline of this request (default the client's).
   */
  patch<T>(
    path: string,
    body: unknown,
    type: PatchType,
    query?: RequestOptions['query'],
    timeoutMs?: number,
  ): Promise<T> {
    return this.request<T>('PATCH', path, {
      body,
      contentType: patchContentType[type],
      ...(query !== undefined ? { query } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    });
  }

  delete<T>(path: string, body?: unknown): Promise<T> {
    return this.request<T>('DELETE', path, body !== undefined ? { body } : {});
  }
}

/**
 * The error an error answer stands for: a Status gives its reason and message (cut to
 * {@link maxStatusMessageChars}); anything else the status code as reason and the start of the body
 * (cut to {@link maxErrorTextChars}) as message. Pure.
 */
function toApiError(statusCode: number, text: string): KubeApiError {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    doc = undefined;
  }
  const status = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>) : {};
  const reason =
    typeof status.reason === 'string' && status.reason !== '' ? status.reason : String(statusCode);
  const message =
    typeof status.message === 'string'
      ? cut(status.message, maxStatusMessageChars)
      : cut(text, maxErrorTextChars);
  return new KubeApiError(statusCode, reason, message);
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
