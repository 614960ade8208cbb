/** A GraphQL subscription read over Server-Sent Events, as a browser's or a CLI's client reads it. */
export interface SseSubscription {
  status: number;
  contentType: string | null;
  /** Every `next` payload received so far, parsed. */
  events: Record<string, unknown>[];
  /** Resolves with the first event received after the call (or already waiting), or rejects after `timeoutMs`. */
  next(timeoutMs: number): Promise<Record<string, unknown>>;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  close(): void;
}

/** POSTs `query` to `url`/graphql asking for an event stream, and reads its events as they come. */
export async function subscribeSse(
  url: string,
  query: string,
  key: string | null,
  variables?: Record<string, unknown>,
): Promise<SseSubscription> {
  const abort = new AbortController();
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
  if (key !== null) headers['x-api-key'] = key;
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  });
  const events: Record<string, unknown>[] = [];
  let read = 0;
  const waiters: (() => void)[] = [];
  const ended = (async () => {
    if (res.body === null) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!/^event: next$/m.test(block)) continue;
          const data = block
            .split('\n')
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trim())
            .join('\n');
          events.push(JSON.parse(data) as Record<string, unknown>);
          for (const wake of waiters.splice(0)) wake();
        }
      }
    } catch {
      // closed by this side
    }
  })();
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    events,
    ended,
    close: () => abort.abort(),
    next: async (timeoutMs) => {
      const deadline = Date.now() + timeoutMs;
      while (read >= events.length) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no event within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return events[read++]!;
    },
  };
}
