import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';
import { runImport } from './support/run-import.js';

/**
 * An import stores in `extra` only the metric's declared extra fields, each a number or
 * null: any other key or value is a bad row, reported with its file and line like every
 * other, and nothing of it is ever served.
 */

const EXPECTED = 'expected only spot, futures, leveraged';
const NOT_IMPORTED = 'not imported, 1 bad row; nothing from this file was written';
const GOOD_LINE = ndjson('2031-02-01', 3, '{"spot":3}');
const HUGE = JSON.stringify(Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i])));

/** Files of a good row and a bad one (its line given), each refused as a whole, with the report each must get. */
const HOSTILE: { name: string; lines: string[]; line: number; message: string }[] = [
  {
    name: 'markup.ndjson',
    lines: [GOOD_LINE, ndjson('2031-02-02', 1, '{"spot":1,"note":"<script>alert(1)</script>"}')],
    line: 2,
    message: `unexpected extra field "note" for metric "etf-num-products": ${EXPECTED}`,
  },
  {
    name: 'proto.ndjson',
    lines: [GOOD_LINE, ndjson('2031-02-02', 1, '{"__proto__":{"spot":1,"polluted":true}}')],
    line: 2,
    message: `unexpected extra field "__proto__" for metric "etf-num-products": ${EXPECTED}`,
  },
  {
    name: 'constructor.ndjson',
    lines: [GOOD_LINE, ndjson('2031-02-02', 1, '{"spot":1,"constructor":{"prototype":{"polluted":true}}}')],
    line: 2,
    message: `unexpected extra field "constructor" for metric "etf-num-products": ${EXPECTED}`,
  },
  {
    name: 'huge.ndjson',
    lines: [GOOD_LINE, ndjson('2031-02-02', 1, HUGE)],
    line: 2,
    message: `unexpected extra field "k0" and 99999 more for metric "etf-num-products": ${EXPECTED}`,
  },
  {
    name: 'case.ndjson',
    lines: [GOOD_LINE, ndjson('2031-02-02', 2, '{"spot":1,"Spot":1}')],
    line: 2,
    message: `unexpected extra field "Spot" for metric "etf-num-products": ${EXPECTED}`,
  },
  {
    name: 'text.ndjson',
    lines: [GOOD_LINE, ndjson('2031-02-02', 1, '{"futures":"1"}')],
    line: 2,
    message: 'extra field "futures" of metric "etf-num-products" must be a number (or null), found "1"',
  },
  {
    name: 'markup.csv',
    lines: [
      'metric,project,date,value,extra_json',
      'etf-num-products,blackrock,2031-02-01,3,"{""spot"":3}"',
      'etf-num-products,blackrock,2031-02-02,1,"{""spot"":1,""title"":""a, \\""b\\""""}"',
    ],
    line: 3,
    message: `unexpected extra field "title" for metric "etf-num-products": ${EXPECTED}`,
  },
  {
    name: 'nested.csv',
    lines: ['metric,project,date,value,extra_json', 'etf-num-products,blackrock,2031-02-02,1,"{""spot"":{""n"":1}}"'],
    line: 2,
    message: 'extra field "spot" of metric "etf-num-products" must be a number (or null), found an object',
  },
];

const GOOD = [
  ndjson('2031-03-01', 3, '{"spot":2,"futures":1,"leveraged":null}'),
  ndjson('2031-03-02', 4, '{"spot":4}'),
];

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`extra fields of an import on ${kind.name}`, { timeout: 120_000 }, () => {
    let service: TestService;
    let dir: string;

    beforeAll(async () => {
      service = await startTestService(kind);
      dir = await mkdtemp(join(tmpdir(), 'metrics-extra-'));
    });
    afterAll(async () => {
      await service?.stop();
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    });

    it('reports a row with any other key or value in extra as a bad row, with its file and line', async () => {
      for (const hostile of HOSTILE) {
        const file = join(dir, hostile.name);
        await writeFile(file, `${hostile.lines.join('\n')}\n`);
        const said = await runImport(service.running.services.store, file);
        expect(said, hostile.name).toEqual({
          code: 1,
          out: '',
          err: `${file}:${hostile.line}: ${hostile.message}\n${file}: ${NOT_IMPORTED}\n`,
        });
      }
    });

    it('serves only the declared fields with numbers, in REST points and GraphQL extra', async () => {
      const file = join(dir, 'good.ndjson');
      await writeFile(file, `${GOOD.join('\n')}\n`);
      expect((await runImport(service.running.services.store, file)).code).toBe(0);

      const rest = await service.get('/v1/metrics/etf-num-products?project=blackrock&start_date=2031-02-01');
      expect(rest.status).toBe(200);
      // The fields as PostgreSQL's jsonb writes them, as REST always has.
      expect(await rest.text()).toBe(
        '{"blackrock":[{"date":"2031-03-01","value":3,"spot": 2, "futures": 1, "leveraged": null},' +
          '{"date":"2031-03-02","value":4,"spot": 4}]}',
      );
      const gql = await service.graphql(
        '{ metric(name: etf_num_products, projects: [blackrock], from: "2031-02-01") ' +
          '{ series { points { date value extra } } } }',
      );
      expect(await gql.json()).toEqual({
        data: {
          metric: {
            series: [
              {
                points: [
                  { date: '2031-03-01', value: 3, extra: { spot: 2, futures: 1, leveraged: null } },
                  { date: '2031-03-02', value: 4, extra: { spot: 4 } },
                ],
              },
            ],
          },
        },
        extensions: { cost: { units: 1 } },
      });
      const changes = await (await service.get('/v1/changes?since=2000-01-01')).text();
      for (const word of ['note', 'script', '__proto__', 'constructor', 'polluted', 'k0', 'Spot', 'title']) {
        expect(changes).not.toContain(word);
      }
    });
  });
}

// Private

function ndjson(date: string, value: number, extra: string): string {
  return `{"metric":"etf-num-products","project":"blackrock","date":"${date}","value":${value},"extra":${extra}}`;
}
