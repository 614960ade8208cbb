/**
 * `node test/bench/profile-split.mjs <file.cpuprofile> <requests> [--functions]`: a V8 CPU
 * profile's time split by where it was spent (socket system calls, Node's own code and
 * native work, the driver, logging, validation, the program's own code, garbage
 * collection), in µs per request; with `--functions`, the 40 functions with the most
 * self time instead. SKIP_MS leaves out the profile's first milliseconds (start-up, warm-up).
 * docs/benchmarks.md shows how the profiles of the service and the
 * floor are taken under the same load.
 */
import { readFileSync } from 'node:fs';

const [file, requests] = [process.argv[2], Number(process.argv[3])];
if (!file || !(requests > 0)) {
  process.stderr.write('usage: node test/bench/profile-split.mjs <file.cpuprofile> <requests>\n');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const SYSCALLS = new Set(['writeBuffer', 'writev', 'writeString', 'writeUtf8String', 'writeLatin1String']);

function category({ callFrame: { functionName, url } }) {
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(garbage collector)') return 'garbage collection';
  if (SYSCALLS.has(functionName)) return 'socket writes (system calls)';
  if (url === '' || url.startsWith('node:')) return 'Node internals and native';
  if (url.includes('/node_modules/postgres/')) return 'postgres.js';
  if (url.includes('/node_modules/pino') || url.includes('/node_modules/sonic-boom/')) return 'logging (pino)';
  if (url.includes('/node_modules/zod/')) return 'validation (zod)';
  if (url.includes('/node_modules/')) return 'other libraries';
  return 'own code';
}

const byFunction = process.argv[4] === '--functions';
const functionName = ({ callFrame: { functionName: name, url, lineNumber } }) =>
  `${name || '(anonymous)'} ${url.replace(/.*\/node_modules\//, '').replace(/^file:\/\/.*?\/(dist|test)\//, '$1/')}:${lineNumber + 1}`;
const spent = new Map();
// SKIP_MS: leave out the profile's first milliseconds (start-up and warm-up), so only the measured load counts.
const skipUs = Number(process.env.SKIP_MS ?? 0) * 1000;
let at = 0;
profile.samples.forEach((id, i) => {
  at += profile.timeDeltas[i] ?? 0;
  if (at < skipUs) return;
  const name = (byFunction ? functionName : category)(nodes.get(id));
  spent.set(name, (spent.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
let busy = 0;
const sorted = [...spent].sort((a, b) => b[1] - a[1]);
for (const [name, us] of sorted) if (!name.startsWith('(idle)') && name !== 'idle') busy += us;
for (const [name, us] of byFunction ? sorted.slice(0, 40) : sorted) {
  process.stdout.write(`${name.padEnd(30)} ${(us / requests).toFixed(1).padStart(8)} µs/request\n`);
}
process.stdout.write(`${'busy (all but idle)'.padEnd(30)} ${(busy / requests).toFixed(1).padStart(8)} µs/request\n`);
