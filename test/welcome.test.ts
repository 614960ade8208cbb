import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config.js';
import { printWelcome } from '../src/start/welcome.js';

/** The welcome lines `npm start` prints once ready, for a configuration given as environment variables. */
function welcome(env: Record<string, string>, keyless = false): string {
  let text = '';
  const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    text += String(chunk);
    return true;
  });
  try {
    printWelcome(
      'http://127.0.0.1:4000',
      1234,
      { example: { from: '2026-10-27', to: '2026-11-25' }, keyless },
      loadConfig(env),
    );
  } finally {
    write.mockRestore();
  }
  return text;
}

describe('the welcome message', () => {
  afterEach(() => vi.restoreAllMocks());

  it('links GraphiQL and the explorer by default', () => {
    const text = welcome({});
    expect(text).toContain('  GraphiQL:  http://127.0.0.1:4000/graphql   (type your key into its Headers tab)');
    expect(text).toContain('  Explorer:  http://127.0.0.1:4000/explore');
    expect(text).toContain('/v1/metrics/token-price-usd?project=ethereum&start_date=2026-10-27&end_date=2026-11-25');
  });

  it(
    'links no page the configuration turned off: GRAPHIQL=off has no GraphiQL ' + 'line, EXPLORER=off no explorer line',
    () => {
      const noGraphiql = welcome({ GRAPHIQL: 'off' });
      expect(noGraphiql).not.toContain('GraphiQL');
      expect(noGraphiql).toContain('  Explorer:  http://127.0.0.1:4000/explore');
      const noExplorer = welcome({ EXPLORER: 'off' });
      expect(noExplorer).not.toContain('Explorer');
      expect(noExplorer).toContain('  GraphiQL:  http://127.0.0.1:4000/graphql');
    },
  );

  it('says how to make a key only when the server has none', () => {
    const hint =
      '\nNo API key exists yet: make one with  npm run keys -- create --name NAME  (it prints the key once).\n';
    expect(welcome({}, true)).toContain(hint);
    expect(welcome({}, false)).not.toContain('No API key');
  });
});
