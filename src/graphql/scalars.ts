import { GraphQLError, Kind, print, type ValueNode } from 'graphql';
import { clipped } from '../clipped.js';
import { canonicalInstant, isIsoDate } from '../dates.js';
import type { Builder } from './builder.js';

/** `Date` (a real calendar day as YYYY-MM-DD) and `JSON`. */
export function addScalars(builder: Builder): void {
  builder.scalarType('Date', {
    description:
      'A calendar date written as YYYY-MM-DD (ISO 8601); only real dates are accepted, so 2024-02-30 is refused.',
    serialize: (value) => value,
    parseValue: parseDate,
    parseLiteral: (ast) => (ast.kind === Kind.STRING ? parseDate(ast.value, ast) : refuseLiteral(DATE_EXPECTS, ast)),
  });
  builder.scalarType('DateTime', {
    description:
      'An instant written as an ISO 8601 UTC time with microseconds, e.g. 2026-06-30T12:00:00.123456Z, ' +
      'as GET /v1/changes writes it, so a time given out names its write exactly ' +
      'when passed back as `asOf` or `since`. As an argument it may also be a ' +
      'date alone (YYYY-MM-DD): `asOf` reads it as the end of that UTC day, `since` ' +
      'as its start.',
    serialize: (value) => value,
    parseValue: parseDateTime,
    parseLiteral: (ast) =>
      ast.kind === Kind.STRING ? parseDateTime(ast.value, ast) : refuseLiteral(DATE_TIME_EXPECTS, ast),
  });
  builder.scalarType('JSON', {
    description: 'Any JSON value; used for the extra fields some data points carry.',
    serialize: (value) => value,
    parseValue: (value) => value,
  });
}

// Private

/**
 * RFC 3339 with a zone, checked as REST checks `as_of` and `since` (a real day and time) and
 * kept to the microsecond as UTC text; or a date alone, passed on as it is for the argument
 * to read as its REST twin does (`asOf`: the end of that UTC day; `since`: its start).
 */
function parseDateTime(value: unknown, node?: ValueNode): string {
  if (typeof value === 'string' && isIsoDate(value)) return value;
  const instant = typeof value === 'string' ? canonicalInstant(value) : undefined;
  if (instant !== undefined) return instant;
  throw refusal(DATE_TIME_EXPECTS, JSON.stringify(value), node);
}

function parseDate(value: unknown, node?: ValueNode): string {
  if (typeof value === 'string' && isIsoDate(value)) return value;
  throw refusal(DATE_EXPECTS, JSON.stringify(value), node);
}

const DATE_EXPECTS = 'Date expects a real calendar date as YYYY-MM-DD';
const DATE_TIME_EXPECTS =
  'DateTime expects an RFC 3339 time with a zone, e.g. 2026-06-30T12:00:00Z ' +
  '(in UTC, within the years 0001-9999), or a date YYYY-MM-DD';

/**
 * A literal that is not a string (`from: 123`) refused, naming it as the document wrote it;
 * it used to be refused as "got undefined", the value graphql's literal had not yet become.
 */
function refuseLiteral(expects: string, ast: ValueNode): never {
  throw refusal(expects, print(ast), ast);
}

/**
 * The client's error: what the scalar expects and what it was given (shortened as every echoed value is: it is the
 * client's text).
 */
function refusal(expects: string, given: string | undefined, node?: ValueNode): GraphQLError {
  return new GraphQLError(`${expects}, got ${given === undefined ? 'nothing' : clipped(given)}`, {
    nodes: node,
    extensions: { code: 'BAD_USER_INPUT' },
  });
}
