import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { importFile } from '../src/import/import-files.js';
import { enumName } from './support/graphql-names.js';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/** Values as a file writes them, for each kind of value, one day each from 2031-01-01. */
const WRITTEN: Record<string, { project: string; values: string[] }> = {
  'transaction-fail-total': {
    project: 'ethereum',
    values: ['42', '42.0', '7e2', '0', '-3', '12345678901234567', '1.000'],
  },
  'token-price-usd': {
    project: 'ethereum',
    values: [
      '1.50',
      '0.000001',
      '1e-7',
      '-3.25',
      '12345678901234567.5',
      '3.14159265358979323846',
      '100',
      '2.500E+2',
      '-0.0',
    ],
  },
};

/**
 * Reads back over HTTP what an import wrote and compares it with the file's own numbers:
 * REST must write each value as its canonical decimal text (computed here, by hand, from
 * the text in the file) and GraphQL must give the same number as a float.
 */
for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`values read back after an import, on ${kind.name}`, () => {
    let svc: TestService;
    let dir: string;

    beforeAll(async () => {
      svc = await startTestService(kind);
      dir = await mkdtemp(join(tmpdir(), 'metrics-values-'));
      const rows = Object.entries(WRITTEN).flatMap(([metric, { project, values }]) =>
        values.map((v, i) => `${metric},${project},${day(i)},${v}`),
      );
      const extras = '\netf-num-products,blackrock,2031-01-01,5,"{""spot"":2,""futures"":1,""leveraged"":2}"';
      await writeFile(join(dir, 'values.csv'), `metric,project,date,value,extra_json\n${rows.join('\n')}${extras}\n`);
      const result = await importFile(svc.running.services.store, CATALOG, join(dir, 'values.csv'));
      expect(result.ok).toBe(true);
    });

    afterAll(async () => {
      await svc?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    it.each(Object.entries(WRITTEN))(
      'REST writes every %s value as its canonical decimal text',
      async (metric, { project, values }) => {
        const res = await svc.get(`/v1/metrics/${metric}?project=${project}&start_date=2031-01-01`);
        const text = await res.text();
        const expected = values.map((v, i) => `{"date":"${day(i)}","value":${canonicalDecimal(v)}}`).join(',');
        expect(text).toBe(`{"${project}":[${expected}]}`);
        const parsed = (JSON.parse(text) as Record<string, { value: number }[]>)[project]!;
        expect(parsed.map((p) => p.value)).toEqual(values.map((v) => Number(v) + 0)); // + 0: a served 0 has no sign
      },
    );

    it.each(Object.entries(WRITTEN))(
      'GraphQL gives every %s value as the number the file wrote',
      async (metric, { project, values }) => {
        const res = await svc.graphql(
          `{ metric(name: ${enumName(metric)}, projects: [${project}], from: "2031-01-01") ` +
            `{ series { points { date value } } } }`,
        );
        const body = (await res.json()) as {
          data: { metric: { series: { points: { date: string; value: number }[] }[] } };
        };
        expect(body.data.metric.series[0]!.points).toEqual(
          values.map((v, i) => ({ date: day(i), value: Number(v) + 0 })),
        );
      },
    );

    it('keeps the extra fields of a point, in REST beside the value and in GraphQL under extra', async () => {
      const rest = await svc.get('/v1/metrics/etf-num-products?project=blackrock&start_date=2031-01-01');
      // The fields as PostgreSQL's jsonb writes them, as REST always has (the frozen bytes).
      expect(await rest.text()).toBe(
        '{"blackrock":[{"date":"2031-01-01","value":5,"spot": 2, "futures": 1, "leveraged": 2}]}',
      );
      const gql = await svc.graphql(
        '{ metric(name: etf_num_products, projects: [blackrock], from: "2031-01-01") ' +
          '{ series { points { value extra } } } }',
      );
      expect(((await gql.json()) as { data: unknown }).data).toEqual({
        metric: { series: [{ points: [{ value: 5, extra: { spot: 2, futures: 1, leveraged: 2 } }] }] },
      });
    });
  });
}

// Private

function day(i: number): string {
  return `2031-01-${String(i + 1).padStart(2, '0')}`;
}

/**
 * A decimal as the shortest exact text: no exponent, no leading or trailing zeros, no
 * "-0". Worked out on the digits, independently of the database's own formatting.
 */
function canonicalDecimal(text: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (m === null) throw new Error(`not a decimal: ${text}`);
  const [, sign, whole, fraction = '', exponent = '0'] = m;
  const digits = `${whole}${fraction}`;
  const point = whole!.length + Number(exponent);
  const padded = point <= 0 ? `${'0'.repeat(1 - point)}${digits}` : digits.padEnd(point, '0');
  const at = Math.max(point, 1);
  const integer = padded.slice(0, at).replace(/^0+(?=\d)/, '');
  const decimals = padded.slice(at).replace(/0+$/, '');
  const body = decimals === '' ? integer : `${integer}.${decimals}`;
  return /^[0.]+$/.test(body) ? '0' : `${sign}${body}`;
}
