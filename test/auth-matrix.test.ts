import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey, KEY_CACHE_MS } from '../src/auth/api-keys.js';
import { insertApiKey, revokeApiKey } from '../src/db/api-key-queries.js';
import { startTestService, TEST_KEY, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

const REST_PATH = '/v1/metrics/price?project=ethereum&start_date=2026-06-01';
const GRAPHQL_QUERY =
  '{ metric(name: price, projects: [ethereum], from: "2026-06-01") { series { points { date value } } } }';

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`who may read data, on ${kind.name}`, () => {
    let svc: TestService;
    const stored = generateApiKey();
    const revoked = generateApiKey();

    beforeAll(async () => {
      svc = await startTestService(kind);
      const store = svc.running.services.store;
      await insertApiKey(store, 'reader', hashApiKey(stored));
      await insertApiKey(store, 'former', hashApiKey(revoked));
      // Let the key be seen (and cached) as valid first, so the revocation test covers the cache.
      expect((await svc.get(REST_PATH, { key: revoked })).status).toBe(200);
      await revokeApiKey(store, 'former');
      await sleep(KEY_CACHE_MS + 200);
    }, 60_000);
    afterAll(async () => svc?.stop());

    const rest = (key: string | null, init: RequestInit = {}) => svc.get(REST_PATH, { key, ...init });
    const graphql = (key: string | null, init: { query?: string; cookie?: string } = {}) =>
      fetch(`${svc.url}/graphql${init.query ?? ''}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(key === null ? {} : { 'x-api-key': key }),
          ...(init.cookie === undefined ? {} : { cookie: init.cookie }),
        },
        body: JSON.stringify({ query: GRAPHQL_QUERY }),
      });

    it('lets a configured key and a stored key read over REST and GraphQL', async () => {
      for (const key of [TEST_KEY, stored]) {
        expect((await rest(key)).status).toBe(200);
        const res = await graphql(key);
        expect(res.status).toBe(200);
        expect(((await res.json()) as { data: unknown }).data).not.toBeNull();
      }
    });

    const refused: [string, () => string | null, { query?: string; cookie?: string }][] = [
      ['a missing key', () => null, {}],
      ['an empty key', () => '', {}],
      ['a wrong key', () => 'mk_not-a-real-key', {}],
      ['a revoked key', () => revoked, {}],
      ['a key in the query string only', () => null, { query: `?x-api-key=${TEST_KEY}&api_key=${TEST_KEY}` }],
      ['a key in a cookie only', () => null, { cookie: `x-api-key=${TEST_KEY}; api_key=${TEST_KEY}` }],
    ];

    it.each(refused)('refuses %s with 401 on REST and GraphQL, showing no data', async (_label, key, where) => {
      const restRes = await svc.get(`${REST_PATH}${where.query ? `&${where.query.slice(1)}` : ''}`, {
        key: key(),
        headers: where.cookie === undefined ? {} : { cookie: where.cookie },
      });
      expect(restRes.status).toBe(401);
      expect(restRes.headers.get('www-authenticate')).toBe('ApiKey header="x-api-key"');
      expect(await restRes.text()).not.toContain('"date"');

      const gqlRes = await graphql(key(), where);
      expect(gqlRes.status).toBe(401);
      expect(gqlRes.headers.get('www-authenticate')).toBe('ApiKey header="x-api-key"');
      const body = await gqlRes.text();
      expect(body).not.toContain('"date"');
      expect(body).not.toMatch(/did you mean/i);
    });

    it('never writes any of the keys into the logs', () => {
      const logs = svc.logText();
      expect(logs.length).toBeGreaterThan(0);
      for (const key of [TEST_KEY, stored, revoked]) expect(logs).not.toContain(key);
    });
  });
}
