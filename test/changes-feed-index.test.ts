import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { changesRequestSchema, encodeCursor, validateChangesRequest } from '../src/changes/changes-request.js';
import { readChanges, type ChangesPage } from '../src/changes/read-changes.js';
import { canonicalInstant } from '../src/dates.js';
import { migrate } from '../src/db/migrate.js';
import type { Queryable, Store } from '../src/db/store.js';
import { loadProjectIds, projectKey, syncCatalog } from '../src/db/sync-catalog.js';
import { STORE_KINDS, type StoreUnderTest } from './support/stores.js';

/**
 * A changes-feed page reads the rows it serves and no more, wherever `since` and the cursor
 * fall in a long change log: its statements are run under EXPLAIN ANALYZE, with the plan the
 * server picks for the values and with the generic plan a prepared statement may switch to,
 * and no scan of the log may read more rows than the page holds. The pages themselves are
 * compared with the feed's definition: every change written at or after `since`, after the
 * cursor, in sequence order.
 */

const CHANGES = 100_000;
/** Changes per write time: a transaction stamps all its writes with one time. */
const PER_WRITE = 100;
/** The first change of the last write. */
const LAST_WRITE = CHANGES - PER_WRITE + 1;
const LOG_START = Date.parse('2026-01-01T00:00:00Z');
const LIMIT = 1000;
const SCHEMA = changesRequestSchema({ since: 'since', limit: 'limit', cursor: 'cursor' });
/** An instant after every change of the log. */
const AFTER_ALL = '2026-06-30T00:00:00Z';

interface Statement {
  text: string;
  params: readonly unknown[];
}

interface RecordedPage {
  page: ChangesPage;
  statements: Statement[];
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** The instant of the `n`th change (from 1), as the feed writes instants. */
function writeTime(n: number): string {
  return new Date(LOG_START + Math.floor((n - 1) / PER_WRITE) * 1000).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`changes feed over a long log on ${kind.name}`, { timeout: 180_000 }, () => {
    let opened: StoreUnderTest;
    let store: Store;

    beforeAll(async () => {
      opened = await kind.open();
      store = opened.store;
      await migrate(store);
      await syncCatalog(store, CATALOG);
      const metric = CATALOG.metrics[0]!;
      const projectId = (await loadProjectIds(store)).get(projectKey(metric.name, metric.projects[0]!))!;
      await store.exec(`insert into point_change (project_id, day, value, extra, written_at)
        select ${projectId}, date '2020-01-01' + (i % 2000), i, null,
          timestamptz '${new Date(LOG_START).toISOString()}' + ((i - 1) / ${PER_WRITE}) * interval '1 second'
        from generate_series(1, ${CHANGES}) i order by i;
        analyze point_change`);
    });
    afterAll(async () => {
      await opened?.dispose();
    });

    /** Reads a page, keeping the statements it sent. */
    const readPage = async (input: { since?: string; cursor?: string }): Promise<RecordedPage> => {
      const statements: Statement[] = [];
      const recording: Queryable = {
        query: (text, params = [], signal) => {
          statements.push({ text, params });
          return store.query(text, params, signal);
        },
        exec: (script) => store.exec(script),
        copyCsv: (table, columns, csv) => store.copyCsv(table, columns, csv),
      };
      const page = await readChanges(recording, validateChangesRequest(SCHEMA, { ...input, limit: LIMIT }));
      return { page, statements };
    };

    /** Scans of the change log in a statement's plan, and the rows each read; `generic`: the plan for any values. */
    const logScans = async (statement: Statement, generic: boolean): Promise<{ node: string; read: number }[]> => {
      const plan = await store.transaction(async (tx) => {
        const explain = `explain (analyze, format json) ${generic ? 'execute feed_page' : statement.text}`;
        if (!generic) return explained(await tx.query(explain, statement.params));
        await tx.query(`set local plan_cache_mode = force_generic_plan`);
        await tx.query(`prepare feed_page as ${statement.text}`);
        const values = statement.params.map(literal).join(', ');
        const rows = await tx.query(`${explain}(${values})`);
        await tx.query('deallocate feed_page');
        return explained(rows);
      });
      const scans: { node: string; read: number }[] = [];
      const visit = (node: PlanNode) => {
        if (node['Relation Name'] === 'point_change') {
          const read = (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0)) * node['Actual Loops'];
          scans.push({ node: node['Node Type'], read });
        }
        for (const child of node.Plans ?? []) visit(child);
      };
      visit(plan);
      return scans;
    };

    /** The page by the feed's definition, as `readChanges` would serve it. */
    const expectedChanges = async (since: string, after: number): Promise<number[]> => {
      const rows = await store.query<{ value: string }>(
        `select trim_scale(value)::text as value from point_change
         where written_at >= $1::text::timestamptz and seq > $2::bigint order by seq limit $3`,
        [since, after, LIMIT],
      );
      return rows.map((r) => Number(r.value));
    };

    /** `expected`: the first and last change (by value) the page serves, or null for an empty page. */
    const cases: { name: string; since: string; cursorAfter?: number; expected: [number, number] | null }[] = [
      { name: 'since after every write (a client polling for what lands)', since: AFTER_ALL, expected: null },
      { name: 'since the last write, to the microsecond', since: writeTime(CHANGES), expected: [LAST_WRITE, CHANGES] },
      { name: 'a recent since, first page', since: writeTime(60_001), expected: [60_001, 61_000] },
      { name: 'a recent since, next page', since: writeTime(60_001), cursorAfter: 61_000, expected: [61_001, 62_000] },
      { name: 'a forged cursor far behind its since', since: AFTER_ALL, cursorAfter: 1, expected: null },
      { name: 'a since before the log, first page', since: '2025-01-01T00:00:00Z', expected: [1, 1000] },
    ];

    for (const c of cases) {
      it(`reads only the rows it serves: ${c.name}`, async () => {
        const cursor = c.cursorAfter === undefined ? undefined : cursorAt(c.since, c.cursorAfter);
        const { page, statements } = await readPage(cursor === undefined ? { since: c.since } : { cursor });

        const values = page.changes.map((change) => Number(change.value));
        const [first, last] = c.expected ?? [0, -1];
        expect(values).toEqual(Array.from({ length: last - first + 1 }, (_, i) => first + i));
        expect(values).toEqual(await expectedChanges(c.since, c.cursorAfter ?? 0));
        expect(page.changes[0]?.updatedAt).toBe(c.expected === null ? undefined : writeTime(first));
        expect(page.next === undefined).toBe(last === CHANGES || c.expected === null);

        expect(statements.length).toBeGreaterThan(0);
        for (const statement of statements) {
          for (const generic of [false, true]) {
            const scans = await logScans(statement, generic);
            const tooMany = scans.filter((scan) => scan.read > LIMIT + 1);
            expect(tooMany, `${generic ? 'generic' : 'custom'} plan: ${JSON.stringify(scans)}`).toEqual([]);
          }
        }
      });
    }
  });
}

// Private

/** A cursor as the feed hands it out after the change numbered `seq`. */
function cursorAt(since: string, seq: number): string {
  return encodeCursor({ since: canonicalInstant(since)!, seq: String(seq) });
}

function literal(value: unknown): string {
  return typeof value === 'number' ? String(value) : `'${String(value).replace(/'/g, "''")}'`;
}

/** The plan's root from EXPLAIN (FORMAT JSON), which a store hands back as text or parsed. */
function explained(rows: object[]): PlanNode {
  const value = Object.values(rows[0]!)[0];
  const parsed = (typeof value === 'string' ? JSON.parse(value) : value) as { Plan: PlanNode }[];
  return parsed[0]!.Plan;
}
