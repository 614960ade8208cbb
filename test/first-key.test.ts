import { afterEach, describe, expect, it, vi } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { prepareDatabase } from '../src/start/prepare-database.js';
import { npmStart } from './support/processes.js';
import { createScratchDatabase, STORE_KINDS, TEST_DATABASE_URL } from './support/stores.js';
import { Writable } from 'node:stream';

const HINT = 'No API key exists yet: make one with  npm run keys -- create --name NAME  (it prints the key once).';

/**
 * What preparing a new database of `kind` writes on standard error, and whether it is left keyless, for a
 * configuration given as environment variables.
 */
async function firstStart(
  kind: (typeof STORE_KINDS)[number],
  env: Record<string, string>,
): Promise<{ text: string; keyless: boolean }> {
  const { store, dispose } = await kind.open();
  let text = '';
  let keyless: boolean;
  const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    text += String(chunk);
    return true;
  });
  try {
    const logger = createLogger({ logLevel: 'silent' }, new Writable({ write: (_c, _e, done) => done() }));
    ({ keyless } = await prepareDatabase(store, CATALOG, loadConfig({ SEED_YEARS: '1', ...env }), logger));
  } finally {
    write.mockRestore();
    await dispose();
  }
  return { text, keyless };
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`the first start on ${kind.name} without any key`, { timeout: 60_000 }, () => {
    afterEach(() => vi.restoreAllMocks());

    it(
      kind.name === 'pglite'
        ? 'creates the local key and prints it once'
        : 'makes no key and leaves the welcome to say how to make one',
      async () => {
        const { text, keyless } = await firstStart(kind, {});
        if (kind.name === 'pglite') {
          expect(text).toMatch(/Created API key "local" \(shown once, keep it\): mk_/);
          expect(keyless).toBe(false);
        } else {
          expect(text).toBe('');
          expect(keyless).toBe(true);
        }
      },
    );

    it('says nothing about keys when API_KEYS lists some', async () => {
      const { text, keyless } = await firstStart(kind, { API_KEYS: 'k-0123456789abcdef' });
      expect(text).not.toMatch(/API key|keys -- create/);
      expect(keyless).toBe(false);
    });
  });
}

describe.skipIf(!STORE_KINDS[1]!.available)(
  'npm start with WORKERS=2 on a PostgreSQL server without any key',
  { timeout: 120_000 },
  () => {
    it('says how to make a key once, in the welcome, not once per worker', async () => {
      const database = await createScratchDatabase(TEST_DATABASE_URL!);
      try {
        const server = await npmStart({ DATABASE_URL: database.url, WORKERS: '2', LOG_LEVEL: 'warn' }, 90_000);
        await server.stop('SIGTERM');
        const text = server.stderr();
        expect(text.split(HINT).length - 1, text).toBe(1);
        expect(text.indexOf(HINT)).toBeGreaterThan(text.indexOf('Metrics service ready at'));
        expect(text).toContain(', 2 workers)');
      } finally {
        await database.drop();
      }
    }, 120_000);
  },
);
