import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';

describe('configuration', () => {
  it('has working defaults for a newcomer: embedded store on 127.0.0.1:4000', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ host: '127.0.0.1', port: 4000, databaseUrl: undefined, pgliteDir: '.data/pglite', graphiql: true });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('treats empty variables as unset and splits comma lists', () => {
    const config = loadConfig({ PORT: '', API_KEYS: 'a, b,,c', CORS_ORIGINS: 'https://app.example' });
    expect(config.port).toBe(4000);
    expect(config.apiKeys).toEqual(['a', 'b', 'c']);
    expect(config.corsOrigins).toEqual(['https://app.example']);
  });

  it('names every bad variable in one error', () => {
    expect(() => loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', GRAPHIQL: 'maybe' })).toThrow(
      /PORT[\s\S]*DATABASE_URL[\s\S]*GRAPHIQL/,
    );
  });

  it('turns GraphiQL off only when asked, whatever NODE_ENV says', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).graphiql).toBe(true);
    expect(loadConfig({ GRAPHIQL: 'off' }).graphiql).toBe(false);
  });
});
