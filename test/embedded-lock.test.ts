import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimEmbeddedStore, readHolder, StoreHeldError } from '../src/db/embedded-lock.js';
import { npm } from './support/processes.js';

const LOCK_MODULE = new URL('../src/db/embedded-lock.ts', import.meta.url).pathname;

/** A separate process that claims `folder` as a command and holds it until killed. */
async function holdInChild(folder: string): Promise<ChildProcess> {
  const script =
    `import('${LOCK_MODULE}').then(({ claimEmbeddedStore }) => { claimEmbeddedStore(${JSON.stringify(folder)}, ` +
    `'command', 'holder'); console.log('held'); setInterval(() => {}, 1000); ` +
    `})`;
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the holding process exited (${code}) before claiming ${folder}`)));
  });
  return child;
}

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
      expect(() => claimEmbeddedStore(folder, 'command', 'npm run import')).toThrow(
        `the embedded store ${folder} is held by process ${process.pid} (npm start)`,
      );
      // Only its user may read the secret.
      expect((await stat(claim.path)).mode & 0o777).toBe(0o600);
      expect(readHolder(folder)).toMatchObject({ pid: process.pid, role: 'server', secret: claim.holder.secret });
    } finally {
      claim.release();
    }
    expect(existsSync(claim.path)).toBe(false);
    claimEmbeddedStore(folder, 'command', 'again').release();
  });

  it(
    'announces its port in an owner file only its user may read, even with ' +
      "a readable file planted under the side file's name",
    async () => {
      const folder = join(dir, 'planted');
      const claim = claimEmbeddedStore(folder, 'server', 'npm start');
      try {
        // What someone else could leave beforehand in a folder they may write to.
        await writeFile(`${claim.path}.${process.pid}`, 'planted', { mode: 0o644 });
        claim.announce(4321);
        expect((await stat(claim.path)).mode & 0o777).toBe(0o600);
        expect(readHolder(folder)).toMatchObject({ pid: process.pid, controlPort: 4321, secret: claim.holder.secret });
        expect(existsSync(`${claim.path}.${process.pid}`)).toBe(false);
      } finally {
        claim.release();
      }
    },
  );

  it('takes over a claim left by a process that has ended', async () => {
    const folder = join(dir, 'b');
    const ended = spawn(process.execPath, ['-e', '0']);
    await new Promise((resolve) => ended.once('exit', resolve));
    await writeFile(
      `${folder}.owner.json`,
      JSON.stringify({ pid: ended.pid, role: 'server', label: 'npm start', controlPort: 1 }),
    );
    const claim = claimEmbeddedStore(folder, 'command', 'npm run keys');
    expect(JSON.parse(await readFile(claim.path, 'utf8'))).toMatchObject({ pid: process.pid, role: 'command' });
    claim.release();
  });

  it(
    "takes over a claim naming this process's own id, left by an earlier process " +
      "with that id (a container's PID 1 after a kill)",
    async () => {
      const folder = join(dir, 'own-id');
      // What a server killed in a container leaves: its id, which the restarted server has again.
      await writeFile(
        `${folder}.owner.json`,
        JSON.stringify({ pid: process.pid, role: 'server', label: 'a metrics server', controlPort: 1, secret: 's' }),
      );
      const claim = claimEmbeddedStore(folder, 'server', 'a metrics server');
      try {
        expect(JSON.parse(await readFile(claim.path, 'utf8'))).toMatchObject({
          pid: process.pid,
          secret: claim.holder.secret,
        });
      } finally {
        claim.release();
      }
    },
  );

  it('takes over a claim naming a live process that started after the claim was made (its id was reused)', async () => {
    const folder = join(dir, 'reused-id');
    const holder = await holdInChild(folder);
    try {
      const written = JSON.parse(await readFile(`${folder}.owner.json`, 'utf8')) as { pid: number; started: string };
      expect(written.pid).toBe(holder.pid);
      // The same id, but the claim was made by a process that started a tick earlier.
      const [boot, ticks] = written.started.split('/');
      await writeFile(`${folder}.owner.json`, JSON.stringify({ ...written, started: `${boot}/${Number(ticks) - 1}` }));
      const claim = claimEmbeddedStore(folder, 'command', 'npm run keys');
      expect(JSON.parse(await readFile(claim.path, 'utf8'))).toMatchObject({ pid: process.pid, role: 'command' });
      claim.release();
    } finally {
      holder.kill();
    }
  }, 30_000);

  it('leaves the folder to a live process that started when its claim says', async () => {
    const folder = join(dir, 'same-instance');
    const holder = await holdInChild(folder);
    try {
      const written = JSON.parse(await readFile(`${folder}.owner.json`, 'utf8')) as { started: string };
      // Field 22 of /proc/<pid>/stat, read here independently of the code under test.
      const stat = await readFile(`/proc/${holder.pid}/stat`, 'utf8');
      expect(written.started.split('/')[1]).toBe(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[19]);
      expect(() => claimEmbeddedStore(folder, 'command', 'npm run keys')).toThrow(
        `is held by process ${holder.pid} (holder)`,
      );
    } finally {
      holder.kill();
    }
  }, 30_000);

  it(
    'judges a claim made in another pid namespace by liveness alone, as a ' + "container's server seen from its host",
    async () => {
      const folder = join(dir, 'other-namespace');
      // There this id belongs to a server that runs; here it names another live process
      // (vitest's), which started at another time: in this namespace that would be a reused id.
      await writeFile(
        `${folder}.owner.json`,
        JSON.stringify({
          pid: process.ppid,
          pidNamespace: 'pid:[1]',
          host: 'a-container',
          started: 'another-boot/1',
          role: 'server',
          label: 'npm start',
        }),
      );
      expect(() => claimEmbeddedStore(folder, 'command', 'npm run keys')).toThrow(
        `is held by process ${process.ppid} (npm start)`,
      );
    },
  );

  it(
    "takes over a claim naming this process's own id and host name from another " +
      'pid namespace, as a restarted container finds it',
    async () => {
      const folder = join(dir, 'restarted-container');
      await writeFile(
        `${folder}.owner.json`,
        JSON.stringify({
          pid: process.pid,
          pidNamespace: 'pid:[1]',
          host: hostname(),
          started: 'a-boot/1',
          role: 'server',
          label: 'a metrics server',
        }),
      );
      const claim = claimEmbeddedStore(folder, 'server', 'a metrics server');
      expect(JSON.parse(await readFile(claim.path, 'utf8'))).toMatchObject({
        pid: process.pid,
        secret: claim.holder.secret,
      });
      claim.release();
    },
  );

  it(
    "refuses a claim naming this process's own id from another host name and " +
      'pid namespace, and says which file to delete if that host is gone',
    async () => {
      const folder = join(dir, 'recreated-container');
      // A container recreated after a hard stop: from in here it looks like a live second container.
      await writeFile(
        `${folder}.owner.json`,
        JSON.stringify({
          pid: process.pid,
          pidNamespace: 'pid:[1]',
          host: 'an-older-container',
          started: 'a-boot/1',
          role: 'server',
          label: 'npm start',
        }),
      );
      expect(() => claimEmbeddedStore(folder, 'server', 'npm start')).toThrow(
        `is held by process ${process.pid} (npm start) on host an-older-container; ` +
          `if nothing there serves this folder any more (a container recreated after ` +
          `a hard stop), delete ${folder}.owner.json`,
      );
    },
  );

  it('lets only one of many simultaneous claimants win', async () => {
    const folder = join(dir, 'c');
    const script =
      `import('${LOCK_MODULE}').then(({ claimEmbeddedStore }) => {
      try { claimEmbeddedStore(${JSON.stringify(folder)}, 'command', ` +
      `'racer'); console.log('won'); setTimeout(() => {}, 1500); }
      catch { console.log('lost'); }
    })`;
    const outcomes = await Promise.all(
      Array.from(
        { length: 6 },
        () =>
          new Promise<string>((resolve) => {
            const child = spawn(process.execPath, ['--import', 'tsx', '-e', script]);
            let out = '';
            child.stdout.on('data', (b: Buffer) => (out += b.toString()));
            child.once('exit', () => resolve(out.trim()));
          }),
      ),
    );
    expect(outcomes.filter((o) => o === 'won')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'lost')).toHaveLength(5);
  }, 30_000);

  it('refuses a command at once when the server holding the folder does not ' +
    'answer, naming it and what to do', async () => {
    const folder = join(dir, 'd');
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    // This test's own process stands in for a server that holds the folder but has hung.
    await writeFile(
      `${folder}.owner.json`,
      JSON.stringify({ pid: process.pid, role: 'server', label: 'npm start', controlPort: closedPort, secret: 's' }),
    );
    const run = await npm('keys', ['list'], { PGLITE_DIR: folder });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(
      `the embedded store ${folder} is held by process ${process.pid} (npm start), which does not answer`,
    );
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
      expect(run.stderr).toContain(
        `is held by process ${process.pid} (npm run import); wait for it to finish, then run this again`,
      );
    } finally {
      claim.release();
    }
  }, 30_000);
});
