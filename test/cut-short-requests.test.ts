import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { migrate } from '../src/db/migrate.js';
import { seedDatabase } from '../src/seed/seed-database.js';
import { startTestService, TEST_KEY, TEST_LAST_DAY, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';
import { until } from './support/poll.js';

// Answers far larger than a socket's buffers (about 11 MB of JSON, 30 MB of CSV), so a client
// that stops reading, or leaves, does so in the middle of them.
const WIDE = `/v1/metrics/etf-aum-change-pct?start_date=2016-07-01&end_date=${TEST_LAST_DAY}`;
const EXPORT =
  `/v1/export?metric=etf-aum-change-pct,transaction-fail-total,treasury-market-cap-usd,outstanding-mnav&start_date=2016-07-01&end_date=` +
  `${TEST_LAST_DAY}`;
const SMALL = '/v1/metrics/token-price-usd?project=ethereum,solana&start_date=2026-01-01&end_date=2026-03-31';

/**
 * Asks for `path` on a socket of its own; resolves with the socket, paused, and the answer's request id once its
 * first bytes come.
 */
function askAndStop(url: string, path: string): Promise<{ socket: Socket; requestId: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    socket.on('error', () => {});
    socket.once('data', (head: Buffer) => {
      socket.pause();
      const requestId = /^x-request-id: (.+)\r$/im.exec(head.toString('latin1'))?.[1];
      if (requestId === undefined) reject(new Error(`no request id in ${head.toString('latin1').slice(0, 200)}`));
      else resolve({ socket, requestId });
    });
    socket.write(`GET ${path} HTTP/1.1\r\nhost: test\r\nx-api-key: ${TEST_KEY}\r\n\r\n`);
  });
}

/** The value of one sample line of a Prometheus text. */
function sample(text: string, name: string, labels: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`requests whose answer is cut short (${kind.name})`, () => {
    let service: TestService;
    let hold: Promise<void> | undefined;
    beforeAll(async () => {
      const store = await kind.open();
      await migrate(store.store);
      await seedDatabase(store.store, CATALOG, {
        years: 10,
        lastDay: Date.parse(`${TEST_LAST_DAY}T00:00:00Z`) / 86_400_000,
      });
      service = await startTestService(
        kind,
        { METRICS: 'on', RESPONSE_CACHE_MB: '0', STALLED_CLIENT_SECONDS: '2' },
        {
          store,
          // Reads wait while `hold` is set, so a client can leave before its answer starts.
          wrapStore: (inner) => ({
            ...inner,
            queryRaw: async (...args) => {
              await hold;
              return inner.queryRaw(...args);
            },
          }),
        },
      );
    }, 180_000);
    afterAll(async () => service?.stop());

    const requestLines = (requestId: string) =>
      service.logs.filter((l) => l.msg === 'request' && l.requestId === requestId);

    it('each leave one log line with how they ended, and a count in /metrics', async () => {
      const before = await (await service.get('/metrics')).text();

      const restLeft = await askAndStop(service.url, WIDE);
      restLeft.socket.destroy();
      const exportLeft = await askAndStop(service.url, EXPORT);
      exportLeft.socket.destroy();
      const exportStalled = await askAndStop(service.url, EXPORT);
      // Left before anything was sent: its read waits for `hold`.
      let release = () => {};
      hold = new Promise((resolve) => (release = resolve));
      const early = connect(Number(new URL(service.url).port), '127.0.0.1');
      early.on('error', () => {});
      early.write(`GET ${SMALL} HTTP/1.1\r\nhost: test\r\nx-api-key: ${TEST_KEY}\r\n\r\n`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      early.destroy();
      await new Promise((resolve) => setTimeout(resolve, 200));
      hold = undefined;
      release();

      // The stalled client is given up after STALLED_CLIENT_SECONDS.
      await until('the stalled export given up', () => requestLines(exportStalled.requestId).length > 0, {
        withinMs: 10_000,
        everyMs: 50,
      });
      exportStalled.socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 100));

      const pick = ({ route, status, outcome }: Record<string, unknown>) => ({ route, status, outcome });
      expect(requestLines(restLeft.requestId).map(pick)).toEqual([
        { route: '/v1/metrics/:name', status: 200, outcome: 'aborted' },
      ]);
      expect(requestLines(exportLeft.requestId).map(pick)).toEqual([
        { route: '/v1/export', status: 200, outcome: 'aborted' },
      ]);
      expect(requestLines(exportStalled.requestId).map(pick)).toEqual([
        { route: '/v1/export', status: 200, outcome: 'given up' },
      ]);
      // Nothing was sent: 499, as nginx logs a client that closed the request.
      const unanswered = service.logs.filter((l) => l.msg === 'request' && l.status === 499);
      expect(unanswered.map(pick)).toEqual([{ route: '/v1/metrics/:name', status: 499, outcome: 'aborted' }]);
      // An answer that reached its end says nothing of how it ended.
      const scrape = await service.get('/metrics');
      const after = await scrape.text();
      const metricsLine = service.logs.find((l) => l.msg === 'request' && l.route === '/metrics');
      expect(metricsLine).toBeDefined();
      expect(metricsLine).not.toHaveProperty('outcome');

      const counted = (route: string, outcome: string) => {
        const labels = `{route="${route}",outcome="${outcome}"}`;
        return (
          sample(after, 'metrics_http_requests_cut_short_total', labels) -
          sample(before, 'metrics_http_requests_cut_short_total', labels)
        );
      };
      expect({
        restAborted: counted('/v1/metrics/:name', 'aborted'),
        exportAborted: counted('/v1/export', 'aborted'),
        exportGivenUp: counted('/v1/export', 'given up'),
      }).toEqual({ restAborted: 2, exportAborted: 1, exportGivenUp: 1 });
      const unansweredCount = '{route="/v1/metrics/:name",method="GET",status="499"}';
      expect(
        sample(after, 'metrics_http_requests_total', unansweredCount) -
          sample(before, 'metrics_http_requests_total', unansweredCount),
      ).toBe(1);
    }, 60_000);
  });
}
