/**
 * `npx tsx test/bench/hooks.ts [--store pglite|postgres]`: webhook delivery figures for
 * docs/performance.md. A service in this process (HOOKS_ALLOW_PRIVATE=on) delivers to a
 * receiver on loopback: the latency from a commit's end to the receipt of its event
 * (p50, p99 over 100 commits, one at a time), then the time to drain a backlog of 10,000
 * events to one receiver, written while the hook was paused: as 10,000 commits (10,000
 * deliveries) and as one commit (10 deliveries of 1,000 events). Postgres needs
 * TEST_DATABASE_URL (a scratch database is made and dropped).
 */
import { parseArgs } from 'node:util';
import { commit, createHook } from '../support/hook-writes.js';
import { startReceiver } from '../support/hook-receiver.js';
import { until } from '../support/poll.js';
import { startTestService } from '../support/service.js';
import { STORE_KINDS } from '../support/stores.js';

const { values } = parseArgs({
  options: { store: { type: 'string', default: 'postgres' }, backlog: { type: 'string', default: '10000' } },
});
const BACKLOG = Number(values.backlog);
const kind = STORE_KINDS.find((k) => k.name === values.store)!;
const service = await startTestService(kind, { HOOKS_ALLOW_PRIVATE: 'on', LOG_LEVEL: 'warn' });
const PRICE = 'token-price-usd';
const day = (n: number) => new Date(Date.UTC(2030, 0, 1) + n * 86_400_000).toISOString().slice(0, 10);

try {
  // Latency: one commit at a time, timed from the commit's end to the receipt.
  const receiver = await startReceiver();
  await createHook(service, {
    url: receiver.url,
    filter: { metrics: [PRICE], projects: ['ethereum'] },
    rules: [{ type: 'landed' }],
  });
  const latencies: number[] = [];
  for (let i = 0; i < (BACKLOG < 10_000 ? 20 : 110); i += 1) {
    await commit(service, [[PRICE, 'ethereum', day(i), i]]);
    const committed = Date.now();
    await until('the event', () => receiver.received.length === i + 1, { everyMs: 1 });
    if (i >= 10) latencies.push(receiver.received[i]!.at - committed); // the first 10 warm up
  }
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;
  console.log(
    `latency over ${latencies.length} commits: p50 ${pct(50)} ms, p99 ${pct(99)} ms, max ${latencies.at(-1)} ms`,
  );
  await receiver.close();

  for (const [label, commits] of [
    [`${BACKLOG} commits of one event`, BACKLOG],
    [`one commit of ${BACKLOG} events`, 1],
  ] as const) {
    const backlog = await startReceiver();
    const slug = commits === 1 ? 'solana' : 'arbitrum';
    const hook = await createHook(service, {
      url: backlog.url,
      filter: { metrics: [PRICE], projects: [slug] },
      rules: [{ type: 'landed' }],
    });
    await service.get(`/v1/hooks/${hook.id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ active: false }),
    });
    const perCommit = BACKLOG / commits;
    for (let c = 0; c < commits; c += 1)
      await commit(
        service,
        Array.from(
          { length: perCommit },
          (_, i) => [PRICE, slug, day(c * perCommit + i), 1] as [string, string, string, number],
        ),
      );
    const started = Date.now();
    await service.get(`/v1/hooks/${hook.id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ active: true }),
    });
    const events = () =>
      backlog.received.reduce((n, r) => n + (JSON.parse(r.body) as { events: unknown[] }).events.length, 0);
    const progress = setInterval(
      () => console.log(`  ${backlog.received.length} deliveries after ${(Date.now() - started) / 1000} s`),
      5000,
    );
    await until('the backlog', () => events() === BACKLOG, { withinMs: 600_000, everyMs: 50 });
    clearInterval(progress);
    const seconds = (Date.now() - started) / 1000;
    console.log(
      `backlog, ${label}: ${backlog.received.length} deliveries in ${seconds.toFixed(1)} s, ` +
        `${Math.round(BACKLOG / seconds)} events/s, ${Math.round(backlog.received.length / seconds)} deliveries/s`,
    );
    await backlog.close();
  }
} finally {
  await service.stop();
}
