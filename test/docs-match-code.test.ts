import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { printSchemaFile, SCHEMA_FILE } from '../src/graphql/print-schema.js';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

describe('files that must stay true to the code', () => {
  it('schema.graphql is the printed schema (run `npm run schema` after changing it)', () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(printSchemaFile());
  });

  it('the README configuration table lists every environment variable the service reads, and no other', () => {
    const configSource = read('src/config.ts');
    const schemaBlock = configSource.slice(configSource.indexOf('const envSchema'), configSource.indexOf('});'));
    const variables = [...schemaBlock.matchAll(/^\s+([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]);
    const readme = read('README.md');
    const table = readme.slice(readme.indexOf('## Configuration'));
    const documented = [...table.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]);
    expect(variables.length).toBeGreaterThan(10);
    expect(documented.sort()).toEqual(variables.sort());
  });

  it('every npm script the README mentions exists', () => {
    const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
    const mentioned = [...read('README.md').matchAll(/npm run ([a-z:]+)/g)].map((m) => m[1]!);
    expect(mentioned.length).toBeGreaterThan(3);
    for (const script of mentioned) expect(scripts, script).toContain(script);
  });
});
