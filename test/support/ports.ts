import { createServer } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that is free now: one the system picks, or, given `range`, one
 * within it (inclusive), tried from a random place in it so parallel suites pick apart.
 */
export async function freePort(range?: readonly [number, number]): Promise<number> {
  if (range === undefined) return listenOnce(0);
  const [low, high] = range;
  const size = high - low + 1;
  const start = Math.floor(Math.random() * size);
  for (let i = 0; i < size; i += 1) {
    const port = await listenOnce(low + ((start + i) % size)).catch(() => undefined);
    if (port !== undefined) return port;
  }
  throw new Error(`no free port in ${low}-${high}`);
}

// Private

/** Listens on `port` (0: any) and closes again, resolving with the port listened on. */
function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(bound));
    });
  });
}
