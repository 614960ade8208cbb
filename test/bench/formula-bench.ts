import autocannon from 'autocannon';
import postgres from 'postgres';
import { CATALOG } from '../../src/catalog/load-catalog.js';
import { fromEpochDay, toEpochDay } from '../../src/dates.js';

/** The formula the bench asks for: priority fees as a share of all fees, as priority-fee-share-pct has it. */
const P = 'priority-fees-usd';
const B = 'transaction-base-fee-total-usd';

/**
 * A two-input formula over 4 projects × 10 years daily (`/v1/formula`), beside the floor
 * reading the same raw rows (both inputs' points of the same projects and days, passed
 * through as PostgreSQL-built JSON): one line per target, 8 connections, 6 s each.
 */
export async function measureFormula(
  databaseUrl: string,
  lastDay: string,
  ports: { floor: number; service: number },
  key: string,
): Promise<string[]> {
  const slugs = CATALOG.byName.get(P)!.projects.filter((s) => CATALOG.byName.get(B)!.projects.includes(s));
  const from = fromEpochDay(toEpochDay(lastDay) - 3650 + 1);
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const ids = await sql<{ id: number; slug: string }[]>`
    select p.id, p.slug from project p join metric m on m.id = p.metric_id
    where m.name in (${P}, ${B}) and p.slug = any(${slugs}) order by m.name, p.position`;
  await sql.end();
  const floorUrl =
    `http://127.0.0.1:${ports.floor}/?ids=${ids.map((r) => r.id).join(',')}` +
    `&slugs=${ids.map((r) => r.slug).join(',')}&from=${from}&to=${lastDay}`;
  const formulaUrl =
    `http://127.0.0.1:${ports.service}/v1/formula?expr=${encodeURIComponent('100 * p / (p + b)')}` +
    `&input=p:${P}&input=b:${B}&project=${slugs.join(',')}&start_date=${from}&end_date=${lastDay}`;
  const lines: string[] = [];
  for (const [name, url, headers] of [
    ['floor (both inputs, raw rows)', floorUrl, {}],
    ['rest /v1/formula', formulaUrl, { 'x-api-key': key }],
  ] as const) {
    const check = await fetch(url, { headers });
    const size = (await check.arrayBuffer()).byteLength;
    if (check.status !== 200) throw new Error(`formula bench: ${name} answered ${check.status}`);
    const result = await autocannon({ url, headers, connections: 8, duration: 6 });
    lines.push(
      `formula 2 inputs x ${slugs.length} projects x 3650 days, ${name}, 8 connections: ` +
        `${result.requests.average.toFixed(0)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ` +
        `${size} bytes per answer, non-2xx ${result.non2xx}`,
    );
  }
  return lines;
}
