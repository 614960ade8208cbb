import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports.js';

const run = promisify(execFile);

/** The PostgreSQL server binaries of this machine, or undefined where there are none. */
export const POSTGRES_BIN: string | undefined = (() => {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const version = readdirSync(root).sort().at(-1);
  const bin = version === undefined ? undefined : join(root, version, 'bin');
  return bin !== undefined && existsSync(join(bin, 'initdb')) ? bin : undefined;
})();

/**
 * A PostgreSQL cluster of a test's own, in a temporary folder on a free port, that the
 * test may stop, kill and start at will without touching the shared server.
 */
export interface PrivatePostgres {
  url: string;
  port: number;
  start(): Promise<void>;
  /** `fast` disconnects clients and shuts down cleanly; `immediate` is a crash. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /**
   * SIGSTOP (`true`) or SIGCONT (`false`) to the server and its processes: a host that hangs, or a network that drops
   * every packet.
   */
  freeze(frozen: boolean): Promise<void>;
  /**
   * Freezes it and thaws it after `ms` whatever happens, so code with no bound of its own
   * waits that long and no longer (and a failing test leaves no frozen server); the function
   * it gives thaws it at once.
   */
  freezeAtMost(ms: number): Promise<() => Promise<void>>;
  destroy(): Promise<void>;
}

/**
 * A private cluster of its own (`initdb`), or with `standbyOf` a streaming standby of
 * another one (`pg_basebackup -R`): read-only, replaying what the primary writes.
 */
export async function createPrivatePostgres(standbyOf?: PrivatePostgres): Promise<PrivatePostgres> {
  if (POSTGRES_BIN === undefined) throw new Error('no PostgreSQL server binaries on this machine');
  const dir = await mkdtemp(join(tmpdir(), 'metrics-pg-'));
  const data = join(dir, 'data');
  const port = await freePort();
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    // initdb refuses to run as root: the cluster belongs to the postgres user.
    await chown(dir, uidOf('postgres'), gidOf('postgres'));
    await chmod(dir, 0o700);
  }
  const pg = (tool: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', join(POSTGRES_BIN!, tool), ...args])
      : run(join(POSTGRES_BIN!, tool), args);
  if (standbyOf === undefined)
    await pg('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  else
    await pg('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(standbyOf.port),
      '-U',
      'postgres',
      '-D',
      data,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
      '--no-sync',
    ]);
  const options =
    `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} ` +
    `-c fsync=off -c max_connections=50`;
  const start = async () => {
    await pg('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '30', 'start']);
  };
  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    await pg('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '30', 'stop']);
  };
  const freeze = async (frozen: boolean) => {
    const signal = frozen ? 'SIGSTOP' : 'SIGCONT';
    const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    await run('pkill', [`--signal=${signal}`, '-P', String(postmaster)]).catch(() => {});
    process.kill(postmaster, signal);
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start,
    stop,
    freeze,
    freezeAtMost: async (ms) => {
      // Armed first: a freeze that fails part-way is undone too.
      const thaw = setTimeout(() => void freeze(false), ms);
      await freeze(true);
      return async () => {
        clearTimeout(thaw);
        await freeze(false);
      };
    },
    destroy: async () => {
      await stop('immediate').catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}

// Private

function uidOf(user: string): number {
  return Number(requireLine(`/etc/passwd`, user)[2]);
}

function gidOf(user: string): number {
  return Number(requireLine(`/etc/passwd`, user)[3]);
}

function requireLine(file: string, name: string): string[] {
  const line = readFileSync(file, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  if (line === undefined) throw new Error(`no ${name} in ${file}`);
  return line.split(':');
}

/**
 * A TCP proxy to `targetPort` on this machine that can be severed: then it forwards
 * nothing either way and closes nothing, as a network partition does (connections look
 * open, every packet is lost), until it is mended; what was held back flows then.
 */
export interface SeverableProxy {
  port: number;
  sever(severed: boolean): void;
  close(): Promise<void>;
}

export async function createSeverableProxy(targetPort: number): Promise<SeverableProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let severed = false;
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    if (severed) for (const socket of pair) socket.pause();
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  const port = await new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  );
  return {
    port,
    sever(on) {
      severed = on;
      for (const pair of pairs) for (const socket of pair) on ? socket.pause() : socket.resume();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const pair of pairs) for (const socket of pair) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
