import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npm, REPO } from './support/processes.js';

describe('npm run db:migrate', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'metrics-migrate-'));
  });

  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('names the migrations it applied to a new store, and says a second run had nothing to apply', {
    timeout: 60_000,
  }, async () => {
    const env = { PGLITE_DIR: join(dir, 'pglite'), DATABASE_URL: '' };

    const first = await npm('db:migrate', [], env);
    expect(first.code).toBe(0);
    const files = (await readdir(join(REPO, 'db/migrations'))).filter((f) => f.endsWith('.sql')).sort();
    expect(first.stderr).toContain(
      `: applied ${files.length} migrations (${files.join(', ')}); schema and catalog are up to date\n`,
    );

    const second = await npm('db:migrate', [], env);
    expect(second.code).toBe(0);
    expect(second.stderr).toMatch(/: schema and catalog are up to date\n/);
    expect(second.stderr).not.toContain('applied');
  });
});
