import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../src/api/api-error.js';
import { hashApiKey } from '../src/auth/api-keys.js';
import { loadConfig } from '../src/config.js';
import { insertApiKey } from '../src/db/api-key-queries.js';
import type { Store } from '../src/db/store.js';
import { createMemoryRateLimitStore } from '../src/limits/memory-bucket-store.js';
import { createRefusedKeyLimit } from '../src/limits/refused-keys.js';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

describe('the limit on refused keys', () => {
  it('defaults to 60 a minute, takes 0 as no limit, and names a bad value', () => {
    expect(loadConfig({}).refusedKeysPerMinute).toBe(60);
    expect(loadConfig({ REFUSED_KEYS_PER_MINUTE: '0' }).refusedKeysPerMinute).toBe(0);
    expect(() => loadConfig({ REFUSED_KEYS_PER_MINUTE: '-1' })).toThrow(/REFUSED_KEYS_PER_MINUTE/);
  });

  it(
    'lets an address present perMinute refused keys, then refuses it until ' +
      'a unit has refilled, and keeps addresses apart',
    () => {
      let now = 1_000_000;
      const limit = createRefusedKeyLimit(3, createMemoryRateLimitStore(), () => now);
      for (let i = 0; i < 3; i += 1) {
        limit.check('10.0.0.1');
        limit.refused('10.0.0.1');
      }
      // The bucket is empty but nothing said so yet: the fourth refusal is the one over it.
      limit.check('10.0.0.1');
      limit.refused('10.0.0.1');
      const refusal = catchError(() => limit.check('10.0.0.1'));
      expect(refusal).toBeInstanceOf(ApiError);
      expect(refusal).toMatchObject({ kind: 'rate-limited', headers: { 'retry-after': '20' } });
      expect((refusal as Error).message).toBe(
        'too many refused keys from this address (at most 3 a minute); keys not ' +
          'seen accepted before are not looked up for 20 s',
      );
      expect(catchError(() => limit.check('10.0.0.2'))).toBeUndefined();
      now += 19_000;
      expect(catchError(() => limit.check('10.0.0.1'))).toMatchObject({ headers: { 'retry-after': '1' } });
      now += 1_000;
      expect(catchError(() => limit.check('10.0.0.1'))).toBeUndefined();
    },
  );

  it('is no limit at 0 a minute', () => {
    const limit = createRefusedKeyLimit(0, createMemoryRateLimitStore(), () => 0);
    for (let i = 0; i < 100; i += 1) limit.refused('10.0.0.1');
    expect(catchError(() => limit.check('10.0.0.1'))).toBeUndefined();
  });
});

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`refused keys over HTTP on ${kind.name}`, () => {
    const PATH = '/v1/metrics/token-price-usd?project=ethereum&start_date=2026-06-01&end_date=2026-06-30';
    const CONFIGURED = 'rk-configured-0123456789abcdef';
    let service: TestService;
    let lookups = 0;

    beforeAll(async () => {
      const counted = (store: Store): Store => ({
        ...store,
        query: (text, params, signal) => {
          if (text.includes('from api_key')) lookups += 1;
          return store.query(text, params, signal);
        },
      });
      service = await startTestService(
        kind,
        { API_KEYS: CONFIGURED, REFUSED_KEYS_PER_MINUTE: '3' },
        { wrapStore: counted },
      );
    });

    afterAll(async () => {
      await service?.stop();
    });

    const stored = async (name: string) => {
      const key = `${name}-0123456789abcdef`;
      await insertApiKey(service.running.services.store, name, hashApiKey(key), {});
      return key;
    };

    it(
      'looks up made-up keys until the address is over its limit, then answers ' +
        'a 429 problem without a lookup; keys seen accepted and configured ones ' +
        'still pass',
      async () => {
        const used = await stored('rk-used');
        const unused = await stored('rk-unused');
        expect((await service.get(PATH, { key: used })).status).toBe(200);
        // Not counted: a missing header, and an empty one.
        for (const key of [null, '', null, '', null]) expect((await service.get(PATH, { key })).status).toBe(401);

        const before = lookups;
        for (let i = 0; i < 4; i += 1) {
          const res = await service.get(PATH, { key: `made-up-${i}-0123456789abcdef` });
          expect(res.status).toBe(401);
          expect(res.headers.get('content-type')).toBe('application/problem+json');
        }
        expect(lookups - before).toBe(4);

        const refused = await service.get(PATH, { key: 'made-up-4-0123456789abcdef' });
        expect(refused.status).toBe(429);
        expect(refused.headers.get('content-type')).toBe('application/problem+json');
        expect(refused.headers.get('retry-after')).toBe('20');
        const problem = (await refused.json()) as { status: number; detail: string };
        expect(problem).toMatchObject({
          status: 429,
          detail: expect.stringContaining('too many refused keys from this address'),
        });
        // A stored key never seen accepted would need a lookup too: refused the same way.
        expect((await service.get(PATH, { key: unused })).status).toBe(429);
        expect(lookups - before).toBe(4);

        // GraphQL answers with its own error shape and code.
        const graphql = await service.get('/graphql', {
          key: 'made-up-5-0123456789abcdef',
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
          body: JSON.stringify({ query: '{ __typename }' }),
        });
        expect(graphql.status).toBe(429);
        expect(
          ((await graphql.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code,
        ).toBe('RATE_LIMITED');

        // Keys that need no lookup pass as before.
        const passing = await service.get(PATH, { key: used });
        expect(passing.status).toBe(200);
        expect(Object.keys((await passing.json()) as object)).toEqual(['ethereum']);
        expect((await service.get(PATH, { key: CONFIGURED })).status).toBe(200);
        expect(lookups - before).toBe(4);
      },
    );

    it('says so in /docs, with the configured number', async () => {
      const docs = await (await service.get('/docs', { key: null })).text();
      expect(docs).toContain('A client address that presents more than 3 refused keys a minute gets 429');
    });
  });
}

function catchError(run: () => void): unknown {
  try {
    run();
    return undefined;
  } catch (error) {
    return error;
  }
}
