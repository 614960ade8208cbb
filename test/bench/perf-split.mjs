/**
 * `node test/bench/perf-split.mjs <perf.data> <pid> <answers> [<perf.data> <pid> <answers>]`:
 * the main thread's CPU time in a `perf record -e cpu-clock -g` profile of a Node process
 * started with `--perf-basic-prof`, in µs per answer: by where it ran (V8 and Node's native
 * code, JIT-compiled JavaScript, the kernel, libc) and by function (self time, the 40
 * largest). With two profiles (the floor's, then the service's), the 40 largest
 * differences instead. `perf` samples only while a thread is on a core, so unlike V8's own
 * profiler (whose samples fall where a thread was when it got a core back: mostly on
 * the socket writes that woke another process) it counts CPU time alone.
 * docs/benchmarks.md ("Where the cores' time goes, measured by perf") shows how the profiles are taken.
 */
import { execFileSync } from 'node:child_process';

const args = process.argv.slice(2);
if (args.length !== 3 && args.length !== 6) {
  process.stderr.write('usage: node test/bench/perf-split.mjs <perf.data> <pid> <answers> [<perf.data> <pid> <answers>]\n');
  process.exit(2);
}
const profiles = [];
for (let i = 0; i < args.length; i += 3) profiles.push(split(args[i], args[i + 1], Number(args[i + 2])));

if (profiles.length === 1) {
  const [{ total, where, functions }] = profiles;
  console.log(`main thread ${total.toFixed(1)} µs/answer`);
  for (const [name, us] of sorted(where)) console.log(`  ${name.padEnd(28)} ${us.toFixed(2)}`);
  for (const [name, us] of sorted(functions).slice(0, 40)) console.log(`${us.toFixed(2).padStart(8)}  ${name}`);
} else {
  const [a, b] = profiles;
  console.log(`main thread ${a.total.toFixed(1)} → ${b.total.toFixed(1)} µs/answer (${signed(b.total - a.total)})`);
  for (const name of new Set([...a.where.keys(), ...b.where.keys()])) {
    console.log(`  ${name.padEnd(28)} ${(a.where.get(name) ?? 0).toFixed(2)} → ${(b.where.get(name) ?? 0).toFixed(2)}`);
  }
  const names = new Set([...a.functions.keys(), ...b.functions.keys()]);
  const differences = [...names].map((name) => [name, (b.functions.get(name) ?? 0) - (a.functions.get(name) ?? 0)]);
  for (const [name, us] of differences.sort((x, y) => Math.abs(y[1]) - Math.abs(x[1])).slice(0, 40)) {
    console.log(`${signed(us).padStart(8)}  ${(a.functions.get(name) ?? 0).toFixed(2)} → ${(b.functions.get(name) ?? 0).toFixed(2)}  ${name}`);
  }
}

// Private

/** A profile's main-thread samples as µs per answer: in all, by where, and by leaf function. */
function split(file, pid, answers) {
  const text = execFileSync('perf', ['script', '-i', file, '-F', 'tid,ip,sym,dso', '--tid', pid], { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] });
  const frequency = Number(/freq[^\d]*(\d+)/.exec(execFileSync('perf', ['evlist', '-F', '-i', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }))?.[1] ?? NaN);
  if (!(frequency > 0)) throw new Error(`no sampling frequency in ${file}`);
  const usPerSample = 1e6 / frequency / answers;
  const where = new Map();
  const functions = new Map();
  let total = 0;
  // Each sample is a line with its thread id, then its frames, innermost first, each
  // indented: `address symbol (object)`.
  let leaf = true;
  for (const line of text.split('\n')) {
    if (!line.startsWith('\t')) {
      leaf = line.trim() !== '';
      continue;
    }
    if (!leaf) continue;
    leaf = false;
    const frame = /^\s*\S+\s+(.*?)\s+\((.*)\)$/.exec(line);
    const symbol = (frame?.[1] ?? line.trim()).replace(/\+0x[0-9a-f]+$/, '').replace(/^JS:[*^~+-]?/, 'JS:');
    total += usPerSample;
    add(where, placeOf(frame?.[2] ?? ''), usPerSample);
    add(functions, symbol, usPerSample);
  }
  return { total, where, functions };
}

function placeOf(object) {
  if (object.includes('kernel')) return 'kernel';
  if (/\/perf-\d+\.map$/.test(object)) return 'JavaScript (JIT)';
  if (object.endsWith('/node')) return 'V8 and Node (native)';
  if (object.includes('libc')) return 'libc';
  return 'other';
}

function add(map, key, value) {
  map.set(key, (map.get(key) ?? 0) + value);
}

function sorted(map) {
  return [...map].sort((a, b) => b[1] - a[1]);
}

function signed(value) {
  return `${value >= 0 ? '+' : ''}${value.toFixed(2)}`;
}
