import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { throwIfCancelled, type CancelSignal, type ColumnText, type Queryable, type Store } from './store.js';

/**
 * Opens the embedded PostgreSQL. `dir` is a folder (created if missing) or `memory://`.
 * PGlite runs one statement at a time, so concurrent callers simply queue.
 */
export async function openPglite(dir: string): Promise<Store> {
  if (!dir.startsWith('memory://')) mkdirSync(dir, { recursive: true });
  const db = await PGlite.create(dir);
  const over = (runner: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    // PGlite runs in this process and cannot cancel a running statement. One whose caller
    // left while it waited its turn is not run: statements queue, one at a time.
    query: async <Row extends object>(text: string, params: readonly unknown[] = [], signal?: CancelSignal) => {
      throwIfCancelled(signal);
      return (await runner.query<Row>(text, params as unknown[])).rows;
    },
    exec: async (script) => {
      await runner.exec(script);
    },
    // PGlite reads COPY input from a Blob mounted as /dev/blob.
    copyCsv: async (table, columns, csv) => {
      await runner.query(`copy ${table} (${columns.join(', ')}) from '/dev/blob' with (format csv)`, [], {
        blob: new Blob([...csv]),
      });
    },
  });
  return {
    kind: 'pglite',
    description: dir.startsWith('memory://') ? 'embedded PGlite in memory' : `embedded PGlite in ${dir}`,
    ...over(db),
    // PGlite answers in-process, so there is no network to overlap with: one batch holds every row.
    streamRaw: async function* (text: string, params: readonly unknown[], _batchRows: number, signal?: CancelSignal) {
      throwIfCancelled(signal);
      yield (await db.query<ColumnText[]>(text, params as unknown[], { rowMode: 'array' })).rows;
    },
    queryRaw: async (text: string, params: readonly unknown[], signal?: CancelSignal) => {
      throwIfCancelled(signal);
      return (await db.query<ColumnText[]>(text, params as unknown[], { rowMode: 'array' })).rows;
    },
    listen: async (channel, onMessage, onState) => {
      const stop = await db.listen(channel, onMessage);
      onState?.(true);
      return () => stop();
    },
    transaction: (work) => db.transaction((tx) => work(over(tx))),
    close: () => db.close(),
  };
}
