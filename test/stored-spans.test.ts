import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { toEpochDay } from '../src/dates.js';
import type { Queryable } from '../src/db/store.js';
import { createStoredSpans } from '../src/limits/stored-spans.js';

type Row = { metric: string; slug: string; first: string | null; last: string | null };

/** A store whose spans a test sets, counting each read and the series it named (undefined: all of them). */
function fakeStore(rows: Map<string, Row>) {
  const reads: (string[] | undefined)[] = [];
  let failNext = false;
  const db = {
    query: async (_text: string, params: readonly unknown[] = []) => {
      await new Promise((r) => setTimeout(r, 5));
      const [metrics, slugs] = params as [string[] | null, string[] | null];
      const named = metrics === null ? undefined : metrics.map((m, i) => `${m}/${slugs![i]}`);
      reads.push(named);
      if (failNext) {
        failNext = false;
        throw new Error('connection lost');
      }
      return named === undefined ? [...rows.values()] : named.map((key) => rows.get(key)!).filter(Boolean);
    },
  } as unknown as Queryable;
  return { db, reads, fail: () => (failNext = true) };
}

const row = (slug: string, first: string | null, last: string | null): [string, Row] => [
  `m/${slug}`,
  { metric: 'm', slug, first, last },
];

describe('stored spans', () => {
  it('reads every series when listening starts, and again only when it restarts', async () => {
    const rows = new Map([row('a', '2020-01-01', '2026-06-30'), row('b', null, null)]);
    const { db, reads } = fakeStore(rows);
    const spans = createStoredSpans(db, pino({ enabled: false }));
    expect(spans.of('m', 'a')).toBeUndefined();

    spans.listening(true);
    spans.listening(true); // every announced write says "listening" too
    await spans.settled();
    expect(reads).toEqual([undefined]);
    expect(spans.of('m', 'a')).toEqual({ first: toEpochDay('2020-01-01'), last: toEpochDay('2026-06-30') });
    expect(spans.of('m', 'b')).toBeUndefined();
    expect(spans.generation).toBe(1);

    spans.listening(false);
    spans.listening(true);
    await spans.settled();
    expect(reads).toEqual([undefined, undefined]);
    expect(spans.generation).toBe(1); // nothing changed, so nothing priced again
  });

  it(
    'reads a written series alone, several announced during a read in the ' + 'next one, and forgets an emptied one',
    async () => {
      const rows = new Map([
        row('a', '2020-01-01', '2026-06-30'),
        row('b', '2021-01-01', '2026-06-30'),
        row('c', '2022-01-01', '2026-06-30'),
      ]);
      const { db, reads } = fakeStore(rows);
      const spans = createStoredSpans(db, pino({ enabled: false }));
      spans.listening(true);
      await spans.settled();

      rows.set(...row('a', '1950-01-01', '2026-06-30'));
      spans.written('m', 'a');
      rows.set(...row('b', null, null));
      spans.written('m', 'b');
      spans.written('m', 'c');
      spans.written('m', 'b');
      await spans.settled();

      expect(reads).toEqual([undefined, ['m/a'], ['m/b', 'm/c']]);
      expect(spans.of('m', 'a')).toEqual({ first: toEpochDay('1950-01-01'), last: toEpochDay('2026-06-30') });
      expect(spans.of('m', 'b')).toBeUndefined();
      expect(spans.of('m', 'c')).toEqual({ first: toEpochDay('2022-01-01'), last: toEpochDay('2026-06-30') });
      expect(spans.generation).toBe(3);
    },
  );

  it('keeps the spans it had when a read fails, and reads again at the next announced write', async () => {
    const rows = new Map([row('a', '2020-01-01', '2026-06-30')]);
    const { db, reads, fail } = fakeStore(rows);
    const spans = createStoredSpans(db, pino({ enabled: false }));
    spans.listening(true);
    await spans.settled();

    rows.set(...row('a', '1990-01-01', '2026-06-30'));
    fail();
    spans.written('m', 'a');
    await spans.settled();
    expect(spans.of('m', 'a')?.first).toBe(toEpochDay('2020-01-01'));

    spans.written('m', 'a');
    await spans.settled();
    expect(spans.of('m', 'a')?.first).toBe(toEpochDay('1990-01-01'));
    expect(reads).toEqual([undefined, ['m/a'], ['m/a']]);
  });
});
