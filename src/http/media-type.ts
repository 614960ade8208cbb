import { format, parse } from 'content-type';

/*
 * Media types as RFC 9110 has them: type, subtype and parameter names are case-insensitive,
 * and whitespace may stand around the `;` between parameters. Read with jshttp's parser.
 */

/**
 * A `Content-Type` header in one spelling: type and parameter names lower case, one `; `
 * between parameters (`APPLICATION/JSON ; CHARSET=UTF-8` is `application/json; charset=UTF-8`).
 * A header that does not parse is returned as it is, for its reader to refuse.
 */
export function normalizedContentType(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  try {
    return format(parse(header));
  } catch {
    return header;
  }
}

/** Whether an `Accept` header lists `type` (lower case) itself, whatever its spelling and parameters. */
export function acceptsMediaType(header: string | undefined, type: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((range) => mediaTypeOf(range) === type);
}

// Private

function mediaTypeOf(range: string): string | undefined {
  try {
    return parse(range.trim(), { parameters: false }).type;
  } catch {
    return undefined;
  }
}
