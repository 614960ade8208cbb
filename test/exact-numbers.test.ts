import { describe, expect, it } from 'vitest';
import { parseExactPoints } from '../src/graphql/exact-numbers.js';

describe('parseExactPoints', () => {
  it('reads points as JSON.parse does when a double holds every number', () => {
    const json =
      '[{"date":"2026-01-01","value":12345678.25,"count":1,"extra":{"spot": ' +
      '3},"revisedAt":"2026-06-30T12:00:00.000Z"}]';

    expect(parseExactPoints(json)).toEqual(JSON.parse(json));
  });

  it('keeps the text of a value or an extra number a double would change, beside the double', () => {
    const [first, second] = parseExactPoints(
      '[{"value":0.0000001,"extra":null},{"value":-5.5,"extra":{"spot": 9007199254740993, "futures": 2}}]',
    );

    expect(first).toEqual({ value: 1e-7, extra: null, exact: { value: '0.0000001' } });
    expect(second).toEqual({
      value: -5.5,
      extra: { spot: 9007199254740992, futures: 2 },
      exact: { extra: '{"spot":9007199254740993,"futures":2}' },
    });
  });

  it('leaves digits inside strings alone, escaped quotes included', () => {
    const json = '[{"value":1,"extra":{"a1234567": 1, "s": "x: 12345678901234567\\" 99999999999999999"}}]';

    expect(parseExactPoints(json)).toEqual(JSON.parse(json));
  });
});
