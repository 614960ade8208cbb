// The round trips of a streamed answer's declared cursor (begin, a setting, the declaration,
// a FETCH, commit) against a statement alone, on one connection: µs per answer of a small
// statement, so what is timed is the round trips, not the rows. A third way sends the
// setting and the declaration together (postgres.js pipelines queries issued at once).
// BENCH_DATABASE_URL (else postgres://postgres@127.0.0.1:5432/postgres), ROUNDS (3), N (2000).
import postgres from 'postgres';

const sql = postgres(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', { max: 1, fetch_types: false });
const text = 'select g as n from generate_series(1, 10) g';
const rounds = Number(process.env.ROUNDS ?? 3);
const n = Number(process.env.N ?? 2000);

const alone = () => sql.unsafe(text, [], { prepare: true }).raw();
const declared = (together) => sql.begin('read only', async (tx) => {
  const setting = () => tx.unsafe('set local cursor_tuple_fraction = 1');
  const declaration = () => tx.unsafe(`declare batches no scroll cursor for ${text}`, [], { prepare: true });
  if (together) await Promise.all([setting(), declaration()]);
  else {
    await setting();
    await declaration();
  }
  await tx.unsafe('fetch 100 from batches').raw();
});
const ways = [['statement alone', alone], ['declared cursor', () => declared(false)], ['declared, setting and declaration together', () => declared(true)]];

for (let round = 1; round <= rounds; round++) {
  for (const [name, answer] of ways) {
    for (let i = 0; i < n / 10; i++) await answer();
    const started = performance.now();
    for (let i = 0; i < n; i++) await answer();
    console.log(`round ${round}: ${name} ${Math.round(((performance.now() - started) / n) * 1000)} µs per answer`);
  }
}
await sql.end();
