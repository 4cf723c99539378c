import { KubeConfig, RequestContext, type HttpMethod } from '@kubernetes/client-node';
import { fetch, type Dispatcher } from 'undici';

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
}

/** A hook told about every request, for metrics and write counting in tests. */
export type RequestObserver = (method: string, path: string, statusCode: number) => void;

/**
 * A thin JSON REST client for the Kubernetes API, authenticated from a
 * KubeConfig (token, client cert, in-cluster service account). It knows
 * nothing about resource types beyond paths; errors become {@link KubeApiError}.
 * Requests may block on the network; none is retried here.
 */
export class KubeClient {
  readonly config: KubeConfig;
  private readonly server: string;
  private readonly observers: RequestObserver[] = [];

  constructor(config: KubeConfig) {
    this.config = config;
    const cluster = config.getCurrentCluster();
    if (cluster === null) throw new Error('kubeconfig has no current cluster');
    this.server = cluster.server.replace(/\/$/, '');
  }

  /** Registers a hook called after every request. */
  observe(fn: RequestObserver): void {
    this.observers.push(fn);
  }

  /** Sends a request and parses the JSON answer; throws KubeApiError on non-2xx. */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.raw(method, path, opts);
    const text = await res.text();
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
    const ctx = new RequestContext(url.toString(), method as HttpMethod);
    await this.config.applySecurityAuthentication(ctx);
    const headers: Record<string, string> = { ...ctx.getHeaders(), accept: 'application/json' };
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = opts.contentType ?? 'application/json';
    }
    const dispatcher: Dispatcher | undefined = ctx.getDispatcher();
    return fetch(url, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
      ...(dispatcher !== undefined ? { dispatcher } : {}),
      ...(opts.signal !== undefined ? { signal: opts.signal } : {}),
    });
  }

  get<T>(path: string, query?: RequestOptions['query']): Promise<T> {
    return this.request<T>('GET', path, query !== undefined ? { query } : {});
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

function toApiError(statusCode: number, text: string): KubeApiError {
  try {
    const status = JSON.parse(text) as { reason?: string; message?: string };
    return new KubeApiError(statusCode, status.reason ?? String(statusCode), status.message ?? text);
  } catch {
    return new KubeApiError(statusCode, String(statusCode), text.slice(0, 500));
  }
}

/** Loads a KubeConfig from a path, `$KUBECONFIG`, `~/.kube/config`, or the in-cluster service account. */
export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path !== undefined && path !== '') kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}
