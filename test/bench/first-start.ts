/**
 * `npx tsx test/bench/first-start.ts [seconds]`: a first start on an empty embedded store, as
 * `npm start` makes it (it seeds the sample data): the time from launch to the "ready" log
 * line, the server's RSS then, and its RSS `seconds` later (default 60), and the peak RSS of the
 * server and its first-start process together (sampled every 25 ms). The data directory is
 * a fresh temporary one, removed afterwards.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const waitSeconds = Number(process.argv[2] ?? 60);
const dir = mkdtempSync(join(tmpdir(), 'metrics-first-start-'));
const rssMb = (pid: number): number => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
};
/** The RSS of a process and its descendants (the server and its first-start process). */
const treeRssMb = (pid: number): number => {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {}
  return rssMb(pid) + children.reduce((sum, child) => sum + treeRssMb(child), 0);
};
const started = Date.now();
const child = spawn(process.execPath, ['scripts/run.mjs', 'src/main.ts'], {
  env: { ...process.env, PGLITE_DIR: join(dir, 'pglite'), PORT: '0', LOG_LEVEL: 'info', WORKERS: '1' },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let peak = 0;
const sampler = setInterval(() => {
  try {
    peak = Math.max(peak, treeRssMb(child.pid!));
  } catch {}
}, 25);
let out = '';
let err = '';
await new Promise<void>((resolve, reject) => {
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk;
    if (/"msg":"ready"/.test(out)) resolve();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    err += chunk;
  });
  child.on('exit', (code) => reject(new Error(`the server exited (${code}) before it was ready:\n${out}`)));
});
const readyMs = Date.now() - started;
const atReady = rssMb(child.pid!);
await new Promise((r) => setTimeout(r, waitSeconds * 1000));
const later = rssMb(child.pid!);
clearInterval(sampler);
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
rmSync(dir, { recursive: true, force: true });
process.stdout.write(
  `first start: ready in ${(readyMs / 1000).toFixed(1)} s; RSS ${atReady.toFixed(0)} MB at ready, ` +
    `${later.toFixed(0)} MB ${waitSeconds} s later, peak ${peak.toFixed(0)} MB (with its first-start process)\n` +
    `${/seeded .*/.exec(err)?.[0] ?? ''}\n${out
      .split('\n')
      .filter((l) => /worker|ready|seeded/.test(l))
      .join('\n')}\n`,
);
