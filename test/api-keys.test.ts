import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createKeyVerifier, generateApiKey, hashApiKey, KEY_CACHE_MS } from '../src/auth/api-keys.js';
import { insertApiKey, revokeApiKey } from '../src/db/api-key-queries.js';
import { migrate } from '../src/db/migrate.js';
import type { Queryable, Store } from '../src/db/store.js';
import { STORE_KINDS, type StoreUnderTest } from './support/stores.js';

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(kind.name, () => {
    let subject: StoreUnderTest;
    let store: Store;
    let serial = 0;
    /** Stores a fresh key under a fresh name and returns both. */
    const storedKey = async (key = generateApiKey()): Promise<{ name: string; key: string }> => {
      const name = `key-${(serial += 1)}`;
      await insertApiKey(store, name, hashApiKey(key));
      return { name, key };
    };

    beforeAll(async () => {
      subject = await kind.open();
      store = subject.store;
      await migrate(store);
    });

    afterAll(async () => {
      await subject?.dispose();
    });

    afterEach(() => {
      vi.restoreAllMocks();
    });

    it('accepts every key listed in the environment without asking the database, each with its own id', async () => {
      const [db, calls] = countingQueryable(store);
      const verifier = createKeyVerifier(db, ['env-key-one', 'env-key-two']);

      const one = await verifier.verify('env-key-one');
      const two = await verifier.verify('env-key-two');
      expect(one).toEqual({ id: expect.stringMatching(/^env:[0-9a-f]{12}$/), name: 'API_KEYS[0]' });
      expect(two).toEqual({ id: expect.stringMatching(/^env:[0-9a-f]{12}$/), name: 'API_KEYS[1]' });
      expect(one!.id).not.toBe(two!.id);
      expect(verifier.verify('env-key-one')).toEqual(one);
      expect(JSON.stringify([one, two])).not.toMatch(/env-key/);
      expect(calls).toEqual([]);
    });

    it('rejects a missing, empty or unknown key', async () => {
      const verifier = createKeyVerifier(store, ['env-key-one']);

      expect(await verifier.verify(undefined)).toBeUndefined();
      expect(await verifier.verify('')).toBeUndefined();
      expect(await verifier.verify(generateApiKey())).toBeUndefined();
      expect(await verifier.verify('env-key-one ')).toBeUndefined();
      expect(await verifier.verify('ENV-KEY-ONE')).toBeUndefined();
    });

    it(
      'accepts a stored key as its row, by name and without limits of its own, ' +
        'and answers a repeat from its cache',
      async () => {
        const { name, key } = await storedKey();
        const [db, calls] = countingQueryable(store);
        const verifier = createKeyVerifier(db, []);

        const identity = await verifier.verify(key);
        expect(identity).toEqual({ id: `db:${createHash('sha256').update(key).digest('hex').slice(0, 12)}`, name });
        // The repeat is answered at once, not through a promise.
        expect(verifier.verify(key)).toEqual(identity);
        expect(calls).toHaveLength(1);
      },
    );

    it('gives a stored key its own rate limit along with its identity', async () => {
      const key = generateApiKey();
      await insertApiKey(store, 'limited', hashApiKey(key), { ratePerMinute: 60, burst: 5 });

      expect(await createKeyVerifier(store, []).verify(key)).toEqual({
        id: `db:${createHash('sha256').update(key).digest('hex').slice(0, 12)}`,
        name: 'limited',
        ratePerMinute: 60,
        burst: 5,
      });
    });

    it('rejects a revoked key at once for a fresh verifier', async () => {
      const { name, key } = await storedKey();
      expect(await revokeApiKey(store, name)).toBe(true);

      expect(await createKeyVerifier(store, []).verify(key)).toBeUndefined();
    });

    it('a verifier that cached a key as valid rejects it once KEY_CACHE_MS has passed after revocation', async () => {
      const { name, key } = await storedKey();
      const verifier = createKeyVerifier(store, []);
      expect(await verifier.verify(key)).toBeDefined();

      await revokeApiKey(store, name);
      expect(await verifier.verify(key)).toBeDefined();
      const now = Date.now();
      vi.spyOn(Date, 'now').mockReturnValue(now + KEY_CACHE_MS + 1);

      expect(await verifier.verify(key)).toBeUndefined();
    });

    it('a verifier told to forget rejects a revoked key it had cached at once', async () => {
      const { name, key } = await storedKey();
      const verifier = createKeyVerifier(store, []);
      expect(await verifier.verify(key)).toBeDefined();

      await revokeApiKey(store, name);
      verifier.forget();

      expect(await verifier.verify(key)).toBeUndefined();
    });

    it('rejects keys longer than 256 characters without a database lookup, even when stored', async () => {
      const { key: longest } = await storedKey('k'.repeat(256));
      const { key: tooLong } = await storedKey('k'.repeat(257));
      const [db, calls] = countingQueryable(store);
      const verifier = createKeyVerifier(db, []);

      expect(await verifier.verify(tooLong)).toBeUndefined();
      expect(await verifier.verify('x'.repeat(100_000))).toBeUndefined();
      expect(calls).toEqual([]);
      expect(await verifier.verify(longest)).toBeDefined();
      expect(calls).toHaveLength(1);
    });

    it('keeps a valid key cached through a flood of more made-up keys than the cache holds', async () => {
      const { key } = await storedKey();
      const [db, calls] = countingQueryable(store);
      const verifier = createKeyVerifier(db, []);
      // Time stands still, so only the flood (not KEY_CACHE_MS) can drop the valid key.
      vi.spyOn(Date, 'now').mockReturnValue(Date.now());
      expect(await verifier.verify(key)).toBeDefined();

      for (let i = 0; i < 10_001; i += 1_000) {
        const made = Array.from({ length: 1_000 }, () => generateApiKey());
        expect(await Promise.all(made.map((k) => verifier.verify(k)))).toEqual(made.map(() => undefined));
      }
      const lookups = calls.length;

      expect(verifier.verify(key)).toEqual(expect.objectContaining({ name: expect.any(String) }));
      expect(calls).toHaveLength(lookups);
    });

    it('the database holds the SHA-256 digest of a key and never the key itself', async () => {
      const { name, key } = await storedKey();
      const sha256 = createHash('sha256').update(key, 'utf8').digest();

      const [row] = await store.query<{ key_hash: Uint8Array }>('select key_hash from api_key where name = $1', [name]);
      expect(Buffer.from(row!.key_hash).equals(sha256)).toBe(true);

      const [text] = await store.query<{ row: string }>('select a::text as row from api_key a where name = $1', [name]);
      expect(text!.row).toContain(name);
      expect(text!.row).not.toContain(key);
      expect(text!.row).not.toContain(Buffer.from(key, 'utf8').toString('hex'));
    });
  });
}

/** A Queryable over `db` that records the SQL of every statement sent: `[queryable, calls]`. */
function countingQueryable(db: Queryable): [Queryable, string[]] {
  const calls: string[] = [];
  return [
    {
      query: (text, params) => {
        calls.push(text);
        return db.query(text, params);
      },
      copyCsv: (table, columns, csv) => db.copyCsv(table, columns, csv),
      exec: (script) => {
        calls.push(script);
        return db.exec(script);
      },
    },
    calls,
  ];
}
