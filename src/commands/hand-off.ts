import { request } from 'node:http';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { holderRuns, readHolder, type StoreHeldError, type StoreHolder } from '../db/embedded-lock.js';
import type { Command, CommandOutput } from './command.js';

/** The header carrying a server's command secret. */
export const CONTROL_SECRET_HEADER = 'x-control-secret';

/** One line of a handed-off command's answer (NDJSON). */
export type ControlEvent = { out: string } | { err: string } | { progress: string } | { exit: number };

/** How long a server that has the folder but no command port yet (it is starting) is waited for. */
const STARTING_GRACE_MS = 15_000;

/**
 * Hands a command to the server holding the embedded store and replays its output here.
 * Refuses at once, with what holds the folder and what to do, when the holder is a
 * command or a server that does not answer. When the person gives up (`signal`) or the
 * connection breaks part-way, one line says so and what the server does with the
 * command (see {@link Command.whenLeft}), and the exit code is 1.
 */
export async function handOff<Args>(
  held: StoreHeldError,
  command: Command<Args>,
  args: Args,
  output: CommandOutput,
  signal: AbortSignal,
): Promise<number> {
  const holder =
    held.holder.role === 'server' ? await waitForCommandPort(held.folder, held.holder, output) : held.holder;
  if (holder.role !== 'server') {
    output.err(`${held.message}; wait for it to finish, then run this again\n`);
    return 1;
  }
  if (holder.controlPort === undefined || holder.secret === undefined) return refuse(held, holder, output);
  output.err(`The server (process ${holder.pid}) holds ${held.folder}; running ${command.name} there.\n`);
  try {
    return await send(holder, command.name, args, output, signal);
  } catch (error) {
    if (signal.aborted || error instanceof AnswerCut) {
      const why = signal.aborted ? 'interrupted' : `cut off (${(error as AnswerCut).cause.message})`;
      output.progress('');
      output.err(`${command.name} ${why} before the server (process ${holder.pid}) finished it: ${command.whenLeft}\n`);
      return 1;
    }
    if (
      (error as NodeJS.ErrnoException).code === 'ECONNREFUSED' ||
      (error as NodeJS.ErrnoException).code === 'ECONNRESET'
    )
      return refuse(held, holder, output);
    throw error;
  }
}

// Private

/** The connection broke after the server had begun to answer: the command was under way there. */
class AnswerCut extends Error {
  constructor(override readonly cause: Error) {
    super(`the connection to the server broke part-way: ${cause.message}`, { cause });
  }
}

async function waitForCommandPort(folder: string, holder: StoreHolder, output: CommandOutput): Promise<StoreHolder> {
  const deadline = Date.now() + STARTING_GRACE_MS;
  let current = holder;
  while (current.controlPort === undefined && holderRuns(folder, current) && Date.now() < deadline) {
    output.progress(`waiting for the server (process ${current.pid}) holding ${folder} to finish starting…`);
    await sleep(200);
    current = readHolder(folder) ?? current;
  }
  output.progress('');
  return current;
}

function refuse(held: StoreHeldError, holder: StoreHolder, output: CommandOutput): number {
  output.err(
    `${held.message}, which does not answer. The embedded store takes one process at a time: ` +
      `stop that process (Ctrl-C in its terminal, or kill ${holder.pid}) and run this again, ` +
      'or set DATABASE_URL to use a PostgreSQL server.\n',
  );
  return 1;
}

function send(
  holder: StoreHolder,
  name: string,
  args: unknown,
  output: CommandOutput,
  signal: AbortSignal,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(args);
    const req = request({
      host: '127.0.0.1',
      port: holder.controlPort,
      method: 'POST',
      path: `/commands/${encodeURIComponent(name)}`,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        [CONTROL_SECRET_HEADER]: holder.secret,
      },
      timeout: 5_000,
      signal,
    });
    req.once('timeout', () =>
      req.destroy(Object.assign(new Error('the server did not answer'), { code: 'ECONNRESET' })),
    );
    req.on('error', reject);
    req.once('response', (res) => {
      req.setTimeout(0);
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`the server refused the command (HTTP ${res.statusCode})`));
        return;
      }
      let exit: number | undefined;
      // Without these a broken or aborted answer was an unhandled 'error' and a stack trace.
      // Both the response and readline re-emitting it report it; the first settles.
      const cut = (error: Error) => reject(new AnswerCut(error));
      res.on('error', cut);
      const lines = createInterface({ input: res, crlfDelay: Infinity });
      lines.on('error', cut);
      lines.on('line', (line) => {
        let event: ControlEvent;
        try {
          event = JSON.parse(line) as ControlEvent;
        } catch {
          // readline hands over the unfinished last line of an answer cut mid-line.
          return cut(new Error(`the answer broke off mid-line (${JSON.stringify(line.slice(0, 40))})`));
        }
        if ('out' in event) output.out(event.out);
        else if ('err' in event) output.err(event.err);
        else if ('progress' in event) output.progress(event.progress);
        else exit = event.exit;
      });
      lines.once('close', () =>
        exit === undefined
          ? reject(new AnswerCut(new Error('the server ended the command without an answer')))
          : resolve(exit),
      );
    });
    req.end(body);
  });
}
