import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pairedLoad } from './bench/paired-load.js';
import type { Target } from './bench/shapes.js';

/**
 * The bench's paired-slice client (test/bench/paired-load.ts) counts what it is given:
 * every answer it counts was served, bodies that arrive in pieces are read to their
 * length, and an answer other than 200 stops the load with the target's name.
 */
describe('paired-slice load', () => {
  const served = new Map<string, number>();
  /** The x-api-key each server was sent, per request: checked in the tests (a failed check in a handler fails none). */
  const keysSent = new Map<string, string[]>();
  const servers: Server[] = [];
  const targets: Record<string, Target> = {};

  /** A server answering `body` in three writes (so the client sees pieces), counting its answers. */
  async function serve(name: string, status: number, body: string): Promise<Target> {
    const server = createServer((req, res) => {
      served.set(name, (served.get(name) ?? 0) + 1);
      keysSent.set(name, [...(keysSent.get(name) ?? []), String(req.headers['x-api-key'])]);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      const third = Math.floor(body.length / 3);
      res.write(body.slice(0, third));
      setImmediate(() => {
        res.write(body.slice(third, 2 * third));
        res.end(body.slice(2 * third));
      });
    });
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    return {
      name: 'floor',
      url: `http://127.0.0.1:${port}/x?y=1`,
      method: 'GET',
      headers: { 'x-api-key': 'k' },
      pointsOf: () => ({}),
    };
  }

  beforeAll(async () => {
    targets.a = await serve('a', 200, JSON.stringify({ a: 'x'.repeat(200_000) }));
    targets.b = await serve('b', 200, '{"b":[1,2,3]}');
    targets.refused = await serve('refused', 503, '{"title":"unavailable"}');
  });
  afterAll(() => {
    for (const server of servers) server.closeAllConnections();
    for (const server of servers) server.close();
  });

  it('counts exactly the answers each server gave, slice by slice', async () => {
    const result = await pairedLoad(targets.a!, targets.b!, { connections: 3, pairs: 4, sliceMs: 40 });
    expect(result.pairRatios).toHaveLength(4);
    expect(result.requests).toEqual([served.get('a'), served.get('b')]);
    expect(result.requests[0]).toBeGreaterThanOrEqual(3 * 4); // every socket answered at least once per slice
    expect(result.cpu).toBeUndefined();
    for (const name of ['a', 'b']) expect(new Set(keysSent.get(name)), name).toEqual(new Set(['k']));
  });

  it('rejects an answer other than 200, naming the target', async () => {
    await expect(
      pairedLoad(targets.a!, { ...targets.refused!, name: 'rest' }, { connections: 1, pairs: 1, sliceMs: 20 }),
    ).rejects.toThrow('rest answered 503');
    expect(new Set(keysSent.get('refused'))).toEqual(new Set(['k']));
  });
});
