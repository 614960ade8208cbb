import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { migrate } from '../src/db/migrate.js';
import { importFile } from '../src/import/import-files.js';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/** One metric of each value kind: integers with extra fields, decimals, integers without. */
const SERIES = [
  ['etf-num-products', 'blackrock,fidelity'],
  ['token-price-usd', 'ethereum,solana'],
  ['transaction-fail-total', 'base'],
] as const;

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`an export imported into a fresh store on ${kind.name}`, () => {
    let source: TestService;
    let dir: string;
    beforeAll(async () => {
      source = await startTestService(kind);
      dir = await mkdtemp(join(tmpdir(), 'metrics-export-import-'));
    });
    afterAll(async () => {
      await source?.stop();
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    });

    /** Exports SERIES with `query`, imports the file into a new store, and serves that store. */
    async function roundTrip(format: 'csv' | 'ndjson', query: string): Promise<TestService> {
      const exports = await Promise.all(
        SERIES.map(async ([metric, projects]) => {
          const res = await source.get(`/v1/export?metric=${metric}&project=${projects}&format=${format}${query}`);
          expect(res.status, await res.clone().text()).toBe(200);
          return res.text();
        }),
      );
      // One file: the CSV header once, then every metric's rows.
      const text =
        format === 'csv'
          ? exports.map((e, i) => (i === 0 ? e : e.slice(e.indexOf('\n') + 1))).join('')
          : exports.join('');
      const file = join(dir, `export-${format}-${exports.length}-${query.length}.${format}`);
      await writeFile(file, text);
      const target = await kind.open();
      await migrate(target.store);
      const result = await importFile(target.store, CATALOG, file);
      expect(result.ok, JSON.stringify(result)).toBe(true);
      const service = await startTestService(kind, {}, { store: target });
      return service;
    }

    it.each(['csv', 'ndjson'] as const)(
      'gives back every REST answer byte for byte, extra fields included, with extra=include (%s)',
      async (format) => {
        const target = await roundTrip(format, '&extra=include');
        try {
          for (const [metric, projects] of SERIES) {
            const path = `/v1/metrics/${metric}?project=${projects}`;
            const expected = await (await source.get(path)).text();
            if (metric === 'etf-num-products') expect(expected).toContain('"spot":');
            expect(await (await target.get(path)).text(), path).toBe(expected);
          }
        } finally {
          await target.stop();
        }
      },
    );

    it.each(['csv', 'ndjson'] as const)(
      'leaves extra fields out without extra=include, and keeps every value (%s)',
      async (format) => {
        const target = await roundTrip(format, '');
        try {
          const path = '/v1/metrics/etf-num-products?project=blackrock';
          const [expected, got] = (await Promise.all([source.get(path), target.get(path)]).then((rs) =>
            Promise.all(rs.map((r) => r.json())),
          )) as { blackrock: Record<string, unknown>[] }[];
          expect(got!.blackrock).toEqual(expected!.blackrock.map(({ date, value }) => ({ date, value })));
        } finally {
          await target.stop();
        }
      },
    );
  });
}
