/**
 * `npx tsx test/bench/memory-probe.ts [build…]`: the resident memory of a fresh service at
 * each step of the bench's 76x3650 memory run: after start, after the 3 s warm-up with the
 * 3x365 REST request, after 8 s of the 76x3650 REST request at 1 connection, and the peak
 * during 8 s of it at 8 connections (the figure `npm run bench` reports as growth from the
 * step before). Builds are service entry points (default dist/src/main.js, after `npm run
 * build`); name an older commit's build to compare. Uses the bench database (bench-database.ts).
 */
import autocannon from 'autocannon';
import { BENCH_KEY, BENCH_SERVER_URL, benchServiceEnv, ensureBenchDatabase } from './bench-database.js';
import { sampleRss, servicePort, startChild } from './processes.js';
import { SHAPES, targetsFor } from './shapes.js';

const builds = process.argv.length > 2 ? process.argv.slice(2) : ['dist/src/main.js'];
const db = await ensureBenchDatabase(BENCH_SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const env = benchServiceEnv(db);
const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
for (const build of builds) {
  const service = await startChild(build, env, servicePort);
  try {
    const started = service.rss();
    const ports = { floor: 0, service: service.port };
    const [, largest] = targetsFor(SHAPES.find((s) => s.name === '76x3650')!, db.lastDay, db.projectIds, ports, BENCH_KEY);
    const [, small] = targetsFor(SHAPES.find((s) => s.name === '3x365')!, db.lastDay, db.projectIds, ports, BENCH_KEY);
    await autocannon({ url: small!.url, headers: small!.headers, connections: 8, duration: 3 });
    const warmed = service.rss();
    await autocannon({ url: largest!.url, headers: largest!.headers, connections: 1, duration: 8 });
    const before = service.rss();
    const sampler = sampleRss(service);
    const result = await autocannon({ url: largest!.url, headers: largest!.headers, connections: 8, duration: 8 });
    const peak = sampler.stop();
    console.log(`${build}: RSS ${mb(started)} MB after start, ${mb(warmed)} after the 3x365 warm-up, ${mb(before)} after 1 connection, peak ${mb(peak)} at 8 connections (growth ${mb(peak - before)} MB; ${result.requests.total} answers, non-2xx ${result.non2xx})`);
  } finally {
    await service.stop();
  }
}
