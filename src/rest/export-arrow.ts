import {
  AsyncByteQueue,
  DateDay,
  Dictionary,
  Field,
  Float64,
  Int32,
  makeData,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  Utf8,
  vectorFromArray,
  type Data,
} from 'apache-arrow';
import { type ColumnarExport, type ColumnBatch, head, type NullableDoubles } from './export-columns.js';

/**
 * An export as an Arrow IPC stream: the schema, the two dictionaries (every metric and
 * project of the export, so they are written once, before the first record batch), then
 * one record batch per {@link ColumnBatch}, then the end-of-stream marker. Nothing is
 * produced before the first batch has been read, so a store failure is still an error answer.
 */
export async function* arrowStream(
  exported: ColumnarExport,
  batches: AsyncIterable<ColumnBatch>,
): AsyncGenerator<Uint8Array> {
  const schema = arrowSchema(exported);
  const metrics = vectorFromArray([...exported.metrics], new Utf8());
  const projects = vectorFromArray([...exported.projects], new Utf8());
  const sink = new TakenBytes();
  const writer = new RecordBatchStreamWriter();
  writer.reset(sink, schema);
  for await (const batch of batches) {
    const children: Data[] = [
      makeData({
        type: schema.fields[0]!.type,
        length: batch.length,
        data: head(batch.metric, batch.length),
        dictionary: metrics,
      }),
      makeData({
        type: schema.fields[1]!.type,
        length: batch.length,
        data: head(batch.project, batch.length),
        dictionary: projects,
      }),
      makeData({ type: new DateDay(), length: batch.length, data: head(batch.date, batch.length) }),
      doubles(batch.value, batch.length),
      ...batch.extra.map((column) => doubles(column, batch.length)),
    ];
    writer.write(
      new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: batch.length, children })),
    );
    yield sink.take();
  }
  writer.finish();
  yield sink.take();
}

/** The stream's schema: `metric` and `project` dictionary-encoded, `date` DATE (days), `value` and extras DOUBLE. */
export function arrowSchema(exported: ColumnarExport): Schema {
  return new Schema([
    new Field('metric', new Dictionary(new Utf8(), new Int32(), 0), false),
    new Field('project', new Dictionary(new Utf8(), new Int32(), 1), false),
    new Field('date', new DateDay(), false),
    new Field('value', new Float64(), true),
    ...exported.extraFields.map((name) => new Field(name, new Float64(), true)),
  ]);
}

// Private

/**
 * The writer's sink: holds what each write produced until it is taken, in place of the
 * writer's own queue, which would keep every byte until a reader pulled it.
 */
class TakenBytes extends AsyncByteQueue {
  private chunks: Uint8Array[] = [];

  override write(value: Uint8Array): void {
    this.chunks.push(value);
  }

  /** What was written since the last call, as one chunk. */
  take(): Uint8Array {
    const taken = Buffer.concat(this.chunks);
    this.chunks = [];
    return taken;
  }
}

function doubles(column: NullableDoubles, length: number): Data<Float64> {
  const values = head(column.values, length);
  if (column.nullCount === 0) return makeData({ type: new Float64(), length, data: values });
  return makeData({
    type: new Float64(),
    length,
    nullCount: column.nullCount,
    data: values,
    nullBitmap: bitmap(column.valid, length),
  });
}

/** Arrow's validity bitmap: one bit a row, least significant first. */
function bitmap(valid: Uint8Array, length: number): Uint8Array {
  const bits = new Uint8Array(Math.ceil(length / 8));
  for (let i = 0; i < length; i += 1) if (valid[i] === 1) bits[i >> 3]! |= 1 << (i & 7);
  return bits;
}
