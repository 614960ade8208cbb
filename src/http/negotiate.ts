/** Below this many bytes compression costs more than it saves. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

export type Encoding = 'br' | 'gzip';

/** Picks br, then gzip, honouring `q=0`; undefined means send identity. */
export function chooseEncoding(header: string | undefined): Encoding | undefined {
  if (header === undefined) return undefined;
  const accepted = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    accepted.set(name, q === undefined ? 1 : Number(q.slice(2)) || 0);
  }
  const weight = (name: string) => accepted.get(name) ?? accepted.get('*') ?? 0;
  if (weight('br') > 0) return 'br';
  if (weight('gzip') > 0) return 'gzip';
  return undefined;
}

/**
 * True when the client's copy is current (RFC 9110 §13.2.2): `If-None-Match` names this
 * ETag, or, only when there is no `If-None-Match`, `If-Modified-Since` is not earlier
 * than `lastModified` (compared in whole seconds, the precision of HTTP dates).
 */
export function isNotModified(
  headers: { 'if-none-match'?: string; 'if-modified-since'?: string },
  etag: string,
  lastModified: number | undefined,
): boolean {
  if (headers['if-none-match'] !== undefined) return matchesEtag(headers['if-none-match'], etag);
  if (headers['if-modified-since'] === undefined || lastModified === undefined) return false;
  const since = parseHttpDate(headers['if-modified-since']);
  return since !== undefined && Math.floor(lastModified / 1000) <= Math.floor(since / 1000);
}

/**
 * An HTTP-date (RFC 9110 §5.6.7) as milliseconds: the IMF-fixdate servers send, or one of
 * the two obsolete forms a recipient must still read. Anything else, which RFC 9110 says
 * makes `If-Modified-Since` ignored, is undefined: `Date.parse` would take `2099-01-01` too.
 */
export function parseHttpDate(text: string): number | undefined {
  const asctime = ASCTIME.exec(text);
  const ms =
    IMF_FIXDATE.test(text) || RFC850.test(text)
      ? Date.parse(text)
      : asctime
        ? Date.parse(`${asctime[1]} GMT`)
        : Number.NaN;
  return Number.isNaN(ms) ? undefined : ms;
}

/** True when `If-None-Match` names this (weak) ETag or `*`. */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((candidate) => {
    const tag = candidate.trim().replace(/^W\//, '');
    return tag === '*' || tag === opaque;
  });
}

/** Adds a token to a `Vary` header value without repeating it. */
export function appendVary(current: number | string | string[] | undefined, value: string): string {
  if (current === undefined) return value; // the usual case, on every answer
  const existing = String(current)
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  return [...new Set([...existing, value])].join(', ');
}

// Private

const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '\\d{2}:\\d{2}:\\d{2}';
/** `Sun, 06 Nov 1994 08:49:37 GMT` */
const IMF_FIXDATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \\d{2} ${MONTH} \\d{4} ${TIME} GMT$`);
/** `Sunday, 06-Nov-94 08:49:37 GMT` */
const RFC850 = new RegExp(
  `^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \\d{2}-${MONTH}-\\d{2} ${TIME} GMT$`,
);
/** `Sun Nov  6 08:49:37 1994`, a time in GMT without saying so. */
const ASCTIME = new RegExp(`^((?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} [ \\d]\\d ${TIME} \\d{4})$`);
