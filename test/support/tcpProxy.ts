// A TCP proxy in front of the apiserver that a test can cut off and restore: every connection
// through it is destroyed, and new ones are refused, until restored (a network partition between
// one client and the apiserver; TLS passes through untouched).
import { connect, createServer, type Server, type Socket } from 'node:net';

/** A running {@link startTcpProxy}. */
export interface TcpProxy {
  /** `https://127.0.0.1:<port>`: the target's scheme with the proxy's address. */
  readonly url: string;
  /** Destroys every open connection and refuses new ones until {@link restore}. */
  cut(): void;
  restore(): void;
  stop(): Promise<void>;
}

/** Starts a proxy on a free loopback port forwarding to `target` (a URL with host and port). */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const to = new URL(target);
  const sockets = new Set<Socket>();
  let cut = false;
  const track = (s: Socket): void => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const server: Server = createServer((client) => {
    track(client);
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(to.port), to.hostname);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no TCP address');
  return {
    url: `${to.protocol}//127.0.0.1:${address.port}`,
    cut() {
      cut = true;
      for (const s of sockets) s.destroy();
    },
    restore() {
      cut = false;
    },
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
    },
  };
}
