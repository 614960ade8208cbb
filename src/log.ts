import { isatty } from 'node:tty';
import { pino, type Logger } from 'pino';
import type { Config } from './config.js';
import { gatherLines } from './log-blocks.js';

/**
 * What a log line says of an error: its class, code and a bounded message. Driver errors
 * carry the statement and its parameters as properties; stacks name internals. Neither
 * is written.
 */
export function describeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error).slice(0, 300) };
  const code = (error as { code?: unknown }).code;
  return { type: error.name, ...(typeof code === 'string' ? { code } : {}), message: error.message.slice(0, 300) };
}

/**
 * The service logger: JSON lines on stdout. Lines carry named fields only (a request's
 * id, method, route, status and time; never its headers or query), and errors go through
 * {@link describeError}, so no key, SQL text or parameter can reach a line.
 */
export function createLogger(config: Pick<Config, 'logLevel'>, destination?: NodeJS.WritableStream): Logger {
  const logger = pino(
    {
      level: config.logLevel,
      base: undefined,
      serializers: { err: describeError },
    },
    destination === undefined ? defaultDestination() : (destination as pino.DestinationStream),
  );
  if (destination === undefined) stdoutLoggers.push(logger);
  return logger;
}

/** What the one line logged per request says. */
export interface RequestLine {
  requestId: string;
  method: string;
  /** The route's path as the route table names it (`/v1/metrics/:name`), never the URL. */
  route: string;
  /** The status sent; 499 when the client left before any of the answer was sent. */
  status: number;
  /** How an answer that did not reach its end ended; absent when it did. */
  outcome?: Outcome | undefined;
  ms: number;
}

/**
 * How an answer was cut short: `aborted` (the client left), `given up` (the client read
 * nothing for too long and was cut off) or `failed` (an error after the answer had begun).
 */
export type Outcome = 'aborted' | 'given up' | 'failed';

/**
 * Writes a request's line exactly as `logger.info({ requestId, method, route, status, outcome,
 * ms }, 'request')` would, without pino's field-by-field serialisation, which is a measurable
 * share of a small read (docs/performance.md). The fields are known (an id the app made, a
 * method Node's parser accepted, a route path, two numbers); they are quoted as JSON all the
 * same. Follows the logger's level, and goes to its destination like every other line.
 */
export function createRequestLog(logger: Logger): (line: RequestLine) => void {
  const destination = (logger as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym]!;
  return ({ requestId, method, route, status, outcome, ms }) => {
    if (!logger.isLevelEnabled('info')) return;
    const ended = outcome === undefined ? '' : `,"outcome":${JSON.stringify(outcome)}`;
    destination.write(
      `{"level":30,"time":${Date.now()},"requestId":${JSON.stringify(requestId)}` +
        `,"method":${JSON.stringify(method)},"route":${JSON.stringify(route)},"status":` +
        `${status}${ended},"ms":${ms},"msg":"request"}\n`,
    );
  };
}

/**
 * Writes out the log lines still buffered for standard output; call it before
 * `process.exit`, which would otherwise drop them (the last "stopped" line, say).
 */
export function flushLogs(): void {
  try {
    buffered?.flushSync();
  } catch (error) {
    // Busy (EAGAIN): the lines are still held and written with the next block. Gone (EPIPE): see readerGone.
    if ((error as NodeJS.ErrnoException).code === 'EPIPE') readerGone();
  }
}

// Private

let buffered: { flushSync(): void; destroy(): void } | undefined;
const stdoutLoggers: Logger[] = [];

/**
 * Readable colored lines for a person at a terminal; JSON lines for everything else,
 * written in blocks of about 4 KB (a system call per line costs throughput) and flushed
 * at least every second and at exit. When the reader of standard
 * output goes away (a closed pipe), the process stops as on SIGTERM instead of living on
 * unheard.
 */
function defaultDestination(): pino.DestinationStream {
  // isatty, not process.stdout.isTTY: making process.stdout would switch a pipe on fd 1 to
  // non-blocking mode, and a full pipe would then refuse the writes below (EAGAIN).
  if (isatty(1)) {
    return pino.transport({
      target: 'pino-pretty',
      options: { colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' },
    }) as pino.DestinationStream;
  }
  // Before pino's own exit hook (registered by pino.destination), which ends the stream
  // without the lines still gathered here.
  process.once('exit', () => flushLogs());
  // Blocks arrive gathered (log-blocks.ts), so sonic-boom writes each on this thread: a
  // 4 KB write is a few µs, while handing it to libuv's thread pool (sync: false) costs
  // an extra wake-up per block. A slow reader of standard output makes the process wait,
  // as pino's default does.
  const stream = pino.destination({ dest: 1, sync: true, minLength: 0 });
  const blocks = gatherLines(stream, 4096);
  buffered = { flushSync: () => blocks.flushSync(), destroy: () => stream.destroy() };
  // Each second, what has gathered is written like any block. Not flushSync: sonic-boom's
  // flushSync also syncs a file to disk (fsync), which blocks this thread. Exit still
  // writes everything out with flushLogs.
  setInterval(() => blocks.flush(), 1000).unref();
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') readerGone();
  });
  return blocks;
}

/** Standard output's reader has gone: stop writing there and stop the process as SIGTERM would. */
function readerGone(): void {
  const stream = buffered;
  if (stream === undefined) return;
  buffered = undefined;
  // Nothing more is written, and a destroyed stream is skipped by pino's own flush at
  // exit, which would throw EPIPE again.
  for (const logger of stdoutLoggers) logger.level = 'silent';
  stream.destroy();
  process.kill(process.pid, 'SIGTERM');
}
