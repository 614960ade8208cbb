import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { RecordBatchReader, Type } from 'apache-arrow';
import { parse } from 'csv-parse/sync';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readyDirectory } from '../src/api/unavailable.js';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { arrowStream } from '../src/rest/export-arrow.js';
import { columnarExport, columnBatches } from '../src/rest/export-columns.js';
import { parquetFile } from '../src/rest/export-parquet.js';
import { REST_PARAMS } from '../src/rest/parse-query.js';
import { planSeries } from '../src/series/series-plan.js';
import { validateSeriesRequest } from '../src/series/series-request.js';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/** A row as compared: the CSV's text read as a DOUBLE, and the extra fields of its `extra_json`. */
interface Row {
  metric: string;
  project: string;
  date: string;
  value: number | null;
  extra: Record<string, number | null>;
}

/** The extra columns an export of `query` has with extra=include: its metrics' extra fields. */
function extraFieldsOf(query: string): string[] {
  const names = new URLSearchParams(query).get('metric')!.split(',');
  return [...new Set(CATALOG.metrics.filter((m) => names.includes(m.name)).flatMap((m) => m.extraFields))];
}
/** The full export: each metric with every project it has (a list of projects applies to every metric named). */
const FULL_EXPORT = CATALOG.metrics.map((m) => `metric=${m.name}&project=${m.projects.join(',')}`);

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`the Parquet and Arrow exports on ${kind.name}`, () => {
    let svc: TestService;
    let dir: string;
    let duck: DuckDBInstance;
    let db: DuckDBConnection;
    /** While set, every streamed read fails as a database going away does. */
    let storeDown = false;
    beforeAll(async () => {
      svc = await startTestService(
        kind,
        {},
        {
          wrapStore: (store) => ({
            ...store,
            streamRaw: (text, params, rows, signal, options) =>
              storeDown ? failing() : store.streamRaw(text, params, rows, signal, options),
          }),
        },
      );
      dir = await mkdtemp(join(tmpdir(), 'metrics-export-columnar-'));
      duck = await DuckDBInstance.create(':memory:');
      db = await duck.connect();
    }, 180_000);
    afterAll(async () => {
      db?.closeSync();
      duck?.closeSync();
      await svc?.stop();
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    });

    /** The CSV export's rows for `query`, read independently of the server's code. */
    async function csvRows(query: string, extra: boolean): Promise<Row[]> {
      const res = await svc.get(`/v1/export?${query}&format=csv${extra ? '&extra=include' : ''}`);
      expect(res.status, await res.clone().text()).toBe(200);
      const records = parse(await res.text(), { columns: true }) as Record<string, string>[];
      const fields = extra ? extraFieldsOf(query) : [];
      return records.map((r) => {
        const extraJson = r.extra_json ? (JSON.parse(r.extra_json) as Record<string, unknown>) : {};
        return {
          metric: r.metric!,
          project: r.project!,
          date: r.date!,
          value: r.value === '' ? null : Number(r.value),
          extra: Object.fromEntries(
            fields.map((f) => [f, typeof extraJson[f] === 'number' ? (extraJson[f] as number) : null]),
          ),
        };
      });
    }

    async function download(query: string, format: 'parquet' | 'arrow'): Promise<Uint8Array> {
      const res = await svc.get(`/v1/export?${query}&format=${format}`);
      expect(res.status, await res.clone().text()).toBe(200);
      expect(res.headers.get('content-type')).toBe(
        format === 'parquet' ? 'application/vnd.apache.parquet' : 'application/vnd.apache.arrow.stream',
      );
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="metrics-export.${format}"`);
      return new Uint8Array(await res.arrayBuffer());
    }

    /** The Parquet export read back by DuckDB, and the encodings of its `metric` and `project` chunks. */
    async function parquetRows(query: string, extra: boolean): Promise<{ rows: Row[]; encodings: string[] }> {
      return readParquet(await download(query, 'parquet'), extra ? extraFieldsOf(query) : []);
    }

    async function readParquet(bytes: Uint8Array, fields: string[]): Promise<{ rows: Row[]; encodings: string[] }> {
      const path = join(dir, `export-${Math.random().toString(36).slice(2)}.parquet`);
      await writeFile(path, bytes);
      const extraColumns = fields.map((f) => `, "${f}"`).join('');
      const read = await db.runAndReadAll(
        `select metric, project, date::varchar as date, value${extraColumns} from read_parquet('${path}')`,
      );
      const rows = read.getRowObjectsJS().map((r) => ({
        metric: r.metric as string,
        project: r.project as string,
        date: r.date as string,
        value: r.value as number | null,
        extra: Object.fromEntries(fields.map((f) => [f, r[f] as number | null])),
      }));
      const meta = await db.runAndReadAll(
        `select distinct unnest(string_split(encodings, ', ')) as e from parquet_metadata('${path}') ` +
          `where path_in_schema in ('metric', 'project')`,
      );
      return { rows, encodings: meta.getRowObjectsJS().map((r) => r.e as string) };
    }

    /** The Arrow stream read back by apache-arrow's reader, and its schema's field types. */
    async function arrowRows(query: string, extra: boolean): Promise<{ rows: Row[]; types: Record<string, Type> }> {
      return readArrow(await download(query, 'arrow'), extra ? extraFieldsOf(query) : []);
    }

    function readArrow(
      bytes: Uint8Array,
      fields: string[],
    ): { rows: Row[]; types: Record<string, Type>; batches: number[] } {
      const reader = RecordBatchReader.from(bytes);
      const rows: Row[] = [];
      const batches: number[] = [];
      reader.open();
      const types = Object.fromEntries(reader.schema.fields.map((f) => [f.name, f.type.typeId as Type]));
      for (const batch of reader) {
        batches.push(batch.numRows);
        for (let i = 0; i < batch.numRows; i += 1) {
          const day = batch.getChild('date')!.data[0]!.values[i] as number;
          rows.push({
            metric: batch.getChild('metric')!.get(i) as string,
            project: batch.getChild('project')!.get(i) as string,
            date: new Date(day * 86_400_000).toISOString().slice(0, 10),
            value: batch.getChild('value')!.get(i) as number | null,
            extra: Object.fromEntries(fields.map((f) => [f, batch.getChild(f)!.get(i) as number | null])),
          });
        }
      }
      return { rows, types, batches };
    }

    it('holds every row of the CSV export for every metric and project, extra fields included', async () => {
      let withExtra = 0;
      for (const query of FULL_EXPORT) {
        const expected = await csvRows(query, true);
        expect(expected.length, query).toBeGreaterThan(0);
        withExtra += expected.filter((r) => Object.values(r.extra).some((v) => v !== null)).length;
        expect((await parquetRows(`${query}&extra=include`, true)).rows, query).toEqual(expected);
        expect((await arrowRows(`${query}&extra=include`, true)).rows, query).toEqual(expected);
      }
      expect(withExtra).toBeGreaterThan(0);
    }, 300_000);

    it.each([
      ['a metric with extra fields, without them', 'metric=etf-num-products&project=blackrock,vaneck', false],
      [
        'a filtered, bucketed export with missing values',
        'metric=token-price-usd,price&project=solana,ethereum' +
          '&start_date=2025-01-10&end_date=2025-09-20&interval=week&transform=percent_change',
        false,
      ],
      [
        'several metrics with extra fields, some without',
        'metric=etf-aum-change-pct,etf-num-products&project=blackrock,fidelity&start_date=2026-01-01',
        true,
      ],
    ])('holds every row of the CSV export: %s', async (_, query, extra) => {
      const expected = await csvRows(query, extra);
      expect(expected.length).toBeGreaterThan(0);
      if (query.includes('transform')) expect(expected.some((r) => r.value === null)).toBe(true);
      if (extra) expect(expected.some((r) => Object.values(r.extra).some((v) => v !== null))).toBe(true);
      const asked = `${query}${extra ? '&extra=include' : ''}`;
      expect((await parquetRows(asked, extra)).rows).toEqual(expected);
      expect((await arrowRows(asked, extra)).rows).toEqual(expected);
    });

    it('dictionary-encodes metric and project, with a DATE and a DOUBLE beside them', async () => {
      const query = 'metric=token-price-usd,price&project=ethereum,solana';
      const { types } = await arrowRows(query, false);
      expect(types).toEqual({
        metric: Type.Dictionary,
        project: Type.Dictionary,
        date: Type.Date,
        value: Type.Float,
      });
      const { encodings } = await parquetRows(query, false);
      expect(encodings).toContain('RLE_DICTIONARY');
      const file = join(dir, 'schema.parquet');
      await writeFile(file, await download(query, 'parquet'));
      const schema = await db.runAndReadAll(`select name, type, converted_type from parquet_schema('${file}')`);
      expect(schema.getRowObjectsJS().slice(1)).toEqual([
        { name: 'metric', type: 'BYTE_ARRAY', converted_type: 'UTF8' },
        { name: 'project', type: 'BYTE_ARRAY', converted_type: 'UTF8' },
        { name: 'date', type: 'INT32', converted_type: 'DATE' },
        { name: 'value', type: 'DOUBLE', converted_type: null },
      ]);
    });

    it('cuts the rows into batches of a fixed size across projects and metrics, each a row group or record batch', async () => {
      const { services } = svc.running;
      const query =
        'metric=etf-num-products,etf-aum-change-pct&project=blackrock,fidelity,vaneck&start_date=2026-03-01';
      const params = new URLSearchParams(query);
      const plans = params
        .get('metric')!
        .split(',')
        .map((name) => {
          const request = validateSeriesRequest(
            {
              metric: services.catalog.byName.get(name)!,
              projects: ['blackrock', 'fidelity', 'vaneck'],
              from: '2026-03-01',
            },
            REST_PARAMS,
          );
          return { plan: planSeries(request, readyDirectory(services.state)), buckets: 400 };
        });
      const exported = columnarExport(plans, true);
      const read = () => columnBatches(services.reads, plans, exported, new AbortController().signal, 100);
      const lengths: number[] = [];
      for await (const batch of read()) lengths.push(batch.length);
      const expected = await csvRows(query, true);
      expect(lengths.slice(0, -1).every((n) => n === 100)).toBe(true);
      expect(lengths.reduce((a, b) => a + b, 0)).toBe(expected.length);
      expect(lengths.length).toBeGreaterThan(5);

      const file = join(dir, 'batched.parquet');
      const parquet = Buffer.concat(await collect(parquetFile(exported, read())));
      expect((await readParquet(parquet, [...exported.extraFields])).rows).toEqual(expected);
      await writeFile(file, parquet);
      const groups = await db.runAndReadAll(
        `select count(distinct row_group_id) as n from parquet_metadata('${file}')`,
      );
      expect(Number(groups.getRowObjectsJS()[0]!.n)).toBe(lengths.length);
      const arrow = readArrow(Buffer.concat(await collect(arrowStream(exported, read()))), [...exported.extraFields]);
      expect(arrow.batches).toEqual(lengths);
      expect(arrow.rows).toEqual(expected);
    });

    it('answers an export without rows with a valid file of zero rows', async () => {
      const query = 'metric=token-price-usd&project=ethereum&start_date=2001-01-01&end_date=2001-01-31';
      expect(await csvRows(query, false)).toEqual([]);
      expect((await parquetRows(query, false)).rows).toEqual([]);
      const arrow = await arrowRows(query, false);
      expect(arrow.rows).toEqual([]);
      expect(Object.keys(arrow.types)).toEqual(['metric', 'project', 'date', 'value']);
    });

    it('answers a store failure before the first byte with a 503 problem', async () => {
      storeDown = true;
      try {
        for (const format of ['parquet', 'arrow']) {
          const res = await svc.get(`/v1/export?metric=price&project=ethereum&format=${format}`);
          expect(res.status, format).toBe(503);
          expect(res.headers.get('content-type')).toBe('application/problem+json');
        }
      } finally {
        storeDown = false;
      }
    });

    it('refuses an unknown format with a 400 naming format and its values', async () => {
      const res = await svc.get('/v1/export?metric=price&format=xlsx');
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      const body = (await res.json()) as { errors: { param: string; message: string }[] };
      expect(body.errors).toEqual([
        { param: 'format', message: 'expected one of csv, ndjson, parquet, arrow, got "xlsx"' },
      ]);
    });
  });
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/** A read that fails as a database shutting down does (SQLSTATE 57P01). */
async function* failing(): AsyncGenerator<never> {
  throw Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
}
