import { setTimeout as sleep } from 'node:timers/promises';

/** How patient the client is with an upstream that is busy or failing. */
export interface RetryPolicy {
  /** Attempts per request, the first included. */
  attempts: number;
  /** The wait before the first retry after a 5xx or network error; doubled each time. */
  firstDelayMs: number;
  /** The longest wait a 429's Retry-After is honoured for; longer ones count as a failure. */
  maxRetryAfterSeconds: number;
  /** Per attempt: connect, answer and body together. */
  timeoutMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  attempts: 6,
  firstDelayMs: 500,
  maxRetryAfterSeconds: 120,
  timeoutMs: 60_000,
};

/** The upstream refused or failed for good: the message says what it answered. */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface UpstreamClient {
  /** The upstream's URL without a trailing slash, for messages. */
  readonly baseUrl: string;
  /** The body of a 200 answer to GET `path`, after retrying 429, 5xx and network failures. */
  get(path: string, signal: AbortSignal): Promise<string>;
  /** Retries so far, for the summary. */
  readonly retries: number;
}

/**
 * A client of another instance's `/v1` API, authenticated by its key. A 429 waits the
 * `Retry-After` it names; a 5xx or a network failure waits 0.5 s, 1 s, 2 s…; each is
 * retried up to the policy's attempts. Any other status fails at once with the problem's
 * `detail`, so a wrong key or an unknown path says so instead of being retried.
 */
export function createUpstreamClient(
  baseUrl: string,
  key: string,
  onRetry: (why: string, waitMs: number, answered: boolean) => void,
  policy = DEFAULT_RETRY_POLICY,
): UpstreamClient {
  const base = baseUrl.replace(/\/+$/, '');
  let retries = 0;
  return {
    baseUrl: base,
    get retries() {
      return retries;
    },
    async get(path, signal) {
      let delay = policy.firstDelayMs;
      for (let attempt = 1; ; attempt += 1) {
        let why: string;
        /** False when no answer came at all (a network failure, a timeout): the upstream is unreachable, not busy. */
        let answered = true;
        let waitMs = delay;
        try {
          const res = await fetch(`${base}${path}`, {
            headers: { 'x-api-key': key, accept: 'application/json', 'accept-encoding': 'gzip, br' },
            signal: AbortSignal.any([signal, AbortSignal.timeout(policy.timeoutMs)]),
          });
          if (res.status === 200) return await res.text();
          const body = await res.text().catch(() => '');
          if (res.status === 429) {
            const after = Number(res.headers.get('retry-after') ?? 1);
            if (!(after <= policy.maxRetryAfterSeconds))
              throw new UpstreamError(`${base} asks to wait ${after} s (429); try again later`, 429);
            why = `429, Retry-After ${after} s`;
            waitMs = Math.max(0, after) * 1000;
          } else if (res.status >= 500) {
            why = `${res.status}`;
            delay *= 2;
          } else {
            throw new UpstreamError(
              `${base}${path.split('?')[0]} answered ${res.status}: ${detailOf(body)}`,
              res.status,
            );
          }
        } catch (error) {
          if (error instanceof UpstreamError || signal.aborted) throw error;
          answered = false;
          why =
            (error as Error).name === 'TimeoutError'
              ? `no answer within ${policy.timeoutMs / 1000} s`
              : networkFailure(error as Error);
          delay *= 2;
        }
        if (attempt >= policy.attempts) throw new UpstreamError(`${base} failed ${attempt} times, last: ${why}`);
        retries += 1;
        onRetry(why, waitMs, answered);
        await sleep(waitMs, undefined, { signal });
      }
    },
  };
}

// Private

/** `fetch failed` says nothing; its cause says what: the connection refused, the name unknown. */
function networkFailure(error: Error): string {
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const what =
    typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : error.message;
  return `network: ${what === 'ECONNREFUSED' ? 'connection refused' : what}`;
}

function detailOf(body: string): string {
  try {
    const problem = JSON.parse(body) as { detail?: unknown };
    if (typeof problem.detail === 'string') return problem.detail.slice(0, 300);
  } catch {
    // not a problem document
  }
  // An HTML error page, say: its first words on one line.
  return body.replace(/\s+/g, ' ').trim().slice(0, 120) || 'no detail';
}
