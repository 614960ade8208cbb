/**
 * The physical floor for Node on this query: node:http + postgres.js, one prepared
 * statement whose result is the finished response text, passed straight through. No
 * auth, no validation. Query string: ?ids=1,2,3&slugs=a,b,c&from=YYYY-MM-DD&to=YYYY-MM-DD
 */
import { createServer } from 'node:http';
import postgres from 'postgres';
import { REST_SERIES_SQL } from '../../src/db/read-series.js';

const sql = postgres(process.env.DATABASE_URL!, { max: 10, prepare: true, onnotice: () => {} });
const BODY_SQL = `select '{' || string_agg(to_json(s.slug)::text || ':' || s.points, ',') || '}' as body from (${REST_SERIES_SQL}) as s`;

const server = createServer(async (req, res) => {
  const q = new URL(req.url ?? '/', 'http://floor').searchParams;
  try {
    const [row] = await sql.unsafe(BODY_SQL, [`{${q.get('ids')}}`, q.get('from'), q.get('to'), `{${q.get('slugs')}}`], { prepare: true });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(row?.body as string);
  } catch (error) {
    res.writeHead(500).end(String(error));
  }
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stderr.write(`floor listening on ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => void sql.end().then(() => process.exit(0))));
