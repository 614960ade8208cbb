/**
 * `npx tsx test/bench/csv-parsers.ts`: how fast the importer's own CSV reader
 * (src/import/parse-rows.ts) and csv-parse read the same 1,000,000-row file, each given
 * what the importer needs (line numbers, a bad record reported and skipped). The importer
 * reads every file twice (validate, then write), so this cost counts double.
 */
import { parse, type Options } from 'csv-parse';
import { createReadStream, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readRows } from '../../src/import/parse-rows.js';

const ROWS = 1_000_000;
const file = join(tmpdir(), 'metrics-csv-bench.csv');
const lines = ['metric,project,date,value'];
for (let i = 0; i < ROWS; i += 1) lines.push(`token-price-usd,ethereum,${new Date(Date.UTC(2000, 0, 1) + i * 86_400_000).toISOString().slice(0, 10)},${(i * 1.37).toFixed(4)}`);
writeFileSync(file, `${lines.join('\n')}\n`);

const readers: [string, () => Promise<number>][] = [
  ['importer (line reader)', async () => {
    let n = 0;
    for await (const _ of readRows(file)) n += 1;
    return n;
  }],
  ['csv-parse, plain', () => count({})],
  ['csv-parse, with line numbers and skipped bad records', () => count({ info: true, relax_column_count: true, skip_records_with_error: true, bom: true, skip_empty_lines: true })],
];
for (let round = 0; round < 2; round += 1) {
  for (const [name, read] of readers) {
    const started = performance.now();
    const n = await read();
    console.log(`${name}: ${n} records in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
}

function count(options: Options): Promise<number> {
  return new Promise((resolve, reject) => {
    let n = 0;
    const parser = createReadStream(file).pipe(parse(options));
    parser.on('data', () => (n += 1));
    parser.once('end', () => resolve(n));
    parser.once('error', reject);
  });
}
