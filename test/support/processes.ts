import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root, where `npm start` and `npm run …` are run as a user would. */
export const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** What a finished command printed and how it ended. */
export interface CommandRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs `npm run <script> -- args` (or `npm start`) in the repository with `env` added, to completion. */
export function npm(
  script: string,
  args: readonly string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<CommandRun> {
  const started = Date.now();
  const child = spawn('npm', [...npmArgs(script), ...(args.length > 0 ? ['--', ...args] : [])], {
    cwd: REPO,
    env: { ...process.env, ...env },
  });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => stdout.push(b));
  child.stderr.on('data', (b: Buffer) => stderr.push(b));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({
        code,
        stdout: Buffer.concat(stdout).toString(),
        stderr: Buffer.concat(stderr).toString(),
        ms: Date.now() - started,
      });
    });
  });
}

/** A server started with `npm start`, read as a person at a terminal would read it. */
export interface StartedServer {
  child: ChildProcess;
  /** The base URL from "Metrics service ready at …". */
  url: string;
  /** From spawn to the ready line. */
  ms: number;
  /** Standard output; `logLines()` has its JSON log lines parsed (npm's own lines left out). */
  stdout(): string;
  logLines(): Record<string, unknown>[];
  stderr(): string;
  /** Sends `signal` to npm and the server, as Ctrl-C at a terminal does, and resolves once both have ended. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `npm start` with `env` added and waits for its ready line (rejects if it exits first). */
export function npmStart(env: Record<string, string>, timeoutMs = 60_000): Promise<StartedServer> {
  const started = Date.now();
  // Its own process group, so a stop reaches npm and the server together, as Ctrl-C at a terminal does.
  const child = spawn('npm', ['start'], {
    cwd: REPO,
    detached: true,
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...env },
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const groupGone = async () => {
    // npm may end before the server it started; wait until no process of the group is left.
    for (let i = 0; i < 200; i += 1) {
      try {
        process.kill(-child.pid!, 0);
      } catch {
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`npm start was not ready within ${timeoutMs} ms:\n${err}`));
    }, timeoutMs);
    child.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
      const url = /Metrics service ready at (http:\/\/\S+) /.exec(err)?.[1];
      if (url === undefined) return;
      clearTimeout(timer);
      resolve({
        child,
        url,
        ms: Date.now() - started,
        stdout: () => out,
        logLines: () =>
          out
            .split('\n')
            .filter((l) => l.startsWith('{'))
            .map((l) => JSON.parse(l) as Record<string, unknown>),
        stderr: () => err,
        stop: async (signal = 'SIGINT') => {
          try {
            process.kill(-child.pid!, signal);
          } catch {
            // the group has ended already
          }
          await exited;
          await groupGone();
        },
      });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited with ${code} before it was ready:\n${err}`));
    });
  });
}

// Private

function npmArgs(script: string): string[] {
  return script === 'start' ? ['start'] : ['run', '--silent', script];
}
