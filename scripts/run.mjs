/**
 * `node scripts/run.mjs src/<entry>.ts [args…]`: runs a TypeScript entry point as plain
 * JavaScript. `src/` is transpiled to `dist/src/` by esbuild (types are not checked here;
 * `npm run typecheck` does that) whenever a source file is newer than the last transpile;
 * otherwise the JavaScript of the last run is used as it is.
 *
 * Why not tsx: its loader hooks run on a separate thread and cost a round trip per module
 * imported, a large share of a server's restart (graphql-yoga alone imports hundreds of
 * files). Plain Node loads the same modules in a fraction of that.
 */
import { copyFileSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE = join(ROOT, 'src');
const OUT = join(ROOT, 'dist', 'src');
const STAMP = join(ROOT, 'dist', '.transpiled');

const [entry, ...args] = process.argv.slice(2);
if (entry === undefined || !entry.startsWith('src/') || !entry.endsWith('.ts')) {
  process.stderr.write('usage: node scripts/run.mjs src/<entry>.ts [args…]\n');
  process.exit(2);
}

const sources = listFiles(SOURCE);
if (newestChange(sources) > lastTranspile()) await transpile(sources);
process.argv = [process.argv[0], join(OUT, relative('src', entry)).replace(/\.ts$/, '.js'), ...args];
await import(pathToFileURL(process.argv[1]).href);

// Private

function listFiles(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath ?? d.path, d.name));
}

function newestChange(files) {
  // The folder's own time changes when a file is added, removed or renamed.
  return Math.max(
    statSync(SOURCE).mtimeMs,
    ...files.map((f) => statSync(f).mtimeMs),
    ...files.map((f) => statSync(dirname(f)).mtimeMs),
  );
}

function lastTranspile() {
  try {
    return statSync(STAMP).mtimeMs;
  } catch {
    return 0;
  }
}

async function transpile(files) {
  const { build } = await import('esbuild');
  const started = Date.now();
  await build({
    entryPoints: files.filter((f) => f.endsWith('.ts')),
    outdir: OUT,
    outbase: SOURCE,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    logLevel: 'error',
  });
  for (const file of files.filter((f) => !f.endsWith('.ts'))) {
    const target = join(OUT, relative(SOURCE, file));
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(file, target);
  }
  // Stamped with the time the transpile began, so a file saved during it counts as newer.
  writeFileSync(STAMP, `${new Date(started).toISOString()}\n`);
  utimesSync(STAMP, started / 1000, started / 1000);
}
