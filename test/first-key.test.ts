import { afterEach, describe, expect, it, vi } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { prepareDatabase } from '../src/start/prepare-database.js';
import { STORE_KINDS } from './support/stores.js';
import { Writable } from 'node:stream';

/** What preparing a new database of `kind` writes on standard error, for a configuration given as environment variables. */
async function firstStartText(kind: (typeof STORE_KINDS)[number], env: Record<string, string>): Promise<string> {
  const { store, dispose } = await kind.open();
  let text = '';
  const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    text += String(chunk);
    return true;
  });
  try {
    const logger = createLogger({ logLevel: 'silent' }, new Writable({ write: (_c, _e, done) => done() }));
    await prepareDatabase(store, CATALOG, loadConfig({ SEED_YEARS: '1', ...env }), logger);
  } finally {
    write.mockRestore();
    await dispose();
  }
  return text;
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`the first start on ${kind.name} without any key`, { timeout: 60_000 }, () => {
    afterEach(() => vi.restoreAllMocks());

    it(kind.name === 'pglite' ? 'creates the local key and prints it once' : 'says how to make a key, since none exists and none is made', async () => {
      const text = await firstStartText(kind, {});
      if (kind.name === 'pglite') expect(text).toMatch(/Created API key "local" \(shown once, keep it\): mk_/);
      else expect(text).toContain('npm run keys -- create --name');
    });

    it('says nothing about keys when API_KEYS lists some', async () => {
      const text = await firstStartText(kind, { API_KEYS: 'k-0123456789abcdef' });
      expect(text).not.toMatch(/API key|keys -- create/);
    });
  });
}
