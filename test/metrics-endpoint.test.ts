import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../src/auth/api-keys.js';
import { insertApiKey } from '../src/db/api-key-queries.js';
import { createServiceMetrics } from '../src/ops/prometheus.js';
import { npmStart, type StartedServer } from './support/processes.js';
import { startTestService, TEST_KEY, type TestService } from './support/service.js';
import { createScratchDatabase, STORE_KINDS, TEST_DATABASE_URL, type ScratchDatabase } from './support/stores.js';

/** `GET /metrics`: off by default, keyed with METRICS=on, open with public; its figures follow the traffic. */

const pglite = STORE_KINDS[0]!;
const PATH = '/v1/metrics/price?project=ethereum&start_date=2026-06-01';

/** The value of one sample line, e.g. `metrics_http_requests_total{route="/docs",method="GET",status="200"}`. */
function sample(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

describe('GET /metrics', { timeout: 60_000 }, () => {
  let on: TestService;
  let off: TestService;
  let open: TestService;

  beforeAll(async () => {
    [on, off, open] = await Promise.all([
      startTestService(pglite, { METRICS: 'on' }),
      startTestService(pglite),
      startTestService(pglite, { METRICS: 'public' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([on, off, open].map((s) => s?.stop()));
  });

  it('is a 404 by default, needs a key with METRICS=on, and none with public', async () => {
    expect((await off.get('/metrics')).status).toBe(404);
    const anonymous = await on.get('/metrics', { key: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const res = await on.get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(await res.text()).toContain('# TYPE metrics_http_requests_total counter');
    expect((await open.get('/metrics', { key: null })).status).toBe(200);
  });

  it('is described on /docs as it is configured', async () => {
    expect(await (await off.get('/docs', { key: null })).text()).not.toContain('GET /metrics');
    expect(await (await on.get('/docs', { key: null })).text()).toContain(
      "<code>GET /metrics</code> gives the service's figures in Prometheus text format to a key holder",
    );
    expect(await (await open.get('/docs', { key: null })).text()).toContain('Prometheus text format without a key');
  });

  it('counts requests by route and status, refusals, and cache hits', async () => {
    const before = await (await on.get('/metrics')).text();
    for (let i = 0; i < 3; i++) await (await on.get(PATH)).arrayBuffer();
    await (await on.get('/v1/metrics/price?project=nowhere')).arrayBuffer();
    const key = generateApiKey();
    await insertApiKey(on.running.services.store, 'metrics-limited', hashApiKey(key), { ratePerMinute: 1, burst: 1 });
    for (let i = 0; i < 3; i++) await (await on.get(PATH, { key })).arrayBuffer();
    const after = await (await on.get('/metrics')).text();
    const ok = '{route="/v1/metrics/:name",method="GET",status="200"}';
    expect(sample(after, 'metrics_http_requests_total', ok) - sample(before, 'metrics_http_requests_total', ok)).toBe(
      4,
    );
    expect(sample(after, 'metrics_http_requests_total', '{route="/v1/metrics/:name",method="GET",status="400"}')).toBe(
      1,
    );
    expect(
      sample(after, 'metrics_rate_limit_rejections_total') - sample(before, 'metrics_rate_limit_rejections_total'),
    ).toBe(2);
    // The first answer was read, the next three (one with the other key) came from the cache.
    expect(after).toContain('# TYPE metrics_response_cache_hits_total counter');
    expect(
      sample(after, 'metrics_response_cache_hits_total') - sample(before, 'metrics_response_cache_hits_total'),
    ).toBe(3);
    expect(sample(after, 'metrics_http_requests_in_flight')).toBe(1); // the scrape itself
    expect(
      sample(after, 'metrics_http_request_duration_seconds_count', '{route="/v1/metrics/:name"}'),
    ).toBeGreaterThanOrEqual(7);
    expect(after).not.toContain('metrics_rate_limits_shared '); // no Redis configured
    expect(after).not.toContain('metrics_replica_in_use'); // no replicas configured
  });

  it('reports each replica as in use or not, and its lag while it can be asked', async () => {
    const services = on.running.services;
    const metrics = createServiceMetrics({
      responseCache: services.responseCache,
      seriesUpdates: services.seriesUpdates,
      inFlight: () => 0,
      replicas: () => [
        { replica: 'standby-1:5432/metrics', inUse: true, lagSeconds: 0.4 },
        { replica: 'standby-2:5432/metrics', inUse: false, lagSeconds: null, reason: 'check failed' },
      ],
    });
    const { body } = await metrics.render();
    expect(sample(body, 'metrics_replica_in_use', '{replica="standby-1:5432/metrics"}')).toBe(1);
    expect(body).toContain('metrics_replica_in_use{replica="standby-2:5432/metrics"} 0');
    expect(sample(body, 'metrics_replica_lag_seconds', '{replica="standby-1:5432/metrics"}')).toBe(0.4);
    expect(body).not.toContain('metrics_replica_lag_seconds{replica="standby-2');
  });
});

describe.skipIf(!STORE_KINDS[1]!.available)('GET /metrics with WORKERS=2 under npm start', { timeout: 120_000 }, () => {
  let database: ScratchDatabase;
  let server: StartedServer;

  beforeAll(async () => {
    database = await createScratchDatabase(TEST_DATABASE_URL!);
    server = await npmStart(
      { DATABASE_URL: database.url, WORKERS: '2', METRICS: 'public', API_KEYS: TEST_KEY, LOG_LEVEL: 'warn' },
      90_000,
    );
  }, 120_000);
  afterAll(async () => {
    await server?.stop('SIGTERM');
    await database?.drop();
  });

  it("counts every worker's requests in each scrape, whichever worker answers it", async () => {
    // Each on a connection of its own, which the primary hands to the workers in turn.
    for (let i = 0; i < 10; i++)
      expect((await getOnNewConnection(`${server.url}/v1/metrics`, TEST_KEY)).status).toBe(200);
    const ok = '{route="/v1/metrics",method="GET",status="200"}';
    for (let i = 0; i < 4; i++) {
      const scrape = await getOnNewConnection(`${server.url}/metrics`);
      expect(scrape.status).toBe(200);
      expect(scrape.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(sample(scrape.body, 'metrics_http_requests_total', ok)).toBe(10);
      expect(sample(scrape.body, 'metrics_http_request_duration_seconds_count', '{route="/v1/metrics"}')).toBe(10);
      expect(sample(scrape.body, 'metrics_http_requests_in_flight')).toBe(1); // the scrape itself, in one worker
      expect(sample(scrape.body, 'metrics_http_requests_total', '{route="/metrics",method="GET",status="200"}')).toBe(
        i,
      );
    }
  });
});

/** GET `url` on a fresh connection (closed after the answer). */
function getOnNewConnection(
  url: string,
  key?: string,
): Promise<{ status: number; contentType: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { connection: 'close', ...(key === undefined ? {} : { 'x-api-key': key }) };
    const req = request(url, { agent: false, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.once('end', () => resolve({ status: res.statusCode!, contentType: res.headers['content-type'], body }));
    });
    req.setTimeout(5_000, () => req.destroy(new Error(`no answer from ${url} within 5 s`)));
    req.once('error', reject);
    req.end();
  });
}
