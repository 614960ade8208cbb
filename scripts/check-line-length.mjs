#!/usr/bin/env node
// Fails when a line of source is longer than the formatter's line width (120 columns). The
// formatter wraps code but never comments or literals, so this covers what it cannot wrap:
// comments must fit; a line whose length comes from a string, template or regular expression
// literal (a message, a test's name, SQL, HTML) passes, since splitting it would make it
// harder to find. `--strict` lists those too.
// Usage: node scripts/check-line-length.mjs [--strict] [folder or file …]   (default: src test scripts)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import ts from 'typescript';

const MAX_COLUMNS = 120;
const EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs']);
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', '.data']);
const LITERAL_KINDS = new Set([
  ts.SyntaxKind.StringLiteral,
  ts.SyntaxKind.NoSubstitutionTemplateLiteral,
  ts.SyntaxKind.TemplateExpression,
  ts.SyntaxKind.RegularExpressionLiteral,
]);

/** Every checked file under `path`, in a stable order. */
function sourceFiles(path) {
  if (!statSync(path).isDirectory()) return EXTENSIONS.has(extname(path)) ? [path] : [];
  return readdirSync(path, { withFileTypes: true })
    .filter((entry) => !(entry.isDirectory() && SKIPPED_FOLDERS.has(entry.name)))
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => sourceFiles(join(path, entry.name)));
}

/** The [start, end) offsets of the file's literals (from the parse) and of its comments (the text between them). */
function ranges(file, text) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const literals = [];
  const visit = (node) => {
    if (LITERAL_KINDS.has(node.kind)) literals.push([node.getStart(source), node.end]);
    else ts.forEachChild(node, visit);
  };
  visit(source);
  const comments = [];
  let next = 0;
  for (let i = 0; i < text.length; i += 1) {
    if (next < literals.length && i === literals[next][0]) {
      i = literals[next][1] - 1;
      next += 1;
    } else if (text.startsWith('//', i) || text.startsWith('/*', i)) {
      const line = text[i + 1] === '/';
      const close = line ? text.indexOf('\n', i) : text.indexOf('*/', i + 2);
      const end = close === -1 ? text.length : line ? close : close + 2;
      comments.push([i, end]);
      i = end - 1;
      while (next < literals.length && literals[next][0] < end) next += 1;
    }
  }
  return { comments, literals };
}

/** Where `file` has a line the rules above refuse, as `path:line: why`. */
function longLines(file, strict) {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n');
  if (!lines.some((line) => line.length > MAX_COLUMNS)) return [];
  const { comments, literals } = ranges(file, text);
  const found = [];
  let lineStart = 0;
  lines.forEach((line, i) => {
    // Columns are code points, not UTF-16 units: `Σ` or `×` is one column.
    const columns = [...line.replace(/\r$/, '')].length;
    if (columns > MAX_COLUMNS) {
      const lineEnd = lineStart + line.length;
      const overflow = lineStart + line.length - (columns - MAX_COLUMNS);
      const overlaps = ([start, end], from) => start < lineEnd && end > from;
      const where = `${relative('.', file)}:${i + 1}: ${columns} columns`;
      if (comments.some((range) => overlaps(range, overflow))) found.push(`${where}, a comment`);
      else if (!literals.some((range) => overlaps(range, lineStart))) found.push(where);
      else if (strict) found.push(`${where}, a literal`);
    }
    lineStart += line.length + 1;
  });
  return found;
}

const args = process.argv.slice(2);
const strict = args.includes('--strict');
const roots = args.filter((arg) => arg !== '--strict');
const found = (roots.length > 0 ? roots : ['src', 'test', 'scripts'])
  .flatMap(sourceFiles)
  .flatMap((file) => longLines(file, strict));

if (found.length > 0) {
  console.error(found.join('\n'));
  console.error(`${found.length} line(s) longer than ${MAX_COLUMNS} columns.`);
  process.exitCode = 1;
}
