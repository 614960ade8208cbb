import { columnText, type CancelSignal, type Store } from '../db/store.js';
import { streamSeries } from '../series/read-series.js';
import type { SeriesPlan } from '../series/series-plan.js';
import { POINTS_PER_BATCH } from './metric-route.js';

/**
 * The typed rows of an Arrow or Parquet export, in the order of the CSV export (metric and
 * project as asked, then date), cut into batches of {@link BATCH_ROWS}: what one Arrow record
 * batch or one Parquet row group holds. Only one batch is held at a time, besides the
 * database's current round trip of projects, so memory stays flat for any export.
 */

/**
 * Rows per batch: 330 KB of columns (21 bytes a row, more with extra fields). Parquet's
 * writer holds about 1 KB a row while it encodes a row group (65,536-row groups added 50 MB
 * to the full export's peak RSS; docs/performance.md, "Parquet and Arrow export").
 */
export const BATCH_ROWS = 16_384;

/** What every batch of one export shares: the names its dictionaries index, and its extra columns. */
export interface ColumnarExport {
  /** The metrics exported, in order: the values of the `metric` column's dictionary. */
  metrics: readonly string[];
  /** Every project of the export, in order of first appearance: the `project` column's dictionary. */
  projects: readonly string[];
  /** The extra fields asked for (`extra=include`), each a nullable DOUBLE column; empty otherwise. */
  extraFields: readonly string[];
}

/** A nullable DOUBLE column: its values, and per row 1 where there is one and 0 for null. */
export interface NullableDoubles {
  values: Float64Array;
  valid: Uint8Array;
  nullCount: number;
}

/** Some rows as columns, each `length` long. */
export interface ColumnBatch {
  length: number;
  /** Indices into {@link ColumnarExport.metrics}. */
  metric: Int32Array;
  /** Indices into {@link ColumnarExport.projects}. */
  project: Int32Array;
  /** Days since 1970-01-01. */
  date: Int32Array;
  value: NullableDoubles;
  /** One per {@link ColumnarExport.extraFields}, in that order. */
  extra: NullableDoubles[];
}

/** What an export reads: each metric's plan and the number of buckets a project spans, which sizes its round trips. */
export interface ExportPlan {
  plan: SeriesPlan;
  buckets: number;
}

/** The dictionaries and extra columns of an export of `plans`. */
export function columnarExport(plans: readonly ExportPlan[], withExtra: boolean): ColumnarExport {
  const projects = new Set<string>();
  const extraFields = new Set<string>();
  for (const { plan } of plans) {
    for (const p of plan.projects) projects.add(p.slug);
    if (withExtra) for (const f of plan.metric.extraFields) extraFields.add(f);
  }
  return { metrics: plans.map((p) => p.plan.metric.name), projects: [...projects], extraFields: [...extraFields] };
}

/**
 * The export's rows in batches of `batchRows` (the last one fewer; none when there are no
 * rows), read through the series path a few projects per round trip like the CSV export.
 */
export async function* columnBatches(
  store: Store,
  plans: readonly ExportPlan[],
  exported: ColumnarExport,
  signal: CancelSignal,
  batchRows = BATCH_ROWS,
): AsyncGenerator<ColumnBatch> {
  const layout = exported.extraFields.length > 0 ? 'columns-extra' : 'columns';
  const projectIndex = new Map(exported.projects.map((slug, i) => [slug, i]));
  const { extraFields } = exported;
  let batch = emptyBatch(batchRows, extraFields.length);
  for (const [metricIndex, { plan, buckets }] of plans.entries()) {
    const perRoundTrip = Math.max(1, Math.floor(POINTS_PER_BATCH / Math.max(1, buckets)));
    for await (const rows of streamSeries(store, plan, layout, perRoundTrip, signal)) {
      for (const row of rows) {
        const points = decodePoints(row.points);
        const project = projectIndex.get(columnText(row.slug))!;
        for (let i = 0; i < points.days.length; i += 1) {
          const at = batch.length;
          batch.metric[at] = metricIndex;
          batch.project[at] = project;
          batch.date[at] = points.days[i]!;
          setDouble(batch.value, at, points.values[i]);
          for (let f = 0; f < extraFields.length; f += 1)
            setDouble(batch.extra[f]!, at, points.extra?.[i]?.[extraFields[f]!]);
          batch.length += 1;
          if (batch.length === batchRows) {
            yield batch;
            batch = emptyBatch(batchRows, extraFields.length);
          }
        }
      }
    }
  }
  if (batch.length > 0) yield batch;
}

/** The first `length` entries of a column: a view, not a copy. */
export function head<T extends Int32Array | Float64Array | Uint8Array>(column: T, length: number): T {
  return column.subarray(0, length) as T;
}

// Private

/** One project's points as the `columns` layouts write them. */
interface DecodedPoints {
  days: number[];
  values: (number | null)[];
  extra?: (Record<string, unknown> | null)[];
}

function decodePoints(text: Parameters<typeof columnText>[0]): DecodedPoints {
  const decoded = JSON.parse(columnText(text)) as {
    days: number[] | null;
    values: (number | null)[] | null;
    extra?: (Record<string, unknown> | null)[] | null;
  };
  return { days: decoded.days ?? [], values: decoded.values ?? [], extra: decoded.extra ?? undefined };
}

/** A number is kept; anything else (null, or a non-number a row written long ago may hold) is null. */
function setDouble(column: NullableDoubles, at: number, value: unknown): void {
  if (typeof value === 'number') {
    column.values[at] = value;
    column.valid[at] = 1;
  } else {
    column.nullCount += 1;
  }
}

function emptyBatch(rows: number, extraColumns: number): ColumnBatch {
  return {
    length: 0,
    metric: new Int32Array(rows),
    project: new Int32Array(rows),
    date: new Int32Array(rows),
    value: emptyDoubles(rows),
    extra: Array.from({ length: extraColumns }, () => emptyDoubles(rows)),
  };
}

function emptyDoubles(rows: number): NullableDoubles {
  return { values: new Float64Array(rows), valid: new Uint8Array(rows), nullCount: 0 };
}
