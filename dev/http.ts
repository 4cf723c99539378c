import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';

/** A response read whole. */
export interface SimpleResponse {
  readonly status: number;
  readonly body: string;
}

/** Options for {@link simpleRequest}. */
export interface SimpleRequestOptions {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** PEM CA bundle to trust for https URLs. */
  readonly ca?: string;
  readonly timeoutMs?: number;
}

/**
 * One HTTP(S) request with a timeout, reading the body as text. Used for
 * health probes of the local control plane and emulator; rejects on network
 * errors and timeouts, never on HTTP status.
 */
export async function simpleRequest(url: string, opts: SimpleRequestOptions = {}): Promise<SimpleResponse> {
  const u = new URL(url);
  const make = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolveResponse, reject) => {
    const req = make(
      u,
      {
        method: opts.method ?? 'GET',
        headers: opts.headers,
        ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
        timeout: opts.timeoutMs ?? 5000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          resolveResponse({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`request to ${url} timed out`)));
    req.on('error', reject);
    req.end(opts.body);
  });
}
