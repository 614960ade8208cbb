import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants as zlib, createBrotliCompress, createGzip } from 'node:zlib';
import { chooseEncoding } from './negotiate.js';

/** A piece of a body: text, or bytes passed through as they came from the database. */
export type BodyChunk = string | Uint8Array;

/**
 * How long a streamed answer waits for its client to take what was written: a client that
 * reads nothing for this long is given up, as if it had left. Its source holds a database
 * connection and a transaction open (src/db/open-postgres.ts), so clients that stop
 * reading must not hold them for good; a minute lets a slow link take a batch (up to about
 * 1 MB) at 20 KB/s.
 */
export const STALLED_CLIENT_MS = 60_000;

/**
 * Writes a 200 body of unknown length as it is produced, chunked, brotli- or
 * gzip-compressed when the client accepts it, waiting for the socket to drain so memory
 * stays bounded however long the body is. HEAD gets the headers alone. When the client
 * leaves, or takes nothing for `stalledAfterMs`, it stops reading `chunks` (which closes
 * their source) and resolves quietly: nobody waits for an answer.
 */
export async function streamBody(req: IncomingMessage, res: ServerResponse, contentType: string, chunks: AsyncIterable<BodyChunk>, stalledAfterMs = STALLED_CLIENT_MS): Promise<void> {
  const encoding = chooseEncoding(req.headers['accept-encoding']);
  res.statusCode = 200;
  res.setHeader('content-type', contentType);
  if (encoding !== undefined) res.setHeader('content-encoding', encoding);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const compressor = encoding === 'br'
    ? createBrotliCompress({ params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } })
    : encoding === 'gzip' ? createGzip({ level: 6 }) : undefined;
  const sink: NodeJS.WritableStream = compressor ?? res;
  compressor?.pipe(res);

  // A client may have left before the first chunk (while its statement waited for a
  // connection): its 'close' has fired already, and waiting for it would wait for a drain
  // that never comes, keeping the source (a cursor and its connection) open for good.
  const gone = new AbortController();
  if (res.destroyed) gone.abort();
  else res.once('close', () => gone.abort());
  try {
    for await (const chunk of chunks) {
      if (!sink.write(chunk)) await drained(sink, res, gone.signal, stalledAfterMs);
    }
    sink.end();
  } catch (error) {
    if (gone.signal.aborted) return; // the client left: stop reading, nothing to answer
    throw error;
  }
  // 'finish' never comes to a response whose client left after its last chunk; 'close' does.
  if (res.writableFinished || res.destroyed) return;
  await new Promise<void>((resolve) => {
    res.once('finish', resolve);
    res.once('close', resolve);
  });
}

// Private

/** Waits for `sink` to drain; a client that takes nothing for `ms` has its connection closed, which ends the wait as its leaving does. */
async function drained(sink: NodeJS.WritableStream, res: ServerResponse, gone: AbortSignal, ms: number): Promise<void> {
  const stalled = setTimeout(() => res.destroy(), ms);
  try {
    await once(sink, 'drain', { signal: gone });
  } finally {
    clearTimeout(stalled);
  }
}
