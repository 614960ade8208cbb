import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

export interface Child {
  process: ChildProcess;
  port: number;
  /** Resident memory of the process and its descendants (cluster workers), in bytes. */
  rss(): number;
  stop(): Promise<void>;
}

/**
 * Starts a TypeScript entry point and waits until `ready(line)`, given each line of its
 * standard error, returns the port it listens on: the service (`src/…`) as `npm start`
 * runs it (scripts/run.mjs: transpiled JavaScript), anything else with tsx. Standard
 * output (the service's JSON logs) goes nowhere, so reading it costs the measuring
 * process nothing.
 */
export async function startChild(
  entry: string,
  env: Record<string, string>,
  ready: (line: string) => number | undefined,
): Promise<Child> {
  const args = entry.startsWith('src/') ? ['scripts/run.mjs', entry] : ['--import', 'tsx', entry];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const errors: string[] = [];
  child.stderr!.on('data', (chunk: Buffer) => errors.push(String(chunk)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry} did not start in 60 s:\n${errors.join('')}`)), 60_000);
    createInterface({ input: child.stderr! }).on('line', (line) => {
      const found = ready(line);
      if (found !== undefined) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    child.once('exit', (code) => reject(new Error(`${entry} exited with ${code}:\n${errors.join('')}`)));
  });
  return {
    process: child,
    port,
    rss: () => treeRss(child.pid!),
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/** The port in the service's start-up line (`… ready at http://host:port`), for {@link startChild}. */
export const servicePort = portIn(/ready at http:\/\/[\d.]+:(\d+)/);

/** The port in the floor's start-up line (`floor listening on port`), for {@link startFloor}. */
const floorPort = portIn(/floor listening on (\d+)/);

/**
 * Starts the floor (floor-server.ts) on the bench database of `env`. With `graphqlHistory`
 * its PostgreSQL sessions first run the GraphQL statement, as the service's sessions do
 * when the same service also answers GraphQL (docs/performance.md, "What a session ran before").
 */
export function startFloor(env: Record<string, string>, graphqlHistory: boolean): Promise<Child> {
  return startChild(
    'test/bench/floor-server.ts',
    { ...env, ...(graphqlHistory ? { FLOOR_GRAPHQL_HISTORY: '1' } : {}) },
    floorPort,
  );
}

/** The middle value (the upper one of the two middle values for an even count), as the probes report their rounds. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** A process's or thread's user + system CPU time from its `/proc/…/stat` file, in µs (USER_HZ is 100). */
export function cpuUs(statFile: string): number {
  const fields = readFileSync(statFile, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** CPU time of every PostgreSQL process on the machine, in µs. */
export function postgresCpuUs(): number {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') total += cpuUs(`/proc/${pid}/stat`);
    } catch {
      // the process ended between two reads
    }
  }
  return total;
}

/**
 * The machine's busy and idle (idle and I/O wait) CPU time over all cores so far, in µs, from `/proc/stat` (USER_HZ
 * is 100).
 */
export function machineCpuUs(): { busy: number; idle: number } {
  const fields = readFileSync('/proc/stat', 'utf8')
    .slice(0, 200)
    .split('\n')[0]!
    .trim()
    .split(/\s+/)
    .slice(1, 9)
    .map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return { busy: (user + nice + system + irq + softirq + steal) * 10_000, idle: (idle + iowait) * 10_000 };
}

/** Samples the RSS of a process tree every `everyMs` until stopped; returns the peak. */
export function sampleRss(child: Child, everyMs = 25): { stop(): number } {
  let peak = child.rss();
  const timer = setInterval(() => {
    peak = Math.max(peak, child.rss());
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, child.rss());
    },
  };
}

// Private

function portIn(pattern: RegExp): (line: string) => number | undefined {
  return (line) => {
    const port = pattern.exec(line)?.[1];
    return port === undefined ? undefined : Number(port);
  };
}

function treeRss(pid: number): number {
  let total = 0;
  const visit = (p: number) => {
    try {
      const status = readFileSync(`/proc/${p}/status`, 'utf8');
      total += Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
      const children = readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim();
      for (const c of children.split(/\s+/).filter(Boolean)) visit(Number(c));
    } catch {
      // the process ended between two reads
    }
  };
  visit(pid);
  return total;
}
