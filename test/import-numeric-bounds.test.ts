import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { migrate } from '../src/db/migrate.js';
import type { Store } from '../src/db/store.js';
import { STORE_KINDS, type StoreUnderTest } from './support/stores.js';
import { runImport } from './support/run-import.js';

/**
 * A value beyond what PostgreSQL's numeric holds (131072 digits before the decimal point,
 * 16383 after) is a bad row named by its file and line, found before anything is written;
 * a value at the bound is stored exactly.
 */

const METRIC = 'token-price-usd';
const SLUG = CATALOG.byName.get(METRIC)!.projects[0]!;
const HEADER = 'metric,project,date,value';
const NOT_IMPORTED = 'not imported, 1 bad row; nothing from this file was written';

const AT_FRACTION_BOUND = `0.${'0'.repeat(16_382)}1`;
const BEYOND: { name: string; value: string; message: string }[] = [
  { name: 'one digit in 100,000', value: `0.${'0'.repeat(99_998)}1`, message: after(99_999) },
  { name: 'a fraction one digit too long', value: `-0.${'0'.repeat(16_383)}1`, message: after(16_384) },
  { name: 'trailing zeros PostgreSQL keeps as scale', value: `1.${'0'.repeat(16_384)}`, message: after(16_384) },
  { name: 'an exponent that moves the point too far', value: '1.5e-16383', message: after(16_384) },
  {
    name: 'too many digits before the point',
    value: `1${'0'.repeat(131_072)}`,
    message: 'expected "value" to have at most 131072 digits before the decimal point, found 131073',
  },
];

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`values at the numeric type's bounds on ${kind.name}`, { timeout: 120_000 }, () => {
    let subject: StoreUnderTest;
    let store: Store;
    let dir: string;

    beforeAll(async () => {
      subject = await kind.open();
      store = subject.store;
      await migrate(store);
      dir = await mkdtemp(join(tmpdir(), 'metrics-numeric-'));
    });
    afterAll(async () => {
      await subject?.dispose();
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    });

    it.each(BEYOND)('names the line of a value beyond the bound in CSV: $name', async ({ value, message }) => {
      const file = join(dir, 'beyond.csv');
      await writeFile(file, `${HEADER}\n${METRIC},${SLUG},2024-01-01,1\n\n${METRIC},${SLUG},2024-01-02,${value}\n`);
      expect(await runImport(store, file)).toEqual({
        code: 1,
        out: '',
        err: `${file}:4: ${message}\n${file}: ${NOT_IMPORTED}\n`,
      });
      expect(await storedValues(store)).toEqual([]);
    });

    it('names the line of a JSON number beyond the bound in NDJSON', async () => {
      const file = join(dir, 'beyond.ndjson');
      const line = (date: string, value: string) =>
        `{"metric":"${METRIC}","project":"${SLUG}","date":"${date}","value":${value}}`;
      await writeFile(file, `${line('2024-01-01', '1')}\n${line('2024-01-02', BEYOND[0]!.value)}\n`);
      expect(await runImport(store, file)).toEqual({
        code: 1,
        out: '',
        err: `${file}:2: ${BEYOND[0]!.message}\n${file}: ${NOT_IMPORTED}\n`,
      });
    });

    it('stores a value at the bound exactly, and leading zeros do not count', async () => {
      const file = join(dir, 'at-bound.csv');
      const values = [AT_FRACTION_BOUND, `-${AT_FRACTION_BOUND}`, `${'0'.repeat(200_000)}7.5`, '1.5e-1000'];
      const rows = values.map((v, i) => `${METRIC},${SLUG},2024-02-0${i + 1},${v}`);
      await writeFile(file, `${HEADER}\n${rows.join('\n')}\n`);
      const said = await runImport(store, file);
      expect(said.err).toBe('');
      expect(said.code).toBe(0);
      const stored = [AT_FRACTION_BOUND, `-${AT_FRACTION_BOUND}`, '7.5', `0.${'0'.repeat(999)}15`];
      expect(await storedValues(store)).toEqual(stored);
    });
  });
}

// Private

function after(found: number): string {
  return `expected "value" to have at most 16383 digits after the decimal point, found ${found}`;
}

async function storedValues(store: Store): Promise<string[]> {
  const rows = await store.query<{ value: string }>(
    `select p.value::text as value
     from point p join project pr on pr.id = p.project_id join metric m on m.id = pr.metric_id
     where m.name = $1 and pr.slug = $2 order by p.day`,
    [METRIC, SLUG],
  );
  return rows.map((r) => r.value);
}
