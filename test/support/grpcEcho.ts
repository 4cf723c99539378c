// A minimal gRPC unary server and client over node:http2, for traffic tests without a gRPC library:
// a message is framed as gRPC frames it (a 5-byte prefix: compressed flag 0, then the length,
// big-endian) and carried as raw bytes, no protobuf. The server stands for a Pod as the loopback
// HTTP backends do (test/support/loopbackBackends.ts: a `10.250.<subnet>.x` Pod IP the data plane
// dials as `127.0.0.x`), serves cleartext HTTP/2 (h2c, what the ALB data plane sends to a GRPC
// target group), answers each call to one of its services with its name and the request's
// message, counting calls per path, and any other call (the ALB's health check
// `/AWS.ALB/healthcheck` among them) with grpc-status 12, UNIMPLEMENTED, as a gRPC server does.
import {
  connect,
  createServer,
  type Http2Server,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from 'node:http2';
import type { AddressInfo } from 'node:net';

/** A message in a gRPC frame: flag 0 (not compressed), its length (4 bytes, big-endian), the bytes. Pure. */
export function grpcFrame(message: Buffer): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}

/** The messages of a body of gRPC frames (a truncated last frame is left out). Pure. */
export function grpcMessages(body: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  while (at + 5 <= body.length) {
    const length = body.readUInt32BE(at + 1);
    if (at + 5 + length > body.length) break;
    out.push(body.subarray(at + 5, at + 5 + length));
    at += 5 + length;
  }
  return out;
}

/** A loopback gRPC server standing for a Pod. */
export interface GrpcBackend {
  readonly name: string;
  /** The Pod IP it stands for. */
  readonly ip: string;
  port: number;
  /** Calls answered with grpc-status 0, by path (`/service/method`). */
  readonly calls: Map<string, number>;
  readonly server: Http2Server;
}

/** Calls a backend answered for `path` (0 when none). */
export function callsOf(b: GrpcBackend, path: string): number {
  return b.calls.get(path) ?? 0;
}

/**
 * Starts a gRPC backend named `name` on `loopback` (127.0.0.x, a free port), standing for Pod IP
 * `10.250.<subnet>.x`, serving `services` (fully qualified, e.g. `echo.Echo`): a call's answer is
 * one message `<name>:<request message>`, grpc-status 0 in the trailers. Stop it with
 * {@link stopGrpcBackend}.
 */
export async function startGrpcBackend(
  name: string,
  loopback: string,
  subnet: number,
  services: readonly string[] = ['echo.Echo'],
): Promise<GrpcBackend> {
  const server = createServer();
  const b: GrpcBackend = {
    name,
    ip: loopback.replace(/^127\.0\.0\./, `10.250.${subnet}.`),
    port: 0,
    calls: new Map(),
    server,
  };
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    const path = headers[':path'] ?? '';
    const service = path.split('/')[1] ?? '';
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      if (!services.includes(service)) {
        // Trailers-only: the status in the one header block.
        stream.respond(
          {
            ':status': 200,
            'content-type': 'application/grpc',
            'grpc-status': '12',
            'grpc-message': `unknown service ${service}`,
          },
          { endStream: true },
        );
        return;
      }
      b.calls.set(path, callsOf(b, path) + 1);
      const [message] = grpcMessages(Buffer.concat(chunks));
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => {
        stream.sendTrailers({ 'grpc-status': '0' });
      });
      stream.end(grpcFrame(Buffer.from(`${name}:${message?.toString() ?? ''}`)));
    });
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(0, loopback, () => resolveListen());
  });
  b.port = (server.address() as AddressInfo).port;
  return b;
}

/** Closes a backend's server and its connections. */
export function stopGrpcBackend(b: GrpcBackend): Promise<void> {
  return new Promise((closed) => {
    b.server.close(() => closed());
  });
}

/** What a gRPC call got: the HTTP status, grpc-status, the answer's message, the ALPN protocol. */
export interface GrpcAnswer {
  /** 0 when the call failed before an answer (its error in `message`). */
  readonly status: number;
  readonly grpcStatus: string | undefined;
  readonly message: string;
  readonly alpn: string | undefined;
}

/**
 * One unary gRPC call `path` (`/service/method`) with `message`, over TLS to `ep` with server name
 * and :authority `host` (HTTP/2 by ALPN; the served certificate not verified: the tests check
 * certificates elsewhere). Never rejects.
 */
export function grpcCall(
  ep: { readonly host: string; readonly port: number },
  host: string,
  path: string,
  message: string,
  headers: Record<string, string> = {},
): Promise<GrpcAnswer> {
  return new Promise((resolveAnswer) => {
    const session = connect(`https://${ep.host}:${ep.port}`, {
      servername: host,
      rejectUnauthorized: false,
    });
    let status = 0;
    let grpcStatus: string | undefined;
    const chunks: Buffer[] = [];
    const finish = (error?: Error): void => {
      const alpn = session.alpnProtocol;
      session.destroy();
      resolveAnswer({
        status: error !== undefined ? 0 : status,
        grpcStatus,
        message:
          error !== undefined
            ? error.message
            : (grpcMessages(Buffer.concat(chunks))[0]?.toString() ?? Buffer.concat(chunks).toString()),
        alpn,
      });
    };
    session.on('error', finish);
    const call = session.request({
      ':method': 'POST',
      ':path': path,
      ':authority': host,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...headers,
    });
    call.setTimeout(5000, () => call.close());
    const read = (h: IncomingHttpHeaders): void => {
      if (h[':status'] !== undefined) status = Number(h[':status']);
      if (h['grpc-status'] !== undefined) grpcStatus = String(h['grpc-status']);
    };
    call.on('response', read);
    call.on('trailers', read);
    call.on('data', (c: Buffer) => chunks.push(c));
    call.on('error', finish);
    call.on('close', () => finish());
    call.end(grpcFrame(Buffer.from(message)));
  });
}
