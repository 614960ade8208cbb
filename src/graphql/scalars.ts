import { GraphQLError, Kind } from 'graphql';
import { isIsoDate } from '../dates.js';
import type { Builder } from './builder.js';

/** `Date` (a real calendar day as YYYY-MM-DD) and `JSON`. */
export function addScalars(builder: Builder): void {
  builder.scalarType('Date', {
    description: 'A calendar date written as YYYY-MM-DD (ISO 8601); only real dates are accepted, so 2024-02-30 is refused.',
    serialize: (value) => value,
    parseValue: parseDate,
    parseLiteral: (ast) => parseDate(ast.kind === Kind.STRING ? ast.value : undefined),
  });
  builder.scalarType('JSON', {
    description: 'Any JSON value; used for the extra fields some data points carry.',
    serialize: (value) => value,
    parseValue: (value) => value,
  });
}

// Private

function parseDate(value: unknown): string {
  if (typeof value === 'string' && isIsoDate(value)) return value;
  throw new GraphQLError(`Date expects a real calendar date as YYYY-MM-DD, got ${JSON.stringify(value)?.slice(0, 64)}`, {
    extensions: { code: 'BAD_USER_INPUT' },
  });
}
