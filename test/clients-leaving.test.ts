import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { migrate } from '../src/db/migrate.js';
import { seedDatabase } from '../src/seed/seed-database.js';
import { startTestService, TEST_KEY, TEST_LAST_DAY, type TestService } from './support/service.js';
import { STORE_KINDS, type StoreUnderTest } from './support/stores.js';

const postgres = STORE_KINDS[1]!;

// Three years of all 76 projects: more points than one batch, so the answer streams
// through a cursor, several projects per round trip.
const STREAMED = `/v1/metrics/etf-aum-change-pct?start_date=2023-07-01&end_date=${TEST_LAST_DAY}`;
const SMALL = '/v1/metrics/token-price-usd?project=ethereum,solana&start_date=2026-01-01&end_date=2026-03-31';

/** Starts a streamed answer and hangs up as soon as its first bytes arrive. */
function leaveAfterFirstBytes(url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${STREAMED}`, { headers: { 'x-api-key': TEST_KEY } }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
      res.once('end', () => reject(new Error('the whole answer came before the client could leave')));
    });
    req.on('error', () => resolve());
    req.end();
  });
}

/** Asks for a streamed answer and hangs up after `ms`, before any of it could come. */
function leaveAfter(url: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const req = request(`${url}${STREAMED}`, { headers: { 'x-api-key': TEST_KEY } });
    req.on('error', () => resolve());
    req.end();
    setTimeout(() => {
      req.destroy();
      resolve();
    }, ms);
  });
}

describe.skipIf(!postgres.available)('clients that leave in the middle of a streamed answer', () => {
  let service: TestService;
  let store: StoreUnderTest;
  beforeAll(async () => {
    store = await postgres.open();
    await migrate(store.store);
    await seedDatabase(store.store, CATALOG, { years: 3, lastDay: Date.parse(`${TEST_LAST_DAY}T00:00:00Z`) / 86_400_000 });
    // No response cache: every request must reach the database.
    service = await startTestService(postgres, { RESPONSE_CACHE_MB: '0' }, { store });
  }, 120_000);
  afterAll(async () => service?.stop());

  it('cost the requests after them nothing: no statement of another request is cancelled, no connection is kept', async () => {
    const expected = await (await service.fetch(SMALL)).text();
    expect(Object.keys(JSON.parse(expected) as object)).toEqual(['ethereum', 'solana']);
    const statuses: number[] = [];
    let wrong = 0;
    for (let round = 0; round < 25; round += 1) {
      // Two leave while small requests run beside them on the same few connections (pool of 4).
      const small = Array.from({ length: 4 }, async () => {
        const res = await service.fetch(SMALL);
        statuses.push(res.status);
        if ((await res.text()) !== expected) wrong += 1;
      });
      await Promise.all([leaveAfterFirstBytes(service.url), leaveAfterFirstBytes(service.url), ...small]);
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(wrong).toBe(0);

    // Many more leave while their statements still wait for one of the 4 connections: each
    // answer then starts after its client is gone, and must not keep its connection.
    await Promise.all(Array.from({ length: 24 }, (_, i) => leaveAfter(service.url, 1 + (i % 8))));

    // Every connection came back: a full streamed answer still completes, with every project.
    const whole = await service.fetch(STREAMED, { signal: AbortSignal.timeout(20_000) });
    expect(whole.status).toBe(200);
    const body = (await whole.json()) as Record<string, { date: string }[]>;
    const stored = await store.store.query<{ projects: number; points: number }>(
      `select count(distinct p.id)::integer as projects, count(*)::integer as points from point pt join project p on p.id = pt.project_id
       join metric m on m.id = p.metric_id where m.name = 'etf-aum-change-pct' and pt.day between '2023-07-01' and $1`,
      [TEST_LAST_DAY],
    );
    expect(Object.keys(body)).toHaveLength(stored[0]!.projects);
    expect(Object.values(body).reduce((n, points) => n + points.length, 0)).toBe(stored[0]!.points);
    expect(service.logText()).not.toMatch(/canceling statement/);
  }, 120_000);
});
