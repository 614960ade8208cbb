import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import { type ColumnarExport, type ColumnBatch, head, type NullableDoubles } from './export-columns.js';

type SchemaElement = ConstructorParameters<typeof ParquetWriter>[0]['schema'][number];

/**
 * An export as a Parquet file, written as it is read: the magic, then one row group per
 * {@link ColumnBatch} (its bytes sent as soon as it is encoded), then the footer with the
 * row groups' metadata. `metric` and `project` are UTF-8 strings, dictionary-encoded in
 * every row group (the writer keeps a dictionary where it at least halves the size, which
 * a handful of names always does); `date` is DATE, `value` and the extras DOUBLE; pages
 * are Snappy-compressed. Nothing is produced before the first batch has been read, so a
 * store failure is still an error answer.
 */
export async function* parquetFile(
  exported: ColumnarExport,
  batches: AsyncIterable<ColumnBatch>,
): AsyncGenerator<Uint8Array> {
  const out = new ByteWriter(1 << 20);
  const writer = new ParquetWriter({ writer: out, schema: parquetSchema(exported), createdBy: 'metrics-service' });
  for await (const batch of batches) {
    const { length } = batch;
    writer.write({
      columnData: [
        { name: 'metric', data: names(exported.metrics, batch.metric, length) },
        { name: 'project', data: names(exported.projects, batch.project, length) },
        { name: 'date', data: head(batch.date, length) },
        { name: 'value', data: doubles(batch.value, length) },
        ...exported.extraFields.map((name, f) => ({ name, data: doubles(batch.extra[f]!, length) })),
      ],
      rowGroupSize: length,
    });
    yield taken(out);
  }
  writer.finish();
  yield taken(out);
}

// Private

function parquetSchema(exported: ColumnarExport): SchemaElement[] {
  const columns: SchemaElement[] = [
    { name: 'metric', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
    { name: 'project', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
    { name: 'date', type: 'INT32', converted_type: 'DATE', repetition_type: 'REQUIRED' },
    { name: 'value', type: 'DOUBLE', repetition_type: 'OPTIONAL' },
    ...exported.extraFields.map((name): SchemaElement => ({ name, type: 'DOUBLE', repetition_type: 'OPTIONAL' })),
  ];
  return [{ name: 'schema', num_children: columns.length }, ...columns];
}

/** The bytes written since the last call; the writer's buffer is then reused from its start. */
function taken(out: ByteWriter): Uint8Array {
  const bytes = out.getBytes().slice();
  out.index = 0;
  return bytes;
}

function names(dictionary: readonly string[], indices: Int32Array, length: number): string[] {
  const values = new Array<string>(length);
  for (let i = 0; i < length; i += 1) values[i] = dictionary[indices[i]!]!;
  return values;
}

function doubles(column: NullableDoubles, length: number): Float64Array | (number | null)[] {
  if (column.nullCount === 0) return head(column.values, length);
  const values = new Array<number | null>(length);
  for (let i = 0; i < length; i += 1) values[i] = column.valid[i] === 1 ? column.values[i]! : null;
  return values;
}
