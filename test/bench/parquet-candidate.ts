/**
 * `tsx test/bench/parquet-candidate.ts <writer> <file.arrow>…`, run by export-formats.ts
 * in a fresh process: writes each Arrow stream as a Parquet file with one candidate
 * writer, a record batch at a time (Snappy, dictionaries on, one row group per batch),
 * counting the bytes, and prints one JSON line: rows, bytes, seconds, and the peak RSS
 * growth over the process's RSS just before the first file (the libraries loaded).
 */
import { createReadStream } from 'node:fs';
import { RecordBatchReader, type RecordBatch, Table, tableToIPC } from 'apache-arrow';
import * as wasm from 'parquet-wasm/node';
import { BATCH_ROWS, type ColumnarExport, type ColumnBatch } from '../../src/rest/export-columns.js';
import { parquetFile } from '../../src/rest/export-parquet.js';

const [candidate, ...files] = process.argv.slice(2);
const before = process.memoryUsage.rss();
const started = performance.now();
let rows = 0;
let bytes = 0;
for (const file of files) {
  const reader = await RecordBatchReader.from(createReadStream(file));
  await reader.open();
  if (candidate === 'hyparquet-writer') {
    let exported: ColumnarExport | undefined;
    const batches = async function* (): AsyncGenerator<ColumnBatch> {
      for await (const batch of reader) {
        exported ??= dictionaries(batch);
        rows += batch.numRows;
        yield columnBatch(batch);
      }
    };
    // The dictionaries come with the first batch; an export without rows has none to write.
    const source = batches();
    const first = await source.next();
    if (first.done) continue;
    const all = async function* () {
      yield first.value;
      yield* source;
    };
    for await (const chunk of parquetFile(exported!, all())) bytes += chunk.byteLength;
  } else if (candidate === 'parquet-wasm') {
    const properties = new wasm.WriterPropertiesBuilder()
      .setCompression(wasm.Compression.SNAPPY)
      .setDictionaryEnabled(true)
      .setMaxRowGroupSize(BATCH_ROWS)
      .build();
    const batches = reader[Symbol.asyncIterator]();
    const input = new ReadableStream({
      async pull(controller) {
        const next = await batches.next();
        if (next.done) {
          controller.close();
          return;
        }
        rows += next.value.numRows;
        const table = wasm.Table.fromIPCStream(tableToIPC(new Table([next.value]), 'stream'));
        for (const batch of table.recordBatches()) controller.enqueue(batch);
      },
    });
    const output = await wasm.transformParquetStream(input, properties);
    for await (const chunk of output as unknown as AsyncIterable<Uint8Array>) bytes += chunk.byteLength;
  } else {
    throw new Error(`unknown writer ${candidate}; expected hyparquet-writer or parquet-wasm`);
  }
}
const seconds = (performance.now() - started) / 1000;
// maxRSS is the process's peak, in KiB.
const peakGrowthMb = (process.resourceUsage().maxRSS * 1024 - before) / 2 ** 20;
process.stdout.write(`${JSON.stringify({ rows, bytes, seconds, peakGrowthMb })}\n`);

function dictionaries(batch: RecordBatch): ColumnarExport {
  const names = (column: string) => [...(batch.getChild(column)!.data[0]!.dictionary! as Iterable<string>)];
  const extraFields = batch.schema.fields.slice(4).map((f) => f.name);
  return { metrics: names('metric'), projects: names('project'), extraFields };
}

function columnBatch(batch: RecordBatch): ColumnBatch {
  const values = (column: string) => batch.getChild(column)!.data[0]!.values;
  const doubles = (column: string) => {
    const vector = batch.getChild(column)!;
    const valid = new Uint8Array(batch.numRows);
    for (let i = 0; i < batch.numRows; i += 1) valid[i] = vector.isValid(i) ? 1 : 0;
    return { values: values(column) as Float64Array, valid, nullCount: vector.nullCount };
  };
  return {
    length: batch.numRows,
    metric: values('metric') as Int32Array,
    project: values('project') as Int32Array,
    date: values('date') as Int32Array,
    value: doubles('value'),
    extra: batch.schema.fields.slice(4).map((f) => doubles(f.name)),
  };
}
