import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { removePoints, upsertPoints } from '../src/db/write-points.js';
import { projectId, projectIds as idsOf } from './support/project-id.js';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/**
 * The changes feed: every write in write order, paged by cursors that neither skip nor
 * repeat a write while other transactions write, commit late, roll back and delete. The
 * feed is checked against what the writers themselves recorded, not against the SQL.
 */

const METRIC = 'staking-apy';
const SLUGS = CATALOG.byName.get(METRIC)!.projects.slice(0, 3);

interface FeedRow {
  metric: string;
  project: string;
  date: string;
  value: number | null;
  updatedAt: string;
}
interface FeedPage {
  changes: FeedRow[];
  next?: string;
  cursor: string;
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`changes feed on ${kind.name}`, { timeout: 120_000 }, () => {
    let service: TestService;
    let projectIds: Map<string, number>;
    let start: string;

    const dbNow = async (): Promise<string> => {
      const [row] = await service.running.services.store.query<{ now: string }>(
        `select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as now`,
      );
      return row!.now;
    };
    const page = async (query: string): Promise<FeedPage> => {
      const res = await service.get(`/v1/changes?${query}`);
      expect(res.status, await res.clone().text()).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      return (await res.json()) as FeedPage;
    };
    /** Follows cursors from `since` until no page says more remain; returns every row and the resume cursor. */
    const drain = async (first: string, limit: number): Promise<{ rows: FeedRow[]; cursor: string }> => {
      const rows: FeedRow[] = [];
      let current = await page(`${first}&limit=${limit}`);
      for (;;) {
        expect(current.changes.length).toBeLessThanOrEqual(limit);
        rows.push(...current.changes);
        if (current.next === undefined) return { rows, cursor: current.cursor };
        expect(current.changes).toHaveLength(limit);
        current = await page(`cursor=${current.next}&limit=${limit}`);
      }
    };
    const write = (slug: string, day: string, value: number) =>
      upsertPoints(service.running.services.store, [{ projectId: projectIds.get(slug)!, day, value, extra: null }]);

    beforeAll(async () => {
      service = await startTestService(kind);
      projectIds = await idsOf(service.running.services.store, METRIC);
      start = await dbNow();
    });
    afterAll(async () => {
      await service?.stop();
    });

    it('starts empty: sample data is not a change', async () => {
      const first = await page(`since=2000-01-01`);
      expect(first.changes).toEqual([]);
      expect(first.next).toBeUndefined();
      expect(typeof first.cursor).toBe('string');
    });

    it('lists every write in write order, a value written twice twice, a removal as null, exact decimals', async () => {
      await write(SLUGS[0]!, '2026-07-01', 1.5);
      await write(SLUGS[1]!, '2026-07-01', 2);
      await write(SLUGS[0]!, '2026-07-01', 1.25);
      await removePoints(service.running.services.store, [
        { projectId: projectIds.get(SLUGS[1]!)!, day: '2026-07-01' },
      ]);
      await write(SLUGS[2]!, '2026-07-02', 0.1234567890123);
      const res = await service.get(`/v1/changes?since=${encodeURIComponent(start)}`);
      const text = await res.text();
      expect(text).toContain('"value":0.1234567890123');
      expect(text).not.toContain('"extra"'); // a metric without extra fields: entries as they always were
      const { changes } = JSON.parse(text) as FeedPage;
      expect(changes.map(({ project, date, value }) => [project, date, value])).toEqual([
        [SLUGS[0], '2026-07-01', 1.5],
        [SLUGS[1], '2026-07-01', 2],
        [SLUGS[0], '2026-07-01', 1.25],
        [SLUGS[1], '2026-07-01', null],
        [SLUGS[2], '2026-07-02', 0.1234567890123],
      ]);
      expect(new Set(changes.map((c) => c.metric))).toEqual(new Set([METRIC]));
      const times = changes.map((c) => c.updatedAt);
      for (const t of times) expect(t).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
      expect([...times].sort()).toEqual(times);
      expect(times[0]! >= start).toBe(true);
      // since filters by write time: from the third write's instant on, the first two are gone.
      const later = await page(`since=${encodeURIComponent(times[2]!)}`);
      expect(later.changes.map((c) => c.value)).toEqual([1.25, null, 0.1234567890123]);
    });

    it('pages with next only while more remain; a cursor resumes after new writes', async () => {
      const all = await drain(`since=${encodeURIComponent(start)}`, 2);
      expect(all.rows).toHaveLength(5);
      const twoPages = await page(`since=${encodeURIComponent(start)}&limit=5`);
      expect(twoPages.next).toBeUndefined();
      expect(twoPages.changes).toEqual(all.rows);
      // Nothing new: the resume cursor gives an empty page; a later write is all the next one holds.
      expect((await page(`cursor=${all.cursor}`)).changes).toEqual([]);
      await write(SLUGS[2]!, '2026-07-03', 7);
      const resumed = await page(`cursor=${all.cursor}`);
      expect(resumed.changes.map((c) => [c.project, c.date, c.value])).toEqual([[SLUGS[2], '2026-07-03', 7]]);
      // The same since with the cursor is accepted; another since is not.
      expect((await page(`since=${encodeURIComponent(start)}&cursor=${all.cursor}`)).changes).toHaveLength(1);
    });

    it(
      'loses and repeats nothing while concurrent transactions write, commit ' + 'out of order, roll back and delete',
      async () => {
        const since = await dbNow();
        const store = service.running.services.store;
        // What committed transactions wrote, recorded by the writers: [slug, day, value|null].
        const committed: [string, string, number | null][] = [];
        let writing = true;
        let seed = 7;
        const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
        const writer = async (id: number) => {
          for (let n = 0; n < 12; n++) {
            const slug = SLUGS[id % SLUGS.length]!;
            const days = new Set<string>();
            const count = 1 + Math.floor(random() * 4);
            for (let i = 0; i < count; i++)
              days.add(`2026-08-${String(1 + Math.floor(random() * 9)).padStart(2, '0')}`);
            // Values are unique, so no write repeats the stored value (which would change nothing);
            // a removal follows a write of the same day in the same transaction, so it always removes a point.
            const writes: [string, string, number | null][] = [];
            for (const [i, day] of [...days].entries()) {
              writes.push([slug, day, id * 1000 + n * 10 + i + 0.5]);
              if (random() < 0.25) writes.push([slug, day, null]);
            }
            const rollback = random() < 0.15;
            const hold = Math.floor(random() * 30);
            try {
              await store.transaction(async (tx) => {
                // An id first and the writes later, as an import that stages its rows does: transactions
                // that began earlier commit later, and the feed must still not skip them.
                await tx.query('select pg_current_xact_id()');
                await sleep(hold);
                for (const [s, day, value] of writes) {
                  if (value === null) await removePoints(tx, [{ projectId: projectIds.get(s)!, day }]);
                  else await upsertPoints(tx, [{ projectId: projectIds.get(s)!, day, value, extra: null }]);
                }
                if (rollback) throw new Error('rolled back on purpose');
              });
              committed.push(...writes);
            } catch (error) {
              if (!rollback) throw error;
            }
          }
        };
        const reader = async (): Promise<FeedRow[]> => {
          const rows: FeedRow[] = [];
          let cursor: string | undefined;
          for (;;) {
            const stillWriting = writing;
            const current = await page(
              cursor === undefined ? `since=${encodeURIComponent(since)}&limit=3` : `cursor=${cursor}&limit=3`,
            );
            rows.push(...current.changes);
            cursor = current.next ?? current.cursor;
            if (!stillWriting && current.next === undefined) return rows;
            if (current.next === undefined) await sleep(5);
          }
        };
        const reading = reader();
        await Promise.all([0, 1, 2, 3].map(writer));
        writing = false;
        const seen = await reading;

        // Every change the feed shows happened, none is missing and none repeated: the same multiset.
        const key = (slug: string, day: string, value: number | null) => `${slug} ${day} ${value}`;
        expect(committed.length).toBeGreaterThan(40);
        expect(seen.map((c) => key(c.project, c.date, c.value)).sort()).toEqual(
          committed.map(([s, d, v]) => key(s, d, v)).sort(),
        );
        // The feed's last word on each day is what is stored now.
        const last = new Map(seen.map((c) => [`${c.project} ${c.date}`, c.value]));
        for (const slug of SLUGS) {
          const res = await service.get(
            `/v1/metrics/${METRIC}?project=${slug}&start_date=2026-08-01&end_date=2026-08-09`,
          );
          const stored = ((await res.json()) as Record<string, { date: string; value: number }[]>)[slug]!;
          for (const [k, v] of last)
            if (k.startsWith(`${slug} `))
              expect(stored.find((p) => p.date === k.slice(slug.length + 1))?.value ?? null).toBe(v);
        }
      },
    );

    it('answers the same rows over GraphQL, with endCursor and hasNextPage', async () => {
      const rest = await drain(`since=${encodeURIComponent(start)}`, 1000);
      const query =
        `query ($since: DateTime!, $after: String) { changes(since: $since, first: ` +
        `4, after: $after) { changes { name project slug date value updatedAt } ` +
        `endCursor hasNextPage } }`;
      const since = new Date(Date.parse(start) - 1).toISOString(); // DateTime has milliseconds: one before start
      const rows: { slug: string; date: string; value: number | null; updatedAt: string; name: string }[] = [];
      let after: string | undefined;
      for (;;) {
        const res = await service.graphql(query, { since, after });
        const body = (await res.json()) as {
          data: { changes: { changes: typeof rows; endCursor: string; hasNextPage: boolean } };
        };
        expect(body.data.changes.changes.length).toBeLessThanOrEqual(4);
        rows.push(...body.data.changes.changes);
        after = body.data.changes.endCursor;
        if (!body.data.changes.hasNextPage) break;
      }
      expect(rows.map((r) => [r.slug, r.date, r.value, r.updatedAt])).toEqual(
        rest.rows.map((r) => [r.project, r.date, r.value, r.updatedAt]),
      );
      expect(new Set(rows.map((r) => r.name))).toEqual(new Set(['staking_apy']));
      const wrong = await service.graphql(`{ changes(since: "2026-01-01T00:00:00Z", first: 0) { hasNextPage } }`);
      const errors = ((await wrong.json()) as { errors: { message: string; extensions: { code: string } }[] }).errors;
      expect(errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
      expect(errors[0]!.message).toMatch(/first: expected a whole number from 1 to 10000/);
    });

    it('refuses bad parameters with problems naming them', async () => {
      const cursor = (await page(`since=2026-01-01`)).cursor;
      const cases: [string, RegExp][] = [
        ['', /since: give the instant to start from/],
        [
          'since=yesterday',
          /since: expected an RFC 3339 instant such as 2026-06-30T12:00:00Z \(in UTC, within the years 0001-9999\), or a date YYYY-MM-DD meaning the start of that UTC day; got "yesterday"/,
        ],
        // An offset that moves the instant out of the years 0001 to 9999 (PostgreSQL's) was a 500.
        [
          'since=0001-01-01T00:00:00%2B01:00',
          /since: expected an RFC 3339 instant .*\(in UTC, within the years 0001-9999\).*; got "0001-01-01T00:00:00\+01:00"/,
        ],
        ['since=2026-01-01&limit=0', /limit: expected a whole number from 1 to 10000/],
        ['since=2026-01-01&limit=10001', /limit: expected a whole number from 1 to 10000/],
        ['since=2026-01-01&limit=abc', /limit: expected a whole number/],
        ['cursor=not-a-cursor', /cursor: not a cursor this feed handed out/],
        [`cursor=${Buffer.from('{"v":1,"since":"x","x":"1","s":"1"}').toString('base64url')}`, /cursor: not a cursor/],
        // A position past PostgreSQL's bigint (19 digits, but above 9223372036854775807) was a 500.
        [
          `cursor=${Buffer.from('{"v":1,"since":"2026-01-01T00:00:00.000000Z","s":"9223372036854775808"}').toString('base64url')}`,
          /cursor: not a cursor this feed handed out/,
        ],
        [
          `since=2026-02-01&cursor=${cursor}`,
          /cursor: this cursor continues the feed since 2026-01-01T00:00:00.000000Z/,
        ],
        ['since=2026-01-01&until=2026-02-01', /unknown parameter "until"/],
      ];
      for (const [query, message] of cases) {
        const res = await service.get(`/v1/changes?${query}`);
        expect(res.status, query).toBe(400);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(((await res.json()) as { detail: string }).detail, query).toMatch(message);
      }
      const anonymous = await service.get('/v1/changes?since=2026-01-01', { key: null });
      expect(anonymous.status).toBe(401);
    });

    it(
      'carries the extra fields written with a value, so a revision of an extra ' + 'field alone shows what changed',
      async () => {
        const since = await dbNow();
        const id = await projectId(service.running.services.store, 'etf-num-products', 'blackrock');
        const store = service.running.services.store;
        await upsertPoints(store, [
          { projectId: id, day: '2026-10-01', value: '5', extra: '{"spot": 2, "futures": 1, "leveraged": 2}' },
        ]);
        await upsertPoints(store, [
          { projectId: id, day: '2026-10-01', value: '5', extra: '{"spot": 3, "futures": 1, "leveraged": 1}' },
        ]);
        await removePoints(store, [{ projectId: id, day: '2026-10-01' }]);

        const text = await (await service.get(`/v1/changes?since=${encodeURIComponent(since)}`)).text();
        const entries = [...text.matchAll(/\{"metric":"etf-num-products"[^{}]*(?:\{[^{}]*\}[^{}]*)?\}/g)].map((m) =>
          m[0].replace(/"updatedAt":"[^"]+"/, '"updatedAt":"…"'),
        );
        expect(entries).toEqual([
          '{"metric":"etf-num-products","project":"blackrock","date":"2026-10-01","value":5,"extra":{"spot": ' +
            '2, "futures": 1, "leveraged": 2},"updatedAt":"…"}',
          '{"metric":"etf-num-products","project":"blackrock","date":"2026-10-01","value":5,"extra":{"spot": ' +
            '3, "futures": 1, "leveraged": 1},"updatedAt":"…"}',
          '{"metric":"etf-num-products","project":"blackrock","date":"2026-10-01","value":null,"updatedAt":"…"}',
        ]);

        const res = await service.graphql(`{ changes(since: "${since}") { changes { name value extra } } }`);
        const body = (await res.json()) as {
          data: { changes: { changes: { name: string; value: number | null; extra: unknown }[] } };
        };
        expect(body.data.changes.changes).toEqual([
          { name: 'etf_num_products', value: 5, extra: { spot: 2, futures: 1, leveraged: 2 } },
          { name: 'etf_num_products', value: 5, extra: { spot: 3, futures: 1, leveraged: 1 } },
          { name: 'etf_num_products', value: null, extra: null },
        ]);
      },
    );

    it('gives GraphQL the digits REST gives, also of a value a double cannot hold', async () => {
      const since = await dbNow();
      await upsertPoints(service.running.services.store, [
        { projectId: projectIds.get(SLUGS[0]!)!, day: '2026-09-01', value: '0.1234567890123456789', extra: null },
        { projectId: projectIds.get(SLUGS[1]!)!, day: '2026-09-01', value: '9007199254740993', extra: null },
      ]);
      const valuesOf = (json: string) => [...json.matchAll(/"value":(-?[0-9][0-9.eE+-]*|null)/g)].map((m) => m[1]);

      const rest = valuesOf(await (await service.get(`/v1/changes?since=${encodeURIComponent(since)}`)).text());
      const graphql = valuesOf(
        await (await service.graphql(`{ changes(since: "${since}") { changes { value } } }`)).text(),
      );

      expect(rest).toEqual(['0.1234567890123456789', '9007199254740993']);
      expect(graphql).toEqual(rest);
    });
  });
}
