/**
 * The floor: the fastest honest way Node can answer the bench's request, built with every
 * technique the service itself uses and nothing else. node:http and postgres.js with the
 * service's pool size and statement (src/series/series-sql.ts), one row per project read as
 * raw bytes (no strings are made of the points), written straight to the socket: whole,
 * with a length and without a copy, when the answer fits one batch of 30,000 points, else streamed a few
 * projects per cursor round trip, under the service's heap setting (src/start/heap-tuning.ts).
 * No key, no validation, no rate limit, no logging.
 *
 * With FLOOR_GRAPHQL_HISTORY=1 (set by the bench when its service answers the graphql rows
 * on the same pool as the rest rows), each of the floor's connections first runs the
 * GraphQL statement too, so the floor's PostgreSQL sessions have the history the
 * service's have (see {@link runGraphqlStatementOnEveryConnection}).
 *
 * Query string: ?ids=1,2,3&slugs=a,b,c&from=YYYY-MM-DD&to=YYYY-MM-DD
 */
import { createServer, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import postgres from 'postgres';
import { seriesStatement } from '../../src/series/series-sql.js';
import { tuneHeap } from '../../src/start/heap-tuning.js';

/** The service's DATABASE_POOL_SIZE default and its points per streamed batch (src/rest/metric-route.ts). */
const POOL_SIZE = Number(process.env.DATABASE_POOL_SIZE ?? 10);
const POINTS_PER_BATCH = 30_000;

// The service's heap setting: the floor's own collections are as rare as the service's.
tuneHeap();
const sql = postgres(process.env.DATABASE_URL!, {
  max: POOL_SIZE,
  prepare: true,
  fetch_types: false,
  onnotice: () => {},
});
const OPTIONS = { interval: 'day', aggregation: 'avg', fill: 'none', transform: null, window: null } as const;
const { text: SQL, parameters } = seriesStatement({ layout: 'rest', options: OPTIONS, extraFields: [], asOf: false });
/** The statement behind the bench's GraphQL query (`points { date value }`). */
const GRAPHQL = seriesStatement({
  layout: { graphql: ['date', 'value'] },
  options: OPTIONS,
  extraFields: [],
  asOf: false,
});
let history: Promise<void> | undefined;
let historyDone = process.env.FLOOR_GRAPHQL_HISTORY !== '1';

const server = createServer((req, res) => {
  const prepared = prepare(req.url ?? '/');
  const answer = historyDone
    ? respond(res, prepared)
    : (history ??= runGraphqlStatementOnEveryConnection(prepared.graphqlParams)).then(() => {
        historyDone = true;
        return respond(res, prepared);
      });
  answer.catch((error: unknown) => {
    if (!res.headersSent) res.writeHead(500).end(String(error));
    else res.destroy();
  });
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stderr.write(`floor listening on ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => void sql.end().then(() => process.exit(0))));

/**
 * A request's parameters, kept per raw URL as the service keeps its prepared requests
 * (src/rest/prepared-requests.ts): the bench repeats one URL, and parsing it afresh each
 * time would make the floor slower than the fastest honest server.
 */
function prepare(url: string): Prepared {
  let found = PREPARED.get(url);
  if (found === undefined) {
    const q = new URL(url, 'http://floor').searchParams;
    const slugs = q.get('slugs')!.split(',');
    const days = (Date.parse(q.get('to')!) - Date.parse(q.get('from')!)) / 86_400_000 + 1;
    const query = {
      projectIds: q.get('ids')!.split(',').map(Number),
      slugs,
      from: q.get('from'),
      to: q.get('to'),
      metric: '',
      options: OPTIONS,
      asOf: null,
    };
    const literals = (values: unknown[]) => values.map((p) => (Array.isArray(p) ? `{${p.join(',')}}` : p));
    found = {
      params: literals(parameters(query)),
      graphqlParams: literals(GRAPHQL.parameters(query)),
      slugCount: slugs.length,
      perBatch: Math.max(1, Math.floor(POINTS_PER_BATCH / days)),
    };
    if (PREPARED.size >= 1000) PREPARED.clear();
    PREPARED.set(url, found);
  }
  return found;
}

function respond(res: ServerResponse, { params, slugCount, perBatch }: Prepared): Promise<void> {
  return slugCount <= perBatch ? whole(res, params) : streamed(res, params, perBatch);
}

interface Prepared {
  params: unknown[];
  graphqlParams: unknown[];
  slugCount: number;
  perBatch: number;
}

const PREPARED = new Map<string, Prepared>();

/**
 * Runs the GraphQL statement on the pool's connections (ten times as many as it has), once,
 * before the first answer. PostgreSQL runs the REST statement 3-4% slower in a session that has also
 * run the GraphQL one (and 3% faster in one that has run a monthly REST one), measured
 * with the statements alone (docs/performance.md, "What a session ran before"). The
 * service's sessions answer both, so without this the floor's
 * sessions, which run one statement only, gave it those 3-4% for free.
 */
async function runGraphqlStatementOnEveryConnection(params: unknown[]): Promise<void> {
  // As many at once as the pool has connections, so the driver opens and uses every one.
  await Promise.all(
    Array.from({ length: POOL_SIZE }, async () => {
      for (let i = 0; i < 10; i += 1) await sql.unsafe(GRAPHQL.text, params as never[], { prepare: true }).raw();
    }),
  );
}

/**
 * The parts are written as they are in one corked write, as the service does
 * (src/http/send-json.ts): a copy into one buffer per answer is more memory for the
 * collector to account for, not less work. The driver's arrays are emptied once read, as
 * the service empties them (src/series/read-series.ts, toRows).
 */
async function whole(res: ServerResponse, params: unknown[]): Promise<void> {
  const rows = (await sql.unsafe(SQL, params as never[], { prepare: true }).raw()) as unknown as Buffer[][];
  const parts: Buffer[] = [];
  let length = 0;
  for (const [i, row] of rows.entries()) {
    const key = keyBytes(String(row[1]))[i === 0 ? 0 : 1];
    parts.push(key, row[4]!);
    length += key.length + row[4]!.length;
    row.length = 0;
  }
  const end = rows.length === 0 ? EMPTY_OBJECT : CLOSING_BRACE;
  rows.length = 0;
  parts.push(end);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': length + end.length });
  res.cork();
  for (const part of parts) res.write(part);
  res.end();
  res.uncork();
}

/** `{"slug":` and `,"slug":` as bytes, made once per slug as the service makes them. */
function keyBytes(slug: string): [Buffer, Buffer] {
  let both = KEY_BYTES.get(slug);
  if (both === undefined) {
    both = [Buffer.from(`{${JSON.stringify(slug)}:`), Buffer.from(`,${JSON.stringify(slug)}:`)];
    KEY_BYTES.set(slug, both);
  }
  return both;
}

const KEY_BYTES = new Map<string, [Buffer, Buffer]>();
const EMPTY_OBJECT = Buffer.from('{}');
const CLOSING_BRACE = Buffer.from('}');

async function streamed(res: ServerResponse, params: unknown[], perBatch: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json' });
  const query = sql.unsafe(SQL, params as never[], { prepare: true }).raw();
  // A client that leaves mid-stream ends the loop, which closes the cursor: a cursor left
  // waiting for a drain that never comes holds its pooled connection for good, and a load
  // generator closing 32 connections at the end of a run once left the floor with no
  // connection at all. As in the service (src/db/open-postgres.ts), no cancel is sent: a
  // cancel arriving after the loop had ended hit the next request's statement.
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  let separator = '{';
  try {
    for await (const rows of query.cursor(perBatch) as unknown as AsyncIterable<Buffer[][]>) {
      for (const row of rows) {
        res.write(`${separator}${JSON.stringify(String(row[1]))}:`);
        const points = row[4]!;
        row.length = 0; // emptied once read, as in whole()
        if (!res.write(points)) await once(res, 'drain', { signal: gone.signal });
        separator = ',';
      }
      rows.length = 0;
    }
  } catch (error) {
    if (gone.signal.aborted) return;
    throw error;
  }
  res.end(separator === '{' ? '{}' : '}');
}
