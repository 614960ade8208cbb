import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolveSafely } from './safe-address.js';

/** How one attempt ended: the receiver's status, or why there was none. */
export type AttemptResult = { status: number } | { error: string };

export interface PostOptions {
  /** Allows private addresses (and the caller allows plain http://): local development and tests. */
  allowPrivate: boolean;
  timeoutMs: number;
  /** Bytes of the receiver's answer read at most; it is cut off after. */
  maxResponseBytes: number;
  /** Aborts the attempt (shutdown); the result is then an error. */
  signal?: AbortSignal;
}

/**
 * POSTs `body` to `url` once. The host is resolved now and the connection goes to the
 * address that was checked (a name that resolves elsewhere a moment later, DNS rebinding,
 * changes nothing); no redirect is followed; the whole attempt, the name's resolution
 * included, ends after `timeoutMs`, and at most `maxResponseBytes` of the answer are read,
 * so a slow or huge receiver cannot hold a worker.
 */
export async function postDelivery(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: PostOptions,
): Promise<AttemptResult> {
  const target = new URL(url);
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
  const timedOut = () => ({ error: `no answer within ${options.timeoutMs / 1000} s` });
  const checked = await Promise.race([
    resolveSafely(target.hostname, options.allowPrivate),
    new Promise<undefined>((resolve) => signal.addEventListener('abort', () => resolve(undefined), { once: true })),
  ]);
  if (checked === undefined) return timeout.aborted ? timedOut() : { error: 'stopped: the server is shutting down' };
  if ('refused' in checked) return { error: `refused: ${checked.refused}` };
  const lookup: LookupFunction = (_hostname, lookupOptions, callback) => {
    if (lookupOptions.all) callback(null, [{ address: checked.address, family: checked.family }]);
    else callback(null, checked.address, checked.family);
  };
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const settle = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const req = send(target, {
      method: 'POST',
      agent: false,
      lookup,
      signal,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': 'metrics-service-hooks/1',
      },
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (timeout.aborted) settle(timedOut());
      else if (signal.aborted) settle({ error: 'stopped: the server is shutting down' });
      else settle({ error: error.code === undefined ? error.message : `${error.code}: ${error.message}` });
    });
    req.on('response', (res: IncomingMessage) => {
      let read = 0;
      const done = () => {
        settle({ status: res.statusCode ?? 0 });
        res.destroy();
      };
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= options.maxResponseBytes) done();
      });
      res.on('end', done);
      // Cut off part-way: by the timeout (a receiver dribbling its answer), or by the receiver.
      const cut = () => settle(timeout.aborted ? timedOut() : { status: res.statusCode ?? 0 });
      res.on('error', cut);
      res.on('close', cut);
    });
    req.end(body);
  });
}
