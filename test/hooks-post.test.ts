import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { postDelivery } from '../src/hooks/post-delivery.js';
import { retryDelaySeconds } from '../src/hooks/retry-delay.js';

/** A receiver on loopback that answers as `handle` says. */
async function serve(handle: Parameters<typeof createServer>[1]): Promise<{ url: string; server: Server }> {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, server };
}

const OPTIONS = { allowPrivate: true, timeoutMs: 10_000, maxResponseBytes: 64 * 1024 };

describe('one delivery attempt', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
    server = undefined;
  });

  it('gives up on a receiver that does not answer in time', async () => {
    const receiver = await serve(() => {}); // never answers
    server = receiver.server;
    const started = Date.now();
    const result = await postDelivery(receiver.url, '{}', {}, { ...OPTIONS, timeoutMs: 300 });
    expect(result).toEqual({ error: 'no answer within 0.3 s' });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('gives up on a receiver that dribbles its answer past the time', async () => {
    const receiver = await serve((_req, res) => {
      res.writeHead(200);
      const tick = setInterval(() => res.write('x'), 50);
      res.on('close', () => clearInterval(tick));
    });
    server = receiver.server;
    const result = await postDelivery(receiver.url, '{}', {}, { ...OPTIONS, timeoutMs: 300 });
    expect(result).toEqual({ error: 'no answer within 0.3 s' });
  });

  it('reads no more than 64 KB of an endless answer, and takes its status', async () => {
    let written = 0;
    const receiver = await serve((_req, res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const pump = () => {
        while (res.write(chunk)) {
          written += chunk.length;
          if (written > 512 * 1024 * 1024) return;
        }
        res.once('drain', pump);
      };
      pump();
    });
    server = receiver.server;
    expect(await postDelivery(receiver.url, '{}', {}, OPTIONS)).toEqual({ status: 200 });
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });

  it('refuses a private address at delivery unless they are allowed, and names a closed port', async () => {
    const receiver = await serve((_req, res) => res.writeHead(204).end());
    server = receiver.server;
    const refused = await postDelivery(receiver.url, '{}', {}, { ...OPTIONS, allowPrivate: false });
    expect('error' in refused && refused.error).toMatch(/^refused: 127\.0\.0\.1 resolves to 127\.0\.0\.1, a loopback/);
    expect(await postDelivery(receiver.url, '{}', {}, OPTIONS)).toEqual({ status: 204 });
    const closed = await postDelivery('http://127.0.0.1:9/hook', '{}', {}, OPTIONS);
    expect('error' in closed && closed.error).toMatch(/^ECONNREFUSED/);
  });

  it('waits longer after each failure, doubling up to an hour, within ±25 %', () => {
    expect(retryDelaySeconds(10, 1, () => 0.5)).toBe(10);
    expect(retryDelaySeconds(10, 2, () => 0.5)).toBe(20);
    expect(retryDelaySeconds(10, 4, () => 0.5)).toBe(80);
    expect(retryDelaySeconds(10, 20, () => 0.5)).toBe(3600);
    expect(retryDelaySeconds(10, 1, () => 0)).toBe(7.5);
    expect(retryDelaySeconds(10, 1, () => 0.999999)).toBeCloseTo(12.5, 3);
  });
});
