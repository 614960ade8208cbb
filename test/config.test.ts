import { describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config.js';

/** The cores `WORKERS=auto` sees. */
const machine = vi.hoisted(() => ({ cores: 2 }));
vi.mock('node:os', async (original) => ({
  ...(await original<typeof import('node:os')>()),
  availableParallelism: () => machine.cores,
}));

describe('configuration', () => {
  it('has working defaults for a newcomer: embedded store on 127.0.0.1:4000', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 4000,
      databaseUrl: undefined,
      pgliteDir: '.data/pglite',
      graphiql: true,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('treats empty variables as unset and splits comma lists', () => {
    const config = loadConfig({ PORT: '', API_KEYS: 'a, b,,c', CORS_ORIGINS: 'https://app.example' });
    expect(config.port).toBe(4000);
    expect(config.apiKeys).toEqual(['a', 'b', 'c']);
    expect(config.corsOrigins).toEqual(['https://app.example']);
  });

  it("refuses CORS_ORIGINS entries a browser's Origin could never equal, or that would let in sandboxed pages", () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://app.example, http://localhost:5173' }).corsOrigins).toEqual([
      'https://app.example',
      'http://localhost:5173',
    ]);
    for (const bad of [
      'null',
      'https://app.example/',
      'app.example',
      'https://app.example/path',
      '*',
      'https://App.example',
      'https://app.example:443',
    ]) {
      expect(() => loadConfig({ CORS_ORIGINS: `https://ok.example,${bad}` }), bad).toThrow(
        `CORS_ORIGINS: expected origins such as https://app.example (scheme, host ` +
          `and optional port, nothing after) joined with commas, got ${JSON.stringify(bad)}`,
      );
    }
  });

  it('reads WORKERS=auto as one worker per core, which the embedded store allows only on one core', () => {
    machine.cores = 1;
    expect(loadConfig({ WORKERS: 'auto' }).workers).toBe(1);
    machine.cores = 4;
    expect(() => loadConfig({ WORKERS: 'auto' })).toThrow(
      'WORKERS: several workers need DATABASE_URL (the embedded store belongs to one process)',
    );
    expect(loadConfig({ WORKERS: 'auto', DATABASE_URL: 'postgres://db.example/metrics' }).workers).toBe(4);
  });

  it('names every bad variable in one error', () => {
    expect(() => loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', GRAPHIQL: 'maybe' })).toThrow(
      /PORT[\s\S]*DATABASE_URL[\s\S]*GRAPHIQL/,
    );
  });

  it('shares nothing and serves no /metrics unless asked', () => {
    expect(loadConfig({})).toMatchObject({ redisUrl: undefined, metrics: 'off' });
    expect(loadConfig({ REDIS_URL: 'rediss://:secret@cache.example:6380/2', METRICS: 'public' })).toMatchObject({
      redisUrl: 'rediss://:secret@cache.example:6380/2',
      metrics: 'public',
    });
  });

  it('names REDIS_URL and METRICS when they are not what is expected, without echoing the URL', () => {
    let message = '';
    try {
      loadConfig({ REDIS_URL: 'http://:secret@cache.example:6379', METRICS: 'yes' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(
      /REDIS_URL: expected a redis:\/\/ or rediss:\/\/ URL[\s\S]*METRICS: .*"off"\|"on"\|"public"/,
    );
    expect(message).not.toContain('secret');
  });

  it('says DATABASE_URL must be a postgres:// URL, not "Invalid URL", without echoing the password', () => {
    for (const bad of [
      'mysql://app:secret@db.example/metrics',
      'db.example:5432/metrics',
      'postgres:secret@db.example',
    ]) {
      expect(() => loadConfig({ DATABASE_URL: bad }), bad).toThrow(
        'DATABASE_URL: expected a postgres:// or postgresql:// URL, e.g. postgres://user:pass@db.example:5432/metrics',
      );
      expect(() => loadConfig({ DATABASE_URL: bad })).not.toThrow(/secret/);
    }
  });

  it('turns GraphiQL off only when asked, whatever NODE_ENV says', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).graphiql).toBe(true);
    expect(loadConfig({ GRAPHIQL: 'off' }).graphiql).toBe(false);
  });
});
