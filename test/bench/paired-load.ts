/**
 * Two targets loaded in turn in short slices (a few hundred ms each), so both meet the
 * same machine: on the bench's two shared cores the speed of everything (the CPU time
 * PostgreSQL and Node spend on one request) drifts by ±15% over a few seconds, the same
 * for every process (docs/performance.md, "Paired slices"), and targets timed seconds
 * apart see different machines. Each slice loads one target alone with all connections,
 * as the rotation's rounds do; only the grain is finer.
 *
 * A minimal HTTP/1.1 client on kept-alive sockets, opened once per target: autocannon
 * opens its sockets afresh per run and ends a run on its next one-second tick, too coarse
 * for slices. It sends the target's request and reads the answer's length from its head
 * (both targets answer 3x365 whole, with a content-length), counting body bytes without
 * keeping them.
 */
import { connect, type Socket } from 'node:net';
import { cpuUs, machineCpuUs, postgresCpuUs } from './processes.js';
import type { Target } from './shapes.js';

export interface PairedResult {
  /** Answers counted from each target, and their rate over all its slices. */
  requests: [number, number];
  rps: [number, number];
  /** Per pair of adjacent slices, the second target's rate over the first's. */
  pairRatios: number[];
  /**
   * With `pids`: µs per request, while each target was loaded, of its process's CPU, of
   * PostgreSQL's, of every other process's and the kernel's (the load generator's, mostly),
   * and of the machine's cores sitting idle. The four add up to the cores' time per answer.
   */
  cpu?: { process: [number, number]; postgres: [number, number]; other: [number, number]; idle: [number, number] };
}

/**
 * Loads `a` and `b` in alternating slices of `sliceMs`, `pairs` times each, in the order
 * a b, b a, a b, … (so a steady drift favours neither), with `connections` sockets per
 * target. Rejects on any answer other than 200.
 */
export async function pairedLoad(
  a: Target,
  b: Target,
  options: { connections: number; pairs: number; sliceMs: number; pids?: [number, number] },
): Promise<PairedResult> {
  const pools = await Promise.all([a, b].map((t) => openPool(t, options.connections)));
  try {
    const totals = [0, 1].map(() => ({ requests: 0, ms: 0, process: 0, postgres: 0, busy: 0, idle: 0 }));
    const { pids } = options;
    const pairRatios: number[] = [];
    for (let pair = 0; pair < options.pairs; pair += 1) {
      const order = pair % 2 === 0 ? [0, 1] : [1, 0];
      const rates: number[] = [0, 0];
      for (const which of order) {
        const before = pids && {
          process: cpuUs(`/proc/${pids[which]}/stat`),
          postgres: postgresCpuUs(),
          machine: machineCpuUs(),
        };
        const { requests, ms } = await loadSlice(pools[which]!, options.sliceMs);
        if (pids && before) {
          totals[which]!.process += cpuUs(`/proc/${pids[which]}/stat`) - before.process;
          totals[which]!.postgres += postgresCpuUs() - before.postgres;
          const machine = machineCpuUs();
          totals[which]!.busy += machine.busy - before.machine.busy;
          totals[which]!.idle += machine.idle - before.machine.idle;
        }
        totals[which]!.requests += requests;
        totals[which]!.ms += ms;
        rates[which] = requests / ms;
      }
      pairRatios.push(rates[1]! / rates[0]!);
    }
    const rps = totals.map((t) => (t.requests / t.ms) * 1000) as [number, number];
    const perRequest = (pick: (t: (typeof totals)[number]) => number) =>
      totals.map((t) => pick(t) / t.requests) as [number, number];
    const requests = totals.map((t) => t.requests) as [number, number];
    const cpu = {
      process: perRequest((t) => t.process),
      postgres: perRequest((t) => t.postgres),
      other: perRequest((t) => t.busy - t.process - t.postgres),
      idle: perRequest((t) => t.idle),
    };
    return { requests, rps, pairRatios, ...(pids ? { cpu } : {}) };
  } finally {
    for (const pool of pools) for (const connection of pool) connection.close();
  }
}

// Private

/**
 * Every socket asks again as soon as its answer is in, until the slice's time is up; the slice ends with its last
 * answer.
 */
async function loadSlice(pool: Connection[], sliceMs: number): Promise<{ requests: number; ms: number }> {
  const started = performance.now();
  const deadline = started + sliceMs;
  let requests = 0;
  await Promise.all(
    pool.map(async (connection) => {
      while (performance.now() < deadline) {
        await connection.request();
        requests += 1;
      }
    }),
  );
  return { requests, ms: performance.now() - started };
}

async function openPool(target: Target, connections: number): Promise<Connection[]> {
  const url = new URL(target.url);
  const headers = Object.entries({
    host: url.host,
    ...target.headers,
    ...(target.body ? { 'content-length': String(Buffer.byteLength(target.body)) } : {}),
  });
  const head =
    `${target.method} ${url.pathname}${url.search} HTTP/1.1\r\n` +
    `${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}` +
    `\r\n`;
  const bytes = Buffer.from(head + (target.body ?? ''));
  return Promise.all(Array.from({ length: connections }, () => Connection.open(Number(url.port), bytes, target.name)));
}

const HEAD_END = Buffer.from('\r\n\r\n');

/** One kept-alive socket answering one request at a time. */
class Connection {
  private head: Buffer | undefined;
  private remaining = -1;
  private done: ((error?: Error) => void) | undefined;

  private constructor(
    private readonly socket: Socket,
    private readonly bytes: Buffer,
    private readonly name: string,
  ) {
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', (error) => this.finish(error));
    socket.on('close', () => this.finish(new Error(`${name} closed the connection`)));
  }

  static open(port: number, bytes: Buffer, name: string): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new Connection(socket, bytes, name)));
      socket.setNoDelay(true);
      socket.once('error', reject);
    });
  }

  request(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.done = (error) => (error ? reject(error) : resolve());
      this.socket.write(this.bytes);
    });
  }

  close(): void {
    this.done = undefined;
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    if (this.remaining < 0) {
      const head = this.head === undefined ? chunk : Buffer.concat([this.head, chunk]);
      const end = head.indexOf(HEAD_END);
      if (end < 0) {
        this.head = head;
        return;
      }
      this.head = undefined;
      const text = head.subarray(0, end).toString('latin1');
      const status = text.slice(9, 12);
      const length = /\r\ncontent-length: *(\d+)/i.exec(text);
      if (status !== '200' || length === null) {
        this.finish(new Error(`${this.name} answered ${status}${length === null ? ' without a content-length' : ''}`));
        return;
      }
      this.remaining = Number(length[1]) - (head.length - end - HEAD_END.length);
    } else {
      this.remaining -= chunk.length;
    }
    if (this.remaining <= 0) {
      this.remaining = -1;
      this.finish();
    }
  }

  private finish(error?: Error): void {
    const done = this.done;
    this.done = undefined;
    done?.(error);
  }
}
