import { createServer } from 'node:net';

/** The loopback address every local service binds to: nothing is exposed beyond this machine. */
export const LOOPBACK = '127.0.0.1';

/**
 * Asks the kernel for a free TCP port on loopback by binding port 0 and closing again.
 * There is a small race (another process may take the port before our JVM binds it); callers
 * that start a server on it fail loudly in that case rather than talking to a stranger.
 */
export function freePort(host: string = LOOPBACK): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('could not read the bound port'));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

/** Distinct free ports: asking twice in a row could return the same one once the first closed. */
export async function freePorts(count: number, host: string = LOOPBACK): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort(host));
  return [...ports];
}
