import type { Catalog } from '../catalog/load-catalog.js';
import type { Queryable, Store } from '../db/store.js';
import { loadProjectIds, projectKey, syncCatalog } from '../db/sync-catalog.js';
import { removePoints, upsertPoints, type PointRow, type RemovedPoint, type WriteCount } from '../db/write-points.js';
import { readRows } from './parse-rows.js';
import { validateRow, type RowCheck } from './validate-row.js';

export interface ImportProgress {
  file: string;
  /** `validate` is the first pass over the file, `write` the second. */
  phase: 'validate' | 'write';
  /** Records read so far in this phase. */
  rows: number;
}

export interface ImportOptions {
  /** Called about every 100,000 records and once at the end of each phase. */
  onProgress?: (progress: ImportProgress) => void;
  /** Aborting stops the import between records; nothing of the file is written. */
  signal?: AbortSignal;
}

export interface RowError {
  line: number;
  message: string;
}

/**
 * What importing one file did. `rows` counts the file's records, including any that a
 * later record for the same project and day replaced. `errors` holds the first
 * MAX_REPORTED_ERRORS problems in file order; `errorCount` counts them all. `badHeader`
 * says the one problem is a CSV header that is wrong or missing: no row could be read.
 */
export type ImportResult =
  | { file: string; ok: true; rows: number; seconds: number; written: WriteCount }
  | { file: string; ok: false; errors: RowError[]; errorCount: number; badHeader?: true };

/** Problems kept per file; the rest are only counted. */
export const MAX_REPORTED_ERRORS = 100;

/** Records per upsert statement. */
const BATCH_ROWS = 10_000;

/**
 * Imports one CSV or NDJSON file, all or nothing. The first pass validates every record
 * and, if any is wrong, returns the problems and writes nothing. The second pass reads
 * the file again and upserts it in one transaction, so a failure part-way (or a file
 * changed between the passes) rolls back every row of it; that error is thrown with the
 * file name in its message. A point already stored for the same project and day is
 * replaced, and within the file the last record for a project and day wins.
 */
export async function importFile(
  store: Store,
  catalog: Catalog,
  file: string,
  options: ImportOptions = {},
): Promise<ImportResult> {
  const started = performance.now();
  const progress = progressReporter(file, options.onProgress, options.signal);
  try {
    const check = await validateFile(catalog, file, progress);
    if (check.errorCount > 0)
      return {
        file,
        ok: false,
        errors: check.errors,
        errorCount: check.errorCount,
        ...(check.badHeader ? { badHeader: true } : {}),
      };
    const { rows, written } = await store.transaction((tx) => writeFile(tx, catalog, file, progress));
    return { file, ok: true, rows, seconds: (performance.now() - started) / 1000, written };
  } catch (cause) {
    if (options.signal?.aborted) throw new Error(`${file}: interrupted; nothing from this file was written`, { cause });
    throw new Error(`${file}: import failed and nothing from this file was written: ${(cause as Error).message}`, {
      cause,
    });
  }
}

/**
 * Imports files one after another, each all or nothing, and returns one result per file
 * in the order given. A file with bad records does not stop the next one; a thrown error
 * (see importFile) does, leaving the files before it imported.
 */
export async function importFiles(
  store: Store,
  catalog: Catalog,
  files: readonly string[],
  options: ImportOptions = {},
): Promise<ImportResult[]> {
  const results: ImportResult[] = [];
  for (const file of files) results.push(await importFile(store, catalog, file, options));
  return results;
}

// Private

const PROGRESS_EVERY = 100_000;

type Report = (phase: ImportProgress['phase'], rows: number, final?: boolean) => void;

function progressReporter(
  file: string,
  onProgress: ImportOptions['onProgress'],
  signal: AbortSignal | undefined,
): Report {
  return (phase, rows, final = false) => {
    if (rows % 1000 === 0) signal?.throwIfAborted();
    // The closing report is skipped when the last periodic one already gave the same count.
    const due = final ? rows === 0 || rows % PROGRESS_EVERY !== 0 : rows % PROGRESS_EVERY === 0;
    if (onProgress !== undefined && due) onProgress({ file, phase, rows });
  };
}

async function validateFile(
  catalog: Catalog,
  file: string,
  report: Report,
): Promise<{ errors: RowError[]; errorCount: number; badHeader: boolean }> {
  const errors: RowError[] = [];
  let errorCount = 0;
  let rows = 0;
  let badHeader = false;
  for await (const parsed of readRows(file)) {
    const message = 'error' in parsed ? parsed.error : errorOf(validateRow(catalog, parsed.record));
    if (message !== undefined) {
      errorCount += 1;
      if (errors.length < MAX_REPORTED_ERRORS) errors.push({ line: parsed.line, message });
    }
    // A wrong or missing CSV header is the only thing such a file yields, and not a row.
    if ('header' in parsed) badHeader = true;
    else report('validate', ++rows);
  }
  report('validate', rows, true);
  return { errors, errorCount, badHeader };
}

async function writeFile(
  tx: Queryable,
  catalog: Catalog,
  file: string,
  report: Report,
): Promise<{ rows: number; written: WriteCount }> {
  await syncCatalog(tx, catalog);
  const ids = await loadProjectIds(tx);
  // Keyed by project and day so a later record replaces an earlier one in the same batch:
  // one statement may not write the same row twice.
  let batch = new Map<string, PointRow | RemovedPoint>();
  let rows = 0;
  const written: WriteCount = { added: 0, revised: 0, removed: 0 };
  const flush = async () => {
    const values = [...batch.values()];
    add(
      written,
      await upsertPoints(
        tx,
        values.filter((r): r is PointRow => 'value' in r),
      ),
    );
    add(
      written,
      await removePoints(
        tx,
        values.filter((r) => !('value' in r)),
      ),
    );
    batch = new Map();
  };
  for await (const parsed of readRows(file)) {
    const row = toPoint(
      parsed.line,
      'error' in parsed ? { ok: false, error: parsed.error } : validateRow(catalog, parsed.record),
      ids,
    );
    batch.set(`${row.projectId}/${row.day}`, row);
    if (batch.size >= BATCH_ROWS) await flush();
    report('write', ++rows);
  }
  await flush();
  report('write', rows, true);
  return { rows, written };
}

function toPoint(line: number, check: RowCheck, ids: ReadonlyMap<string, number>): PointRow | RemovedPoint {
  if (!check.ok)
    throw new Error(
      `line ${line} passed validation but now reads as invalid (${check.error}); ` +
        `was the file changed during the import?`,
    );
  const projectId = ids.get(projectKey(check.row.metric, check.row.slug));
  if (projectId === undefined)
    throw new Error(`project ${check.row.metric}/${check.row.slug} is missing after the catalog sync`);
  const { day, value, extra } = check.row;
  return value === null ? { projectId, day } : { projectId, day, value, extra };
}

function add(total: WriteCount, more: WriteCount): void {
  total.added += more.added;
  total.revised += more.revised;
  total.removed += more.removed;
}

function errorOf(check: RowCheck): string | undefined {
  return check.ok ? undefined : check.error;
}
