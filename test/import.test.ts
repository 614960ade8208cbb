import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { fromEpochDay, toEpochDay } from '../src/dates.js';
import { migrate } from '../src/db/migrate.js';
import type { Queryable, Store } from '../src/db/store.js';
import { importCommand } from '../src/commands/import.js';
import { loadConfig } from '../src/config.js';
import { importFile, importFiles, type ImportResult } from '../src/import/import-files.js';
import { mirrorSeries, type SeriesOutcome } from '../src/sync/mirror-series.js';
import { until } from './support/poll.js';
import { projectId } from './support/project-id.js';
import { STORE_KINDS, type StoreUnderTest } from './support/stores.js';

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(kind.name, () => {
    let subject: StoreUnderTest;
    let store: Store;
    let dir: string;
    const file = async (name: string, lines: readonly string[]): Promise<string> => {
      const path = join(dir, name);
      await writeFile(path, `${lines.join('\n')}\n`);
      return path;
    };

    beforeAll(async () => {
      subject = await kind.open();
      store = subject.store;
      await migrate(store);
      dir = await mkdtemp(join(tmpdir(), 'metrics-import-'));
    });

    afterAll(async () => {
      await subject?.dispose();
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    });

    it('imports a good CSV and a good NDJSON file and the rows are in the point table', async () => {
      const csv = await file('good.csv', [
        'metric,project,date,value,extra_json',
        `etf-num-products,blackrock,2024-01-01,12,"{""spot"":10,""futures"":2}"`,
        `token-price-usd,${slug('token-price-usd')},2024-01-01,12345678901234567.25,`,
        'treasury-market-cap-usd,MSTR,2024-01-01,-1.5e3',
      ]);
      const ndjson = await file('good.ndjson', [
        '{"metric":"etf-num-products","project":"fidelity","date":"2024-01-01","value":7,"extra":{"spot":7}}',
        '',
        `{"metric":"token-price-usd","project":"${slug('token-price-usd')}","date":"2024-01-02","value":"0.000001"}`,
      ]);

      const results = await importFiles(store, CATALOG, [csv, ndjson]);

      expect(results.map(summary)).toEqual([
        { file: csv, ok: true, rows: 3 },
        { file: ndjson, ok: true, rows: 2 },
      ]);
      expect(await stored(store, 'etf-num-products', 'blackrock')).toEqual([
        { day: '2024-01-01', value: '12', extra: { spot: 10, futures: 2 } },
      ]);
      expect(await stored(store, 'etf-num-products', 'fidelity')).toEqual([
        { day: '2024-01-01', value: '7', extra: { spot: 7 } },
      ]);
      expect(await stored(store, 'token-price-usd', slug('token-price-usd'))).toEqual([
        { day: '2024-01-01', value: '12345678901234567.25', extra: null },
        { day: '2024-01-02', value: '0.000001', extra: null },
      ]);
      expect(await stored(store, 'treasury-market-cap-usd', 'MSTR')).toEqual([
        { day: '2024-01-01', value: '-1500', extra: null },
      ]);
    });

    it('re-importing the same file leaves the same rows and values', async () => {
      const csv = await file('again.csv', [
        'metric,project,date,value',
        'volume-usd,' + slug('volume-usd') + ',2024-03-01,100',
        'volume-usd,' + slug('volume-usd') + ',2024-03-02,200',
      ]);
      await importFile(store, CATALOG, csv);
      const before = { count: await countPoints(store), rows: await stored(store, 'volume-usd', slug('volume-usd')) };

      expect(summary(await importFile(store, CATALOG, csv))).toEqual({ file: csv, ok: true, rows: 2 });

      expect({ count: await countPoints(store), rows: await stored(store, 'volume-usd', slug('volume-usd')) }).toEqual(
        before,
      );
    });

    it('a later file with a new value for the same day replaces the stored value', async () => {
      const project = slug('staking-apy');
      await importFile(
        store,
        CATALOG,
        await file('first.csv', ['metric,project,date,value', `staking-apy,${project},2024-04-01,3.5`]),
      );
      await importFile(
        store,
        CATALOG,
        await file('second.ndjson', [
          `{"metric":"staking-apy","project":"${project}","date":"2024-04-01","value":4.25}`,
        ]),
      );

      expect(await stored(store, 'staking-apy', project)).toEqual([{ day: '2024-04-01', value: '4.25', extra: null }]);
    });

    it('a duplicate day inside one file keeps the last value', async () => {
      const project = slug('staking-liquid-rate');
      const csv = await file('dup.csv', [
        'metric,project,date,value',
        `staking-liquid-rate,${project},2024-05-01,1.01`,
        `staking-liquid-rate,${project},2024-05-02,1.02`,
        `staking-liquid-rate,${project},2024-05-01,1.03`,
      ]);

      expect(summary(await importFile(store, CATALOG, csv))).toEqual({ file: csv, ok: true, rows: 3 });

      expect(await stored(store, 'staking-liquid-rate', project)).toEqual([
        { day: '2024-05-01', value: '1.03', extra: null },
        { day: '2024-05-02', value: '1.02', extra: null },
      ]);
    });

    it("stores NDJSON numbers beyond a double's digits exactly as written", async () => {
      const project = slug('launchpad-tokens-launched');
      const ndjson = await file('exact.ndjson', [
        `{"metric":"launchpad-tokens-launched","project":"` +
          `${project}","date":"2024-06-01","value":12345678901234567891}`,
        `{"metric":"launchpad-tokens-launched","project":"${project}","date":"2024-06-02","extra":null,"value" ` +
          `: 1E+21}`,
        `{"value":1,"metric":"launchpad-tokens-launched","project":"` +
          `${project}","date":"2024-06-03","value":98765432109876543210}`,
      ]);

      expect(summary(await importFile(store, CATALOG, ndjson))).toEqual({ file: ndjson, ok: true, rows: 3 });

      expect(await stored(store, 'launchpad-tokens-launched', project)).toEqual([
        { day: '2024-06-01', value: '12345678901234567891', extra: null },
        { day: '2024-06-02', value: '1000000000000000000000', extra: null },
        { day: '2024-06-03', value: '98765432109876543210', extra: null },
      ]);
      const decimal = await file('exact-decimal.ndjson', [
        `{"metric":"token-price-usd","project":"${slug('token-price-usd')}` +
          `","date":"2024-06-01","value":12345678901234567890.123456789}`,
      ]);
      await importFile(store, CATALOG, decimal);
      expect(
        (await stored(store, 'token-price-usd', slug('token-price-usd'))).find((r) => r.day === '2024-06-01')?.value,
      ).toBe('12345678901234567890.123456789');
    });

    it('reports every bad CSV row with its line number and writes nothing from the file', async () => {
      const token = slug('token-price-usd');
      const csv = await file('bad.csv', [
        'metric,project,date,value,extra_json',
        'no-such-metric,blackrock,2024-06-01,1',
        'etf-num-products,nobody,2024-06-01,1',
        'etf-num-products,BlackRock,2024-06-01,1',
        'treasury-market-cap-usd,mstr,2024-06-01,1',
        'etf-num-products,blackrock,2024-02-30,1',
        'etf-num-products,blackrock,2024-06-01,1.5',
        `token-price-usd,${token},2024-06-01,NaN`,
        `token-price-usd,${token},2024-06-01,Infinity`,
        `token-price-usd,${token},2024-06-01,1,"{""a"":1}"`,
        `token-price-usd,${token},2024-06-01`,
        `token-price-usd,${token},2024-06-02,2`,
      ]);
      const before = await countPoints(store);

      const result = await importFile(store, CATALOG, csv);

      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.errorCount).toBe(10);
      expect(result.errors.map((e) => e.line)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      const messages = result.errors.map((e) => e.message);
      expect(messages[0]).toMatch(/unknown metric "no-such-metric"/);
      expect(messages[1]).toMatch(/project "nobody" is not allowed for metric "etf-num-products"/);
      expect(messages[2]).toMatch(/project "BlackRock" is not allowed .*did you mean "blackrock"/);
      expect(messages[3]).toMatch(/project "mstr" is not allowed .*did you mean "MSTR"/);
      expect(messages[4]).toMatch(/real calendar date as YYYY-MM-DD, found "2024-02-30"/);
      expect(messages[5]).toMatch(/whole number for the integer metric "etf-num-products", found "1.5"/);
      expect(messages[6]).toMatch(/finite decimal number .*found "NaN"/);
      expect(messages[7]).toMatch(/finite decimal number .*found "Infinity"/);
      expect(messages[8]).toMatch(/metric "token-price-usd" takes no extra fields/);
      expect(messages[9]).toBe('expected 4 or 5 columns, found 3');
      expect(await countPoints(store)).toBe(before);
    });

    it('reports bad NDJSON lines with their line numbers and writes nothing from the file', async () => {
      const token = slug('token-price-usd');
      const ndjson = await file('bad.jsonl', [
        `{"metric":"token-price-usd","project":"${token}","date":"2024-06-03","value":3}`,
        '{"metric":"token-price-usd"',
        '[1,2]',
        `{"metric":"token-price-usd","project":"${token}","date":"2024-06-03","value":"1,5"}`,
        `{"metric":"token-price-usd","project":"${token}","date":"2024-06-03","value":1e999}`,
        `{"metric":"etf-num-products","project":"blackrock","date":"2024-06-03","value":1,"extra":[1]}`,
        `{"metric":"token-price-usd","project":"${token}","date":"2024-06-03","value":1,"extras":{}}`,
        '{"metric":"etf-num-products","project":"blackrock","date":"2024-06-03","value":1,"extra":{"spot":"</script>"}}',
        '{"metric":"etf-num-products","project":"blackrock","date":"2024-06-03","value":1,"extra":{"futures":{"n":1}}}',
        '{"metric":"etf-num-products","project":"blackrock","date":"2024-06-03","value":2,"extra":{"spot":1.5,"futures":0.5}}',
      ]);
      const before = await countPoints(store);

      const result = await importFile(store, CATALOG, ndjson);

      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.errors.map((e) => e.line)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(result.errors[0]?.message).toMatch(/^not valid JSON/);
      expect(result.errors[1]?.message).toBe('expected a JSON object, found an array');
      expect(result.errors[2]?.message).toMatch(/finite decimal number .*found "1,5"/);
      expect(result.errors[3]?.message).toMatch(/finite decimal number .*found number Infinity/);
      expect(result.errors[4]?.message).toBe('expected "extra" to be a JSON object, found an array');
      expect(result.errors[5]?.message).toMatch(/unexpected field "extras"/);
      // A catalog extra field is aggregated as a number: text there made interval queries fail with a 500.
      expect(result.errors[6]?.message).toBe(
        'extra field "spot" of metric "etf-num-products" must be a number (or null), found "</script>"',
      );
      expect(result.errors[7]?.message).toBe(
        'extra field "futures" of metric "etf-num-products" must be a number (or null), found an object',
      );
      // The fields of an integer metric count what its value counts: whole numbers too.
      expect(result.errors[8]?.message).toBe(
        'extra field "spot" of the integer metric "etf-num-products" must be a ' +
          'whole number (or null), found number 1.5',
      );
      expect(await countPoints(store)).toBe(before);
    });

    it('a failure during the write phase rolls back every row of the file and names the file', async () => {
      const lines = ['metric,project,date,value'];
      for (let day = 0; day < 15_000; day += 1)
        lines.push(
          `transaction-fail-total,${slug('transaction-fail-total')}` +
            `,${fromEpochDay(toEpochDay('1980-01-01') + day)},${day}`,
        );
      const csv = await file('fails-late.csv', lines);
      const before = await countPoints(store);

      await expect(importFile(failingOnSecondUpsert(store), CATALOG, csv)).rejects.toThrow(
        `${csv}: import failed and nothing from this file was written: simulated failure`,
      );

      expect(await countPoints(store)).toBe(before);
      expect(await stored(store, 'transaction-fail-total', slug('transaction-fail-total'))).toEqual([]);
    });

    it('says an import stopped part-way (Ctrl-C) was interrupted, and writes nothing of its file', async () => {
      const lines = ['metric,project,date,value'];
      for (let day = 0; day < 15_000; day += 1)
        lines.push(
          `transaction-fail-total,${slug('transaction-fail-total')}` +
            `,${fromEpochDay(toEpochDay('1980-01-01') + day)},${day}`,
        );
      const csv = await file('interrupted.csv', lines);
      const before = await countPoints(store);
      const stop = new AbortController();

      const run = importFile(store, CATALOG, csv, { signal: stop.signal });
      setTimeout(() => stop.abort(), 0);

      await expect(run).rejects.toThrow(new Error(`${csv}: interrupted; nothing from this file was written`));
      expect(await countPoints(store)).toBe(before);
    });

    it('parses quoted CSV fields with commas and doubled quotes', async () => {
      const csv = await file('quoted.csv', [
        'metric,project,date,value,extra_json',
        `"etf-num-products","ark-invest","2024-07-01","5","{""spot"":3,""futures"":2,""leveraged"":0}"`,
      ]);

      expect(summary(await importFile(store, CATALOG, csv))).toEqual({ file: csv, ok: true, rows: 1 });

      expect(await stored(store, 'etf-num-products', 'ark-invest')).toEqual([
        { day: '2024-07-01', value: '5', extra: { spot: 3, futures: 2, leveraged: 0 } },
      ]);
      // A JSON string holding a comma and escaped quotes is read whole: the bad row quotes it exactly.
      const text = await file('quoted-text.csv', [
        'metric,project,date,value,extra_json',
        `"etf-num-products","ark-invest","2024-07-02","5","{""spot"":""a, \\""b\\"""",""leveraged"":0}"`,
      ]);
      const message = 'extra field "spot" of metric "etf-num-products" must be a number (or null), found "a, "b""';
      expect(await importFile(store, CATALOG, text)).toEqual({
        file: text,
        ok: false,
        errorCount: 1,
        errors: [{ line: 2, message }],
      });
    });

    it('rejects a CSV whose header is not metric,project,date,value[,extra_json]', async () => {
      const csv = await file('header.csv', [
        'metric,date,project,value',
        `token-price-usd,2024-08-01,${slug('token-price-usd')},1`,
      ]);

      const result = await importFile(store, CATALOG, csv);

      expect(result).toEqual({
        file: csv,
        ok: false,
        errorCount: 1,
        badHeader: true,
        errors: [
          {
            line: 1,
            message:
              'expected the header "metric,project,date,value" optionally followed by ' +
              '",extra_json", found "metric,date,project,value"',
          },
        ],
      });
    });

    it("an import and a sync writing at once both commit, the later commit's value kept", {
      timeout: 30_000,
    }, async () => {
      // A sync takes its turn to write while an import, past its catalog check, has not
      // yet: the import may hold nothing the sync's write then waits for. It did (every
      // project row, locked by the catalog check), and PostgreSQL broke the deadlock by
      // failing one of them ("deadlock detected").
      const project = CATALOG.byName.get('staking-apy')!.projects[1]!;
      const csv = await file('racing.csv', ['metric,project,date,value', `staking-apy,${project},2024-09-01,1.5`]);
      await importFile(
        store,
        CATALOG,
        await file('racing-setup.csv', ['metric,project,date,value', `staking-apy,${project},2024-09-03,9`]),
      );
      const id = await projectId(store, 'staking-apy', project);
      const upstream = {
        baseUrl: 'http://upstream.test',
        retries: 0,
        get: async () => `{"${project}":[{"date":"2024-09-01","value":2.5},{"date":"2024-09-02","value":3.5}]}`,
      };
      const task = { metric: 'staking-apy', slug: project, projectId: id, from: '2024-09-01', to: '2024-09-03' };
      let syncing: Promise<SeriesOutcome> | undefined;
      const racing = pausingBeforeWriteTurn(store, async () => {
        syncing = mirrorSeries(store, CATALOG, upstream, task, new AbortController().signal);
        // Let the sync take its turn and write (or wait for a lock) before the import goes on.
        const seen = new AbortController();
        const waited = kind.name === 'postgres' ? lockWaitSeen(store, seen.signal) : sleep(200);
        await Promise.race([syncing.catch(() => {}), waited]).finally(() => seen.abort());
      });

      const imported = await importFile(racing, CATALOG, csv).catch((error: Error) => error.message);
      const synced = await syncing!.catch((error: Error) => error.message);

      expect(summary(imported as ImportResult)).toEqual({ file: csv, ok: true, rows: 1 });
      // On a server the sync wrote while the import waited, so the import committed last;
      // the embedded store runs one transaction at a time, so there the sync waited for the import.
      const syncFirst = kind.name === 'postgres';
      expect(synced).toMatchObject({
        ok: true,
        fetched: 2,
        written: syncFirst ? { added: 2, revised: 0, removed: 1 } : { added: 1, revised: 1, removed: 1 },
      });
      // Either way the sync removed 2024-09-03 (it was not sent), and 2024-09-01 holds the later commit's value.
      expect(await stored(store, 'staking-apy', project)).toEqual([
        { day: '2024-09-01', value: syncFirst ? '1.5' : '2.5', extra: null },
        { day: '2024-09-02', value: '3.5', extra: null },
      ]);
    });

    it('a sync that commits after an import removes the day the import added in its range, which the upstream lacks', {
      timeout: 30_000,
    }, async () => {
      // The sync decides what to remove from the days stored in its range; it must decide
      // once it holds its turn, or a day committed while it waited outlives the mirror.
      const project = CATALOG.byName.get('staking-apy')!.projects[2]!;
      await importFile(
        store,
        CATALOG,
        await file('before-sync.csv', ['metric,project,date,value', `staking-apy,${project},2024-09-30,1`]),
      );
      const id = await projectId(store, 'staking-apy', project);
      const upstream = {
        baseUrl: 'http://upstream.test',
        retries: 0,
        get: async () => `{"${project}":[{"date":"2024-10-01","value":2.5}]}`,
      };
      const task = { metric: 'staking-apy', slug: project, projectId: id, from: '2024-10-01', to: '2024-10-05' };
      const csv = await file('during-sync.csv', ['metric,project,date,value', `staking-apy,${project},2024-10-03,7`]);
      let importing: Promise<ImportResult> | undefined;
      const waiting = pausingBeforeWriteTurn(store, async () => {
        importing = importFile(store, CATALOG, csv);
        // On a server the import commits now, while the sync waits; the embedded store runs one
        // transaction at a time, so there the import waits for the sync (a moment to reach that wait).
        if (kind.name === 'postgres') await importing;
        else await Promise.race([importing.catch(() => {}), sleep(200)]);
      });

      const synced = await mirrorSeries(waiting, CATALOG, upstream, task, new AbortController().signal);
      const imported = await importing!;

      expect(summary(imported)).toEqual({ file: csv, ok: true, rows: 1 });
      const syncLast = kind.name === 'postgres';
      expect(synced).toMatchObject({
        ok: true,
        fetched: 1,
        written: { added: 1, revised: 0, removed: syncLast ? 1 : 0 },
      });
      expect(await stored(store, 'staking-apy', project)).toEqual([
        { day: '2024-09-30', value: '1', extra: null },
        { day: '2024-10-01', value: '2.5', extra: null },
        ...(syncLast ? [] : [{ day: '2024-10-03', value: '7', extra: null }]),
      ]);
    });

    it('imports a 200,000-row file completely', { timeout: 180_000 }, async () => {
      const series = CATALOG.metrics.flatMap((m) => m.projects.map((p) => ({ metric: m, slug: p })));
      const firstDay = toEpochDay('2000-01-01');
      const lines = ['metric,project,date,value'];
      for (let i = 0; i < 200_000; i += 1) {
        const s = series[i % series.length]!;
        const value = s.metric.valueKind === 'integer' ? String(i % 1000) : (i / 7).toFixed(4);
        lines.push(`${s.metric.name},${s.slug},${fromEpochDay(firstDay + Math.floor(i / series.length))},${value}`);
      }
      const csv = await file('large.csv', lines);
      const progress: number[] = [];

      const result = await importFile(store, CATALOG, csv, {
        onProgress: (p) => p.phase === 'write' && progress.push(p.rows),
      });

      expect(summary(result)).toEqual({ file: csv, ok: true, rows: 200_000 });
      expect(progress).toEqual([100_000, 200_000]);
      const [row] = await store.query<{ n: number }>(
        `select count(*)::integer as n from point where day < '2010-01-01' and day >= '2000-01-01'`,
      );
      expect(row?.n).toBe(200_000);
    });

    it('tells the person what the import command did in words that count: 1 row, 2 rows, 1 point', async () => {
      const one = await file('one.csv', ['metric,project,date,value', 'treasury-market-cap-usd,MSTR,2024-02-01,1']);
      const two = await file('two.csv', [
        'metric,project,date,value',
        'treasury-market-cap-usd,MSTR,2024-02-02,2',
        'treasury-market-cap-usd,MSTR,2024-02-03,3',
      ]);
      const empty = join(dir, 'empty.csv');
      await writeFile(empty, '');
      const said = { out: '', err: '', progress: [] as string[] };
      const output = {
        out: (t: string) => void (said.out += t),
        err: (t: string) => void (said.err += t),
        progress: (t: string) => void said.progress.push(t),
      };
      const code = await importCommand.run(
        { store, catalog: CATALOG, config: loadConfig({}), output, signal: new AbortController().signal },
        { files: [one, two, empty] },
      );
      expect(code).toBe(1);
      expect(said.out).toMatch(
        new RegExp(
          `^imported 1 row from ${one} in .+: 1 point added, 0 revised, 0 removed\nimported ` +
            `2 rows from ${two} in .+: 2 points added, 0 revised, 0 removed\n$`,
        ),
      );
      expect(said.progress).toEqual(
        expect.arrayContaining([`${one}: validated 1 row`, `${one}: written 1 row`, `${two}: validated 2 rows`]),
      );
      expect(said.err).toBe(
        `${empty}:1: expected the header "metric,project,date,value" optionally ` +
          `followed by ",extra_json", found an empty file\n${empty}: not imported, ` +
          `no row can be read without that header; nothing from this file was written\n`,
      );
      // An empty file has no rows: nothing says it was validated as one.
      expect(said.progress).toContain(`${empty}: validated 0 rows`);
    });
  });
}

/** A slug the catalog allows for `metric`. */
function slug(metric: string): string {
  const project = CATALOG.byName.get(metric)?.projects[0];
  if (project === undefined) throw new Error(`the catalog has no metric "${metric}"`);
  return project;
}

function summary(result: ImportResult): object {
  return result.ok ? { file: result.file, ok: true, rows: result.rows } : result;
}

async function stored(
  db: Queryable,
  metric: string,
  project: string,
): Promise<{ day: string; value: string; extra: unknown }[]> {
  return db.query(
    `select p.day::text as day, p.value::text as value, p.extra
     from point p
     join project pr on pr.id = p.project_id
     join metric m on m.id = pr.metric_id
     where m.name = $1 and pr.slug = $2
     order by p.day`,
    [metric, project],
  );
}

async function countPoints(db: Queryable): Promise<number> {
  const [row] = await db.query<{ n: number }>('select count(*)::integer as n from point');
  return row?.n ?? 0;
}

/**
 * The store, except that a transaction runs `beforeTurn` once, just before it first takes
 * its turn to write (src/db/write-points.ts): where a writer has done all but its writes.
 */
function pausingBeforeWriteTurn(store: Store, beforeTurn: () => Promise<void>): Store {
  let paused = false;
  return {
    ...store,
    transaction: (work) =>
      store.transaction((tx) =>
        work({
          exec: (script) => tx.exec(script),
          copyCsv: (table, columns, csv) => tx.copyCsv(table, columns, csv),
          query: async (text, params) => {
            if (text.includes('from dataset_version for update') && !paused) {
              paused = true;
              await beforeTurn();
            }
            return tx.query(text, params);
          },
        }),
      ),
  };
}

/**
 * Resolves once a session of this database waits for a lock, or once `stop` aborts (PostgreSQL
 * only); throws when neither has happened within 20 s.
 */
async function lockWaitSeen(db: Queryable, stop: AbortSignal): Promise<void> {
  const waiting = async () => {
    const [row] = await db.query<{ n: number }>(
      `select count(*)::integer as n from pg_stat_activity where datname = current_database() ` +
        `and wait_event_type = 'Lock'`,
    );
    return row!.n > 0;
  };
  await until('a session waiting for a lock', async () => stop.aborted || (await waiting()), { withinMs: 20_000 });
}

/** The store, except that the second statement writing points inside a transaction fails. */
function failingOnSecondUpsert(store: Store): Store {
  return {
    ...store,
    transaction: (work) =>
      store.transaction((tx) => {
        let upserts = 0;
        return work({
          exec: (script) => tx.exec(script),
          copyCsv: (table, columns, csv) => tx.copyCsv(table, columns, csv),
          query: async (text, params) => {
            if (text.includes('insert into point') && ++upserts === 2) throw new Error('simulated failure');
            return tx.query(text, params);
          },
        });
      }),
  };
}
