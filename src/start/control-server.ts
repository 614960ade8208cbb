import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CommandOutput } from '../commands/command.js';
import { CONTROL_SECRET_HEADER, type ControlEvent } from '../commands/hand-off.js';
import { COMMANDS, type HandedOffCommand } from '../commands/registry.js';
import { readBody } from '../http/fetch-bridge.js';
import type { Services } from '../services.js';

/** The server side of a hand-off: a loopback listener that runs commands against this process's store. */
export interface ControlServer {
  port: number;
  /** Handed-over commands running now. */
  readonly running: number;
  /**
   * Stops every command still running (an import rolls back the file it is on, at its next
   * row), waits until each has told its CLI so and ended, then closes the listener.
   */
  close(): Promise<void>;
}

/**
 * Listens on 127.0.0.1 (a free port) for commands handed over by CLI processes that found
 * the embedded store held by this server (see commands/run-command.ts). Only a request
 * carrying `secret` (from the store's owner file, readable by its user alone) is run;
 * the API's keys play no part. A command waits until the database is prepared, then
 * streams its output back as NDJSON; a client that goes away aborts it, and so does the
 * server's shutdown (see {@link ControlServer.close}).
 */
export async function startControlServer(
  services: Services,
  ready: Promise<void>,
  secret: string,
): Promise<ControlServer> {
  const expected = Buffer.from(secret);
  const running = new Set<RunningCommand>();
  const server: Server = createServer((req, res) => {
    // The secret first: any local process (or a page in a local browser) can reach this
    // port, so nothing of a request without it is read, its path included.
    const given = Buffer.from(String(req.headers[CONTROL_SECRET_HEADER] ?? ''));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return void res.writeHead(403).end();
    const command = COMMANDS.get(commandName(req.url ?? ''));
    if (req.method !== 'POST' || command === undefined) return void res.writeHead(404).end();
    const stop = new AbortController();
    const entry: RunningCommand = { stop, done: runHandedOff(services, ready, command, req, res, stop.signal) };
    running.add(entry);
    void entry.done.finally(() => running.delete(entry));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    get running() {
      return running.size;
    },
    close: async () => {
      const left = [...running];
      for (const entry of left) entry.stop.abort();
      await Promise.all(left.map((entry) => entry.done));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

// Private

interface RunningCommand {
  /** Aborted when the server shuts down. */
  stop: AbortController;
  /** Settles once the command has ended and its answer is written. */
  done: Promise<void>;
}

/**
 * The command a path names, '' for none. Never throws: an exception in the listener
 * would end the whole server, and a path that is not valid percent-encoding names nothing.
 */
function commandName(url: string): string {
  const segment = /^\/commands\/([^/?]+)$/.exec(url)?.[1] ?? '';
  try {
    return decodeURIComponent(segment);
  } catch {
    return '';
  }
}

async function runHandedOff(
  services: Services,
  ready: Promise<void>,
  command: HandedOffCommand,
  req: IncomingMessage,
  res: ServerResponse,
  shutdown: AbortSignal,
): Promise<void> {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  const onShutdown = () => gone.abort();
  shutdown.addEventListener('abort', onShutdown, { once: true });
  const send = (event: ControlEvent) => res.write(`${JSON.stringify(event)}\n`);
  const output: CommandOutput = {
    out: (out) => send({ out }),
    err: (err) => send({ err }),
    progress: (progress) => send({ progress }),
  };
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  let code = 1;
  try {
    if (services.state.stopping) throw new Error('the server is shutting down; run this again when it has stopped');
    const args: unknown = JSON.parse((await readBody(req)).toString('utf8'));
    if (services.state.directory === undefined)
      output.progress('waiting for the server to finish preparing the database…');
    await ready;
    services.logger.info({ command: command.name }, 'running a command handed over by a CLI process');
    const keysChanged = () => services.keys.forget();
    code = await command.run(
      {
        store: services.store,
        catalog: services.catalog,
        config: services.config,
        output,
        signal: gone.signal,
        keysChanged,
      },
      args,
    );
  } catch (error) {
    services.logger.warn({ command: command.name, err: error }, 'a handed-over command failed');
    output.progress('');
    output.err(`${(error as Error).message}\n`);
  }
  shutdown.removeEventListener('abort', onShutdown);
  if (shutdown.aborted) output.err(`the server is shutting down and stopped ${command.name}: ${command.whenLeft}\n`);
  services.logger.info({ command: command.name, exitCode: code }, 'handed-over command done');
  send({ exit: code });
  res.end();
}
