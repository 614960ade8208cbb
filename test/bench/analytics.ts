/**
 * Bench rows of cross-project analytics (`npm run bench -- --shape analytics`), each beside
 * the floor reading the same raw rows: a monthly SUM total of the bench metric over its 76
 * fund issuers and ten years (the floor: those 76 × 3,650 daily points), and a ranking of the
 * 76 over the last year against the year before (the floor: 76 × 730 points). Reported, not
 * gating.
 */
import autocannon from 'autocannon';
import { CATALOG } from '../../src/catalog/load-catalog.js';
import { fromEpochDay, toEpochDay } from '../../src/dates.js';
import { BENCH_KEY, type BenchDatabase } from './bench-database.js';
import { servicePort, startChild, startFloor } from './processes.js';
import { BENCH_METRIC } from './shapes.js';

/** Timed rounds per target, alternating, and seconds per round; each figure is the rounds' median. */
const ROUNDS = 3;
const SECONDS = 5;
const CONNECTIONS = 8;

export async function measureAnalytics(
  env: Record<string, string>,
  db: BenchDatabase,
  log: (line: string) => void,
): Promise<string[]> {
  const slugs = CATALOG.byName.get(BENCH_METRIC)!.projects;
  const last = toEpochDay(db.lastDay);
  const daysBack = (n: number) => fromEpochDay(last - n + 1);
  const floor = await startFloor(env, false);
  const service = await startChild('src/main.ts', env, servicePort);
  const lines: string[] = [];
  try {
    const floorUrl = (days: number) =>
      `http://127.0.0.1:${floor.port}/?ids=${db.projectIds.join(',')}&slugs=${slugs.join(',')}` +
      `&from=${daysBack(days)}&to=${db.lastDay}`;
    const serviceUrl = (path: string) => `http://127.0.0.1:${service.port}${path}`;
    const pairs = [
      {
        what: `monthly sum total of 76 issuers x 3650 days`,
        service: serviceUrl(
          `/v1/totals/${BENCH_METRIC}?project=${slugs.join(',')}&interval=month&op=sum` +
            `&start_date=${daysBack(3650)}&end_date=${db.lastDay}`,
        ),
        floor: floorUrl(3650),
      },
      {
        what: 'ranking of 76 issuers over 365 days against the previous 365',
        service: serviceUrl(
          `/v1/rank/${BENCH_METRIC}?project=${slugs.join(',')}&start_date=${daysBack(365)}&end_date=${db.lastDay}&top=76`,
        ),
        floor: floorUrl(730),
      },
    ];
    for (const pair of pairs) {
      const targets: { name: string; url: string; headers: Record<string, string> }[] = [
        { name: 'floor', url: pair.floor, headers: {} },
        { name: 'rest', url: pair.service, headers: { 'x-api-key': BENCH_KEY } },
      ];
      const sizes = new Map<string, number>();
      for (const t of targets) {
        const res = await fetch(t.url, { headers: t.headers });
        const body = await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`${t.name} answered ${res.status} for ${pair.what}`);
        sizes.set(t.name, body.byteLength);
        await autocannon({ url: t.url, headers: t.headers, connections: CONNECTIONS, duration: 2 });
      }
      const runs = new Map<string, autocannon.Result[]>(targets.map((t) => [t.name, []]));
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const t of round % 2 === 0 ? targets : [...targets].reverse())
          runs
            .get(t.name)!
            .push(await autocannon({ url: t.url, headers: t.headers, connections: CONNECTIONS, duration: SECONDS }));
      }
      const figure = (name: string) => {
        const results = runs.get(name)!;
        const mid = (pick: (r: autocannon.Result) => number) =>
          [...results.map(pick)].sort((a, b) => a - b)[Math.floor(results.length / 2)]!;
        return { rps: mid((r) => r.requests.average), p50: mid((r) => r.latency.p50), p99: mid((r) => r.latency.p99) };
      };
      const f = figure('floor');
      const r = figure('rest');
      lines.push(
        `${pair.what}, ${CONNECTIONS} connections: rest ${r.rps.toFixed(1)} req/s (p50 ${r.p50} ms, p99 ${r.p99} ms, ` +
          `${sizes.get('rest')} bytes) beside the floor reading the same raw rows ${f.rps.toFixed(1)} req/s ` +
          `(p50 ${f.p50} ms, p99 ${f.p99} ms, ${sizes.get('floor')} bytes): ${(r.rps / f.rps).toFixed(2)} x floor`,
      );
      log(lines.at(-1)!);
    }
  } finally {
    await Promise.all([floor.stop(), service.stop()]);
  }
  return lines;
}
