import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_KINDS } from '../src/api/api-error.js';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { ENV_DEFAULTS, ENV_VARIABLES, loadConfig } from '../src/config.js';
import { LIMIT_ERROR_CODE } from '../src/graphql/armor.js';
import { printSchemaFile, SCHEMA_FILE } from '../src/graphql/print-schema.js';
import { createOpenApiDocument } from '../src/rest/openapi-document.js';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

describe('files that must stay true to the code', () => {
  it('schema.graphql is the printed schema (run `npm run schema` after changing it)', () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(printSchemaFile());
  });

  it('the README configuration table lists every environment variable the service reads, and no other, in its order', () => {
    expect(ENV_VARIABLES.length).toBeGreaterThan(10);
    expect(configurationTable().map((row) => row.name)).toEqual([...ENV_VARIABLES]);
  });

  it('the README configuration table gives each variable the default the code applies', () => {
    for (const { name, stated } of configurationTable()) {
      const actual = (ENV_DEFAULTS as Record<string, string | number>)[name];
      expect(stated, name).toBe(actual === undefined ? 'unset' : `\`${actual}\``);
    }
    // And the defaults are what an empty environment gives.
    expect(loadConfig({})).toMatchObject({ host: ENV_DEFAULTS.HOST, port: ENV_DEFAULTS.PORT, pgliteDir: ENV_DEFAULTS.PGLITE_DIR, rateLimitBurst: ENV_DEFAULTS.RATE_LIMIT_BURST });
  });

  it('the README names every GraphQL error code /docs lists, except NOT_FOUND, which /graphql never answers, and the document codes', () => {
    const readme = read('README.md');
    const codes = Object.values(ERROR_KINDS).map((kind) => kind.graphqlCode).filter((code) => code !== 'NOT_FOUND');
    for (const code of [...codes, 'GRAPHQL_PARSE_FAILED', LIMIT_ERROR_CODE]) expect(readme, code).toContain(`\`${code}\``);
  });

  it('every npm script the README mentions exists', () => {
    const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
    const mentioned = [...read('README.md').matchAll(/npm run ([a-z:]+)/g)].map((m) => m[1]!);
    expect(mentioned.length).toBeGreaterThan(3);
    for (const script of mentioned) expect(scripts, script).toContain(script);
  });
});

describe('REST parameters: what each path accepts is what OpenAPI and /docs name', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService(STORE_KINDS[0]!);
  });
  afterAll(async () => svc?.stop());

  it.each([
    ['/v1/metrics/price', 'project=ethereum'],
    ['/v1/export', 'metric=price&project=ethereum'],
    ['/v1/changes', 'since=2026-01-01'],
  ])('%s', async (path, valid) => {
    // An unknown parameter's 400 lists the ones the route accepts.
    const res = await svc.get(`${path}?${valid}&no_such_parameter=1`);
    const message = ((await res.json()) as { errors: { message: string }[] }).errors[0]!.message;
    const accepted = /expected (.+)$/.exec(message)![1]!.split(', ');
    expect(accepted.length).toBeGreaterThan(0);
    expect(openApiParameterNames(path).sort()).toEqual([...accepted].sort());
    const docs = await (await svc.get('/docs')).text();
    for (const name of accepted) expect(docs, name).toMatch(new RegExp(`<code>[^<]*\\b${name}\\b`));
  });
});

/** The query parameters OpenAPI gives a path, shared ones (`$ref`) resolved. */
function openApiParameterNames(path: string): string[] {
  const document = createOpenApiDocument(CATALOG) as { paths: Record<string, { get: { parameters: { name?: string; $ref?: string }[] } }>; components: { parameters: Record<string, { name: string }> } };
  return document.paths[path]!.get.parameters.map((p) => p.name ?? document.components.parameters[p.$ref!.split('/').at(-1)!]!.name);
}

/** The rows of the README's configuration table: the variable and its stated default. */
function configurationTable(): { name: string; stated: string }[] {
  const readme = read('README.md');
  const table = readme.slice(readme.indexOf('## Configuration'));
  return [...table.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \| ([^|]+) \|/gm)].map((m) => ({ name: m[1]!, stated: m[2]!.trim() }));
}
