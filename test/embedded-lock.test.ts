import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimEmbeddedStore, readHolder, StoreHeldError } from '../src/db/embedded-lock.js';
import { npm } from './support/processes.js';

describe('one process at a time on an embedded store folder', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'metrics-lock-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('claims a folder whose parent does not exist yet, as on a fresh clone', () => {
    const folder = join(dir, 'not-yet', 'pglite');
    const claim = claimEmbeddedStore(folder, 'server', 'npm start');
    try {
      expect(claim.path).toBe(`${folder}.owner.json`);
      expect(readHolder(folder)).toMatchObject({ pid: process.pid, role: 'server' });
    } finally {
      claim.release();
    }
  });

  it('gives the folder to one claimant and names it to the next', async () => {
    const folder = join(dir, 'a');
    const claim = claimEmbeddedStore(folder, 'server', 'npm start');
    try {
      expect(() => claimEmbeddedStore(folder, 'command', 'npm run import')).toThrow(StoreHeldError);
      expect(() => claimEmbeddedStore(folder, 'command', 'npm run import')).toThrow(`the embedded store ${folder} is held by process ${process.pid} (npm start)`);
      // Only its user may read the secret.
      expect((await stat(claim.path)).mode & 0o777).toBe(0o600);
      expect(readHolder(folder)).toMatchObject({ pid: process.pid, role: 'server', secret: claim.holder.secret });
    } finally {
      claim.release();
    }
    expect(existsSync(claim.path)).toBe(false);
    claimEmbeddedStore(folder, 'command', 'again').release();
  });

  it('takes over a claim left by a process that has ended', async () => {
    const folder = join(dir, 'b');
    const ended = spawn(process.execPath, ['-e', '0']);
    await new Promise((resolve) => ended.once('exit', resolve));
    await writeFile(`${folder}.owner.json`, JSON.stringify({ pid: ended.pid, role: 'server', label: 'npm start', controlPort: 1 }));
    const claim = claimEmbeddedStore(folder, 'command', 'npm run keys');
    expect(JSON.parse(await readFile(claim.path, 'utf8'))).toMatchObject({ pid: process.pid, role: 'command' });
    claim.release();
  });

  it('lets only one of many simultaneous claimants win', async () => {
    const folder = join(dir, 'c');
    const script = `import('${new URL('../src/db/embedded-lock.ts', import.meta.url).pathname}').then(({ claimEmbeddedStore }) => {
      try { claimEmbeddedStore(${JSON.stringify(folder)}, 'command', 'racer'); console.log('won'); setTimeout(() => {}, 1500); }
      catch { console.log('lost'); }
    })`;
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => new Promise<string>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', '-e', script]);
      let out = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      child.once('exit', () => resolve(out.trim()));
    })));
    expect(outcomes.filter((o) => o === 'won')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'lost')).toHaveLength(5);
  }, 30_000);

  it('refuses a command at once when the server holding the folder does not answer, naming it and what to do', async () => {
    const folder = join(dir, 'd');
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    // This test's own process stands in for a server that holds the folder but has hung.
    await writeFile(`${folder}.owner.json`, JSON.stringify({ pid: process.pid, role: 'server', label: 'npm start', controlPort: closedPort, secret: 's' }));
    const run = await npm('keys', ['list'], { PGLITE_DIR: folder });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`the embedded store ${folder} is held by process ${process.pid} (npm start), which does not answer`);
    expect(run.stderr).toContain(`stop that process (Ctrl-C in its terminal, or kill ${process.pid})`);
    expect(run.ms).toBeLessThan(10_000);
    expect(existsSync(folder)).toBe(false); // nothing was opened or created
  }, 30_000);

  it('refuses a command at once while another command holds the folder', async () => {
    const folder = join(dir, 'e');
    const claim = claimEmbeddedStore(folder, 'command', 'npm run import');
    try {
      const run = await npm('keys', ['list'], { PGLITE_DIR: folder });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`is held by process ${process.pid} (npm run import); wait for it to finish, then run this again`);
    } finally {
      claim.release();
    }
  }, 30_000);
});
