/**
 * `npx tsx test/bench/memory-probe.ts [build…]`: the resident memory of a fresh service at
 * each step of the bench's 76x3650 memory run: after start, after the 3 s warm-up with the
 * 3x365 REST request, after 8 s of the 76x3650 REST request at 1 connection, and the peak
 * during 8 s of it at 8 connections (the figure `npm run bench` reports as growth from the
 * step before). Builds are service entry points (default dist/src/main.js, after `npm run
 * build`); name an older commit's build to compare, or `floor` for a fresh floor
 * (floor-server.ts) through the same steps with its own URLs. Uses the bench database
 * (bench-database.ts).
 *
 * BUFFERS=1 runs each process with buffer-sampler.mjs, which forces a full collection
 * every second: it adds, for the 8-connection step, the most bytes held in ArrayBuffers
 * just before a collection and the most just after (what was garbage waiting for one,
 * and what was in use). The collections lower the peak, so that run's RSS is not the bench's.
 *
 * GRAPHQL=1 then takes the service through the bench's GraphQL 76x3650 steps (1 connection,
 * then the peak at 8), after REST's on the same process, as `npm run bench` does.
 */
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { BENCH_KEY, BENCH_SERVER_URL, benchServiceEnv, ensureBenchDatabase } from './bench-database.js';
import { sampleRss, servicePort, startChild, startFloor } from './processes.js';
import { SHAPES, targetsFor } from './shapes.js';

const builds = process.argv.length > 2 ? process.argv.slice(2) : ['dist/src/main.js'];
const db = await ensureBenchDatabase(BENCH_SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const BUFFER_LOG = join(tmpdir(), `metrics-buffers-${process.pid}.log`);
const sampling = process.env.BUFFERS === '1';
const withGraphql = process.env.GRAPHQL === '1';
const env = {
  ...benchServiceEnv(db),
  ...(sampling
    ? { NODE_OPTIONS: `--expose-gc --import ${new URL('buffer-sampler.mjs', import.meta.url).pathname}`, BUFFER_LOG }
    : {}),
};
const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
for (const build of builds) {
  const isFloor = build === 'floor';
  const service = isFloor ? await startFloor(env, false) : await startChild(build, env, servicePort);
  rmSync(BUFFER_LOG, { force: true });
  try {
    const started = service.rss();
    const ports = { floor: service.port, service: service.port };
    const pick = isFloor ? 0 : 1;
    const largest = targetsFor(SHAPES.find((s) => s.name === '76x3650')!, db.lastDay, db.projectIds, ports, BENCH_KEY)[
      pick
    ]!;
    const small = targetsFor(SHAPES.find((s) => s.name === '3x365')!, db.lastDay, db.projectIds, ports, BENCH_KEY)[
      pick
    ]!;
    await autocannon({ url: small.url, headers: small.headers, connections: 8, duration: 3 });
    const warmed = service.rss();
    await autocannon({ url: largest.url, headers: largest.headers, connections: 1, duration: 8 });
    const before = service.rss();
    const sampler = sampleRss(service);
    const from = Date.now();
    const result = await autocannon({ url: largest.url, headers: largest.headers, connections: 8, duration: 8 });
    const peak = sampler.stop();
    console.log(
      `${build}: RSS ${mb(started)} MB after start, ${mb(warmed)} after the ` +
        `3x365 warm-up, ${mb(before)} after 1 connection, peak ${mb(peak)} at 8 ` +
        `connections (growth ${mb(peak - before)} MB; ${result.requests.total} ` +
        `answers, non-2xx ${result.non2xx})${sampling ? buffersSince(from) : ''}`,
    );
    if (withGraphql && !isFloor) {
      // GraphQL's steps follow REST's on the same process, as in `npm run bench`.
      const graphql = targetsFor(
        SHAPES.find((s) => s.name === '76x3650')!,
        db.lastDay,
        db.projectIds,
        ports,
        BENCH_KEY,
      )[2]!;
      const request = {
        url: graphql.url,
        method: graphql.method,
        headers: graphql.headers,
        body: graphql.body,
        duration: 8,
      };
      await autocannon({ ...request, connections: 1 });
      const graphqlBefore = service.rss();
      const graphqlSampler = sampleRss(service);
      const graphqlFrom = Date.now();
      const answered = await autocannon({ ...request, connections: 8 });
      const graphqlPeak = graphqlSampler.stop();
      console.log(
        `${build}, graphql after it: RSS ${mb(graphqlBefore)} MB after 1 connection, ` +
          `peak ${mb(graphqlPeak)} at 8 connections (growth ${mb(graphqlPeak - graphqlBefore)} ` +
          (`MB; ${answered.requests.total} answers, non-2xx ${answered.non2xx}` +
            `)${sampling ? buffersSince(graphqlFrom) : ''}`),
      );
    }
  } finally {
    await service.stop();
  }
}
rmSync(BUFFER_LOG, { force: true });

/**
 * `; ArrayBuffers at most X MB before a forced full collection, Y MB after`, from buffer-sampler.mjs' lines since
 * `from`.
 */
function buffersSince(from: number): string {
  const samples = readFileSync(BUFFER_LOG, 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split(' ').map(Number))
    .filter(([at]) => at! >= from);
  const most = (i: number) => Math.max(...samples.map((s) => s[i]!));
  return (
    `; ArrayBuffers at most ${mb(most(1))} MB before a forced full collection, ${mb(most(2))} ` +
    `MB after (${samples.length} collections)`
  );
}
