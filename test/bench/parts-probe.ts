/**
 * `npx tsx test/bench/parts-probe.ts`: the request lifecycle's small parts timed alone, warm,
 * a million calls each: the request id (`randomUUID`), the `/metrics` request count and
 * latency histogram (prom-client, as src/ops/prometheus.ts keeps them) and the text of the
 * request log line (as src/log.ts builds it). docs/benchmarks.md compares these with what
 * the service's CPU profile shows for them.
 */
import { randomUUID } from 'node:crypto';
import { Counter, Histogram, Registry } from 'prom-client';

const CALLS = 1_000_000;
const registry = new Registry();
const requests = new Counter({ name: 'requests', help: 'requests', labelNames: ['route', 'method', 'status'], registers: [registry] });
const latency = new Histogram({ name: 'latency', help: 'latency', labelNames: ['route'], registers: [registry] });
const counted = requests.labels('/v1/metrics/:name', 'GET', '200');
const timed = latency.labels('/v1/metrics/:name');

let sink = '';
const parts: [string, () => void][] = [
  ['request id (randomUUID)', () => { sink = randomUUID(); }],
  ['request count and latency histogram', () => { counted.inc(); timed.observe(0.0031); }],
  ['request log line text', () => {
    sink = `{"level":30,"time":${Date.now()},"requestId":${JSON.stringify('383e8419-4db5-4d33-93a7-e2f80cf8f45b')},"method":${JSON.stringify('GET')},"route":${JSON.stringify('/v1/metrics/:name')},"status":${200},"ms":${3.123},"msg":"request"}\n`;
  }],
];
for (const [name, call] of parts) {
  for (let i = 0; i < CALLS / 5; i += 1) call(); // warm: compiled before it is timed
  const started = performance.now();
  for (let i = 0; i < CALLS; i += 1) call();
  console.log(`${name.padEnd(38)} ${(((performance.now() - started) * 1000) / CALLS).toFixed(3)} µs per call`);
}
if (sink.length === 0) throw new Error('unreachable: keeps the calls from being optimised away');
