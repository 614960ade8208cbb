import { existsSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_KINDS } from '../src/api/api-error.js';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { ENV_DEFAULTS, ENV_VARIABLES, loadConfig } from '../src/config.js';
import { LIMIT_ERROR_CODE } from '../src/graphql/armor.js';
import { printSchemaFile, SCHEMA_FILE } from '../src/graphql/print-schema.js';
import { createTools } from '../src/mcp/tool-registry.js';
import { docsMarkdown } from '../src/pages/docs-markdown.js';
import { createOpenApiDocument } from '../src/rest/openapi-document.js';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
/** The README and the reference docs whose names, defaults and links must match the code. */
const DOCS = ['README.md', 'docs/operations.md', 'docs/performance.md'];

describe('files that must stay true to the code', () => {
  it('schema.graphql is the printed schema (run `npm run schema` after changing it)', () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(printSchemaFile());
  });

  it(
    'the README configuration table lists every environment variable the service ' +
      'reads, and no other, in its order',
    () => {
      expect(ENV_VARIABLES.length).toBeGreaterThan(10);
      expect(configurationTable().map((row) => row.name)).toEqual([...ENV_VARIABLES]);
    },
  );

  it('the README configuration table gives each variable the default the code applies', () => {
    for (const { name, stated } of configurationTable()) {
      const actual = (ENV_DEFAULTS as Record<string, string | number>)[name];
      expect(stated, name).toBe(actual === undefined ? 'unset' : `\`${actual}\``);
    }
    // And the defaults are what an empty environment gives.
    expect(loadConfig({})).toMatchObject({
      host: ENV_DEFAULTS.HOST,
      port: ENV_DEFAULTS.PORT,
      pgliteDir: ENV_DEFAULTS.PGLITE_DIR,
      rateLimitBurst: ENV_DEFAULTS.RATE_LIMIT_BURST,
    });
  });

  it(
    'the README names every GraphQL error code /docs lists, except NOT_FOUND, ' +
      'which /graphql never answers, and the document codes',
    () => {
      const readme = read('README.md');
      const codes = Object.values(ERROR_KINDS)
        .map((kind) => kind.graphqlCode)
        .filter((code) => code !== 'NOT_FOUND');
      for (const code of [...codes, 'GRAPHQL_PARSE_FAILED', LIMIT_ERROR_CODE])
        expect(readme, code).toContain(`\`${code}\``);
    },
  );

  it('every npm script the README and the docs mention exists', () => {
    const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
    for (const doc of DOCS) {
      const mentioned = [...read(doc).matchAll(/npm run ([a-z:]+)/g)].map((m) => m[1]!);
      expect(mentioned.length, doc).toBeGreaterThan(0);
      for (const script of mentioned) expect(scripts, `${doc}: ${script}`).toContain(script);
    }
  });

  it('every default the docs state in prose, `NAME` (default `value`), is the one the code applies', () => {
    const pattern = /`([A-Z][A-Z0-9_]+)`[,\s(]+default\s+`([^`]+)`/g;
    const stated = DOCS.flatMap((doc) =>
      [...read(doc).matchAll(pattern)].map(([, name, value]) => ({ doc, name: name!, value })),
    );
    // docs/operations.md states most of them; the count keeps this test from passing on nothing.
    expect(stated.filter((s) => s.doc === 'docs/operations.md').length).toBeGreaterThan(10);
    for (const { doc, name, value } of stated) {
      expect(ENV_DEFAULTS, `${doc}: ${name}`).toHaveProperty(name);
      expect(value, `${doc}: ${name}`).toBe(String((ENV_DEFAULTS as Record<string, string | number>)[name]));
    }
  });

  it('the rate-limit headers shown in docs/operations.md are what the defaults give', () => {
    const { RATE_LIMIT_BURST: burst, RATE_LIMIT_PER_MINUTE: perMinute } = ENV_DEFAULTS;
    const policy = `\`RateLimit-Policy: "default";q=${burst};w=${(burst / perMinute) * 60}\``;
    expect(read('docs/operations.md')).toContain(policy);
  });

  it('every variable-like name the docs put in backticks is one the service reads, an error code or one named', () => {
    const codes = Object.values(ERROR_KINDS).map((kind) => kind.graphqlCode);
    // Read by the tests, the bench, a command or CI, not by the service's configuration.
    const others = ['TEST_DATABASE_URL', 'BENCH_DATABASE_URL', 'UPSTREAM_API_KEY', 'BUILD_ENV_', 'SLICE_MS'];
    const known = new Set<string>([...ENV_VARIABLES, ...codes, 'GRAPHQL_PARSE_FAILED', LIMIT_ERROR_CODE, ...others]);
    for (const doc of DOCS) {
      for (const [, name] of read(doc).matchAll(/`([A-Z][A-Z0-9]*_[A-Z0-9_]*)(?:=[^`]*)?`/g)) {
        expect(known.has(name!), `${doc}: ${name}`).toBe(true);
      }
    }
  });

  it('every link from the README and the docs to a file of the repository, and to a heading in it, resolves', () => {
    for (const doc of DOCS) {
      for (const [, target, anchor] of read(doc).matchAll(/\]\((?!https?:)([^)#\s]*)(?:#([^)\s]+))?\)/g)) {
        const file = target === '' ? doc : posix.join(posix.dirname(doc), target!);
        expect(existsSync(new URL(`../${file}`, import.meta.url)), `${doc} → ${file}`).toBe(true);
        if (anchor !== undefined) expect(headingSlugs(read(file)), `${doc} → ${file}#${anchor}`).toContain(anchor);
      }
    }
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
    ['/v1/revisions/{name}', 'project=ethereum'],
    ['/v1/metrics/{name}/profile', 'lookback_days=30'],
    ['/v1/formula', 'expr=p&input=p:price&project=ethereum'],
  ])('%s', async (path, valid) => {
    // An unknown parameter's 400 lists the ones the route accepts.
    const res = await svc.get(`${path.replace('{name}', 'price')}?${valid}&no_such_parameter=1`);
    const message = ((await res.json()) as { errors: { message: string }[] }).errors[0]!.message;
    const accepted = /expected (.+)$/.exec(message)![1]!.split(', ');
    expect(accepted.length).toBeGreaterThan(0);
    expect(openApiParameterNames(path).sort()).toEqual([...accepted].sort());
    const docs = await (await svc.get('/docs')).text();
    for (const name of accepted) expect(docs, name).toMatch(new RegExp(`<code>[^<]*\\b${name}\\b`));
  });
});

describe('/llms.txt and /docs.md: made from the /docs page, naming what the code serves', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService(STORE_KINDS[0]!);
  });
  afterAll(async () => svc?.stop());

  it('/docs.md is public Markdown holding every heading and every code span of /docs', async () => {
    const res = await svc.get('/docs.md', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    const markdown = await res.text();
    const html = await (await svc.get('/docs', { key: null })).text();
    const decode = (t: string) => t.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
    const headings = [...html.matchAll(/<h2 id="[^"]+">([^<]+)<\/h2>/g)].map((m) => m[1]!);
    expect(headings.length).toBeGreaterThan(8);
    for (const heading of headings) expect(markdown, heading).toContain(`\n## ${decode(heading)}\n`);
    const spans = [...html.matchAll(/<code>([^<]*)<\/code>/g)].map((m) => decode(m[1]!));
    expect(spans.length).toBeGreaterThan(100);
    for (const span of spans) expect(markdown, span).toContain(`\`${span}\``);
    expect(markdown).not.toMatch(/<\/?(?:p|li|ul|code|b|a|h[12])\b/);
  });

  it('/llms.txt is public, in the llmstxt.org form, and every link it gives is served', async () => {
    const res = await svc.get('/llms.txt', { key: null });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/^# Metrics API\n\n> Daily metric time series/);
    expect(text).toContain('\n## Docs\n');
    const links = [...text.matchAll(/^- \[[^\]]+\]\((\/[^)]*)\)/gm)].map((m) => m[1]!);
    expect(links).toEqual(expect.arrayContaining(['/docs.md', '/v1/openapi.json', '/schema.graphql', '/mcp']));
    for (const link of links) {
      const method = link === '/mcp' ? 'POST' : 'GET';
      const answer = await svc.get(link, { method, headers: { accept: 'application/json, text/event-stream' } });
      expect(answer.status, link).toBeLessThan(method === 'POST' ? 500 : 300);
      expect(answer.status, link).not.toBe(404);
    }
  });

  it('/schema.graphql is the printed schema, and /llms.txt and /docs name the MCP tools there are', async () => {
    const sdl = await (await svc.get('/schema.graphql')).text();
    expect(`# Generated by \`npm run schema\` from the code in src/graphql; do not edit by hand.\n\n${sdl}`).toBe(
      printSchemaFile(),
    );
    const tools = createTools(CATALOG).map((t) => t.name);
    const llms = await (await svc.get('/llms.txt', { key: null })).text();
    expect(/tools ([a-z_, ]+)$/m.exec(llms)![1]!.split(', ')).toEqual(tools);
    const html = await (await svc.get('/docs', { key: null })).text();
    const section = html.slice(html.indexOf('<h2 id="mcp">'), html.indexOf('<h2 id="decisions">'));
    expect([...section.matchAll(/<li><code>([a-z_]+)[(<]/g)].map((m) => m[1])).toEqual(tools);
  });

  it('refuses to turn a tag it has no Markdown form for', () => {
    expect(() => docsMarkdown('<body><table></table></body>')).toThrow(/<table>/);
  });
});

/** The query parameters OpenAPI gives a path, shared ones (`$ref`) resolved. */
function openApiParameterNames(path: string): string[] {
  const document = createOpenApiDocument(CATALOG) as {
    paths: Record<string, { get: { parameters: { name?: string; $ref?: string; in?: string }[] } }>;
    components: { parameters: Record<string, { name: string }> };
  };
  return document.paths[path]!.get.parameters.flatMap((p) =>
    'in' in p && p.in === 'path' ? [] : [p.name ?? document.components.parameters[p.$ref!.split('/').at(-1)!]!.name],
  );
}

/** The rows of the README's configuration table: the variable and its stated default. */
function configurationTable(): { name: string; stated: string }[] {
  const readme = read('README.md');
  const table = readme.slice(readme.indexOf('## Configuration'));
  return [...table.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \| ([^|]+) \|/gm)].map((m) => ({
    name: m[1]!,
    stated: m[2]!.trim(),
  }));
}

/** The anchors GitHub gives a markdown file's headings: lower case, punctuation dropped, spaces as hyphens. */
function headingSlugs(markdown: string): string[] {
  const slug = (heading: string) =>
    heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replaceAll(' ', '-');
  return [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!));
}
