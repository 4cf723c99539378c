import { createServer } from 'node:net';

/**
 * Asks the kernel for a currently free TCP port on 127.0.0.1. Another process
 * may take it before the caller binds it, so callers that start servers on it
 * retry on "address in use".
 */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('freePort: listening socket has no TCP address'));
        return;
      }
      const port = address.port;
      server.close(() => {
        resolvePort(port);
      });
    });
  });
}
