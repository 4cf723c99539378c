// One HTTP exchange with the apiserver over node:http / node:https. The operator does not load
// undici: importing it cost the process ~28 MiB RSS (issue 16).
import {
  request as httpRequest,
  type Agent,
  type IncomingMessage,
  type OutgoingHttpHeaders,
} from 'node:http';
import { request as httpsRequest } from 'node:https';

/**
 * The most of one answer's body `text()` reads (64 MiB). The largest answers are the informers'
 * list pages: at most 500 objects (informer.ts), Skylift's kinds, namespaces and TeamPolicies of a
 * few KiB each with managedFields, so a page is a few MiB; this admits 128 KiB per object on
 * average, and one object is at most ~1.5 MiB (etcd's request limit). Far more than that could not
 * be parsed within the chart's 192 MiB heap anyway: it is refused instead of exhausting memory.
 */
export const maxResponseBytes = 64 << 20;

/** An answer's body was longer than the limit it was read with; the connection was closed. */
export class ResponseTooLargeError extends Error {
  override readonly name = 'ResponseTooLargeError';
  /** The limit, in bytes. */
  readonly limit: number;
  constructor(limit: number) {
    super(`the answer is longer than ${limit} bytes`);
    this.limit = limit;
  }
}

/**
 * An answer whose body is still to be read. The caller reads the body — `text()`, or iterating
 * `body`, once — or calls `cancel()`: until then the connection stays taken. Reading fails with the
 * request's abort reason when its signal aborts, or with the connection's error (ECONNRESET …) when
 * it breaks mid-body.
 */
export interface KubeResponse {
  /** The HTTP status code. */
  readonly status: number;
  /** The Content-Type header; undefined: none. */
  readonly contentType: string | undefined;
  /** The body in chunks as they arrive. Iterate at most once; leaving the loop early closes the connection. */
  readonly body: AsyncIterable<Uint8Array>;
  /**
   * Reads the whole body as UTF-8; one longer than `maxBytes` (default {@link maxResponseBytes})
   * is read no further: the connection is closed and it rejects with ResponseTooLargeError.
   */
  text(maxBytes?: number): Promise<string>;
  /** Stops reading and closes the connection (it is not reused). Idempotent; nothing once the body was read. */
  cancel(): void;
}

/** One request to send. */
export interface HttpCall {
  readonly method: string;
  readonly url: URL;
  /** Header name → value; several values for a name that repeats. */
  readonly headers: OutgoingHttpHeaders;
  readonly body?: string | undefined;
  /** The connection pool: an https Agent for an https URL, an http one for http. */
  readonly agent: Agent;
  /**
   * Aborting it fails the request — or the body's reading, once answered — with its reason and
   * closes the connection.
   */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Sends `call`; resolves once the status and headers arrived. Rejects with the signal's reason when
 * it aborts first, otherwise with Node's error for the connection (refused, reset, DNS, TLS; with
 * its `code`). Throws at once, not rejecting, for a request Node will not send (a header value
 * with a line break): that is no connection failure. Never retries.
 */
export function send(call: HttpCall): Promise<KubeResponse> {
  const { signal } = call;
  if (signal?.aborted === true) return Promise.reject(abortReason(signal));
  const start = call.url.protocol === 'https:' ? httpsRequest : httpRequest;
  const req = start(call.url, { method: call.method, headers: call.headers, agent: call.agent });
  return new Promise((resolve, reject) => {
    let res: IncomingMessage | undefined;
    const onAbort = (): void => {
      const reason = abortReason(signal);
      // Before the answer: the request fails with the reason. After: the body's reader does; an
      // incomplete response's connection is closed either way.
      reject(reason);
      res?.destroy(reason);
      req.destroy(reason);
    };
    const done = (): void => signal?.removeEventListener('abort', onAbort);
    signal?.addEventListener('abort', onAbort, { once: true });
    // 'close' comes once the answer was read to its end, or the connection ended before that.
    req.on('close', done);
    req.on('error', reject);
    req.on('response', (answer) => {
      res = answer;
      noteKeepAlive(answer);
      // The reader of the body hears the error; without one it must not crash the process.
      answer.on('error', ignore);
      resolve(new NodeResponse(answer));
    });
    req.end(call.body);
  });
}

class NodeResponse implements KubeResponse {
  private readonly res: IncomingMessage;

  constructor(res: IncomingMessage) {
    this.res = res;
  }

  get status(): number {
    return this.res.statusCode ?? 0;
  }

  get contentType(): string | undefined {
    return this.res.headers['content-type'];
  }

  get body(): AsyncIterable<Uint8Array> {
    return this.res;
  }

  async text(maxBytes = maxResponseBytes): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of this.res) {
      size += (chunk as Buffer).length;
      // Leaving the loop destroys the response: the connection closes, nothing more is read.
      if (size > maxBytes) throw new ResponseTooLargeError(maxBytes);
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  cancel(): void {
    this.res.destroy();
  }
}

/** Per connection, the idle time the server last announced (`Keep-Alive: timeout=N`), in ms. */
const announcedKeepAlive = new WeakMap<object, number>();

function noteKeepAlive(res: IncomingMessage): void {
  const header = res.headers['keep-alive'];
  const seconds = /(?:^|[\s,])timeout=(\d+)/i.exec(typeof header === 'string' ? header : '')?.[1];
  if (seconds !== undefined) announcedKeepAlive.set(res.socket, Number(seconds) * 1000);
  else announcedKeepAlive.delete(res.socket);
}

/**
 * How long the server said it keeps `socket` open while idle (`Keep-Alive: timeout=N` on the last
 * answer received on it), in milliseconds; undefined when it did not say. A proxy in front of the
 * apiserver may announce far less than the client's own idle timeout.
 */
export function announcedIdleTimeoutMs(socket: object): number | undefined {
  return announcedKeepAlive.get(socket);
}

/** The signal's reason as an Error (an abort() without one gives a DOMException AbortError). */
function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error(String(reason));
}

function ignore(): void {
  // see the caller
}
