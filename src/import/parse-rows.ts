import { createReadStream } from 'node:fs';
import { extname } from 'node:path';
import { createInterface } from 'node:readline';
import { clipped } from '../clipped.js';

/** The file formats the importer reads, chosen by file extension. */
export type RowFormat = 'csv' | 'ndjson';

/**
 * One record as the file wrote it, before any check against the catalog. CSV fields are
 * always text; NDJSON fields are whatever JSON value the line held. `extra` is the parsed
 * JSON of `extra_json` / `extra`, undefined when the column or key is absent or empty.
 */
export interface RawRow {
  readonly metric: unknown;
  readonly project: unknown;
  readonly date: unknown;
  readonly value: unknown;
  readonly extra: unknown;
}

/**
 * A record read from line `line` (1-based, counting the header and blank lines), or why it
 * could not be read; `header` marks a CSV header that is wrong or missing, so no line of
 * the file could be read (a problem with the file, not one bad row).
 */
export type ParsedLine = { line: number; record: RawRow } | { line: number; error: string; header?: true };

/** The CSV header, in this order; `extra_json` may be left off. */
const CSV_COLUMNS = ['metric', 'project', 'date', 'value', 'extra_json'] as const;

/** `csv` for `.csv`, `ndjson` for `.ndjson` and `.jsonl`, undefined for anything else. */
export function formatOf(path: string): RowFormat | undefined {
  return FORMATS.get(extname(path).toLowerCase());
}

/**
 * Streams the records of a file, one line at a time, so memory stays flat whatever the
 * file size. A malformed line yields an `error` entry and reading goes on; a wrong or
 * missing CSV header yields one error for line 1 and nothing else, since no line after
 * it can be read without knowing the columns. Throws for an unsupported extension and
 * when the file cannot be read.
 *
 * CSV follows RFC 4180 quoting (fields in double quotes may hold commas and doubled
 * quotes) with one record per line: a quoted field cannot span lines. Blank lines are
 * skipped in both formats.
 */
export async function* readRows(path: string): AsyncGenerator<ParsedLine> {
  const format = formatOf(path);
  if (format === undefined) {
    throw new Error(`${path}: expected a .csv, .ndjson or .jsonl file, found extension "${extname(path)}"`);
  }
  const input = createReadStream(path, { encoding: 'utf8' });
  const lines = createInterface({ input, crlfDelay: Infinity });
  try {
    yield* format === 'csv' ? csvRows(lines) : ndjsonRows(lines);
  } finally {
    // A consumer that stops early (or a header error) must not leave the file open.
    lines.close();
    input.destroy();
  }
}

// Private

const FORMATS = new Map<string, RowFormat>([
  ['.csv', 'csv'],
  ['.ndjson', 'ndjson'],
  ['.jsonl', 'ndjson'],
]);
const NDJSON_KEYS = new Set(['metric', 'project', 'date', 'value', 'extra']);
const REQUIRED = CSV_COLUMNS.length - 1;
const HEADER = `"${CSV_COLUMNS.slice(0, REQUIRED).join(',')}" optionally followed by ",${CSV_COLUMNS[REQUIRED]}"`;

async function* csvRows(lines: AsyncIterable<string>): AsyncGenerator<ParsedLine> {
  let line = 0;
  let width = 0;
  for await (const text of lines) {
    line += 1;
    if (line === 1) {
      width = headerWidth(text.replace(/^\uFEFF/, ''));
      if (width === 0) {
        yield { line, error: `expected the header ${HEADER}, found "${clipped(text)}"`, header: true };
        return;
      }
      continue;
    }
    if (text === '') continue;
    const fields = splitCsvLine(text);
    if (typeof fields === 'string') yield { line, error: fields };
    else if (fields.length !== REQUIRED && fields.length !== width)
      yield { line, error: `expected ${expectedWidth(width)} columns, found ${fields.length}` };
    else yield toRecord(line, fields);
  }
  if (line === 0) yield { line: 1, error: `expected the header ${HEADER}, found an empty file`, header: true };
}

/** The number of columns a correct header declares, 0 for a wrong header. */
function headerWidth(text: string): number {
  const names = splitCsvLine(text);
  if (typeof names === 'string' || names.length < REQUIRED) return 0;
  return names.every((name, i) => name === CSV_COLUMNS[i]) ? names.length : 0;
}

function expectedWidth(width: number): string {
  return width === REQUIRED ? String(REQUIRED) : `${REQUIRED} or ${width}`;
}

function toRecord(line: number, [metric, project, date, value, extraJson]: string[]): ParsedLine {
  if (extraJson === undefined || extraJson === '')
    return { line, record: { metric, project, date, value, extra: undefined } };
  try {
    return { line, record: { metric, project, date, value, extra: JSON.parse(extraJson) } };
  } catch (cause) {
    return { line, error: `extra_json is not valid JSON: ${(cause as Error).message}` };
  }
}

/** The fields of one CSV line, or an error message when its quoting is broken. */
function splitCsvLine(text: string): string[] | string {
  if (!text.includes('"')) return text.split(',');
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    if (text[i] === '"') {
      let field = '';
      let from = i + 1;
      for (;;) {
        const quote = text.indexOf('"', from);
        if (quote === -1) return `unterminated quoted field in column ${fields.length + 1}`;
        field += text.slice(from, quote);
        if (text[quote + 1] !== '"') {
          i = quote + 1;
          break;
        }
        field += '"';
        from = quote + 2;
      }
      fields.push(field);
      if (i === text.length) return fields;
      if (text[i] !== ',')
        return `expected a comma after the quoted field in column ${fields.length}, found "${text[i]}"`;
      i += 1;
    } else {
      const comma = text.indexOf(',', i);
      const field = text.slice(i, comma === -1 ? undefined : comma);
      if (field.includes('"'))
        return (
          `a quote inside the unquoted field in column ${fields.length + 1}; quote ` +
          `the whole field and double the quote`
        );
      fields.push(field);
      if (comma === -1) return fields;
      i = comma + 1;
    }
  }
}

async function* ndjsonRows(lines: AsyncIterable<string>): AsyncGenerator<ParsedLine> {
  let line = 0;
  for await (const text of lines) {
    line += 1;
    if (text.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line === 1 ? text.replace(/^\uFEFF/, '') : text);
    } catch (cause) {
      yield { line, error: `not valid JSON: ${(cause as Error).message}` };
      continue;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      yield {
        line,
        error:
          `expected a JSON object, ` +
          `found ${parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : typeof parsed}`,
      };
      continue;
    }
    const unknown = Object.keys(parsed).filter((key) => !NDJSON_KEYS.has(key));
    if (unknown.length > 0) {
      yield {
        line,
        error:
          `unexpected field ${unknown.map((k) => `"${clipped(k)}"`).join(', ')}: ` +
          `expected only ${[...NDJSON_KEYS].join(', ')}`,
      };
      continue;
    }
    const o = parsed as Record<string, unknown>;
    yield {
      line,
      record: {
        metric: o.metric,
        project: o.project,
        date: o.date,
        value: exactValue(text, o.value),
        extra: o.extra ?? undefined,
      },
    };
  }
}

/**
 * A JSON number as the line wrote it, when JavaScript's number would round it (beyond a
 * double's 17 digits: `12345678901234567891` parses as 12345678901234567000), so the
 * value is stored exactly as written; any other value as JSON.parse gave it.
 */
function exactValue(text: string, value: unknown): unknown {
  if (typeof value !== 'number' || !Number.isFinite(value)) return value;
  const token = topLevelValueToken(text);
  return token !== undefined && token !== String(value) ? token : value;
}

/**
 * The text of the last number written under the key "value" of the line's top-level object
 * (JSON.parse keeps the last of duplicate keys).
 */
function topLevelValueToken(text: string): string | undefined {
  let depth = 0;
  let found: string | undefined;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    if (ch === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (depth === 1) {
        const colon = /^[ \t\r\n]*:[ \t\r\n]*/.exec(text.slice(end + 1));
        if (colon !== null && JSON.parse(text.slice(i, end + 1)) === 'value') {
          found = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(end + 1 + colon[0].length))?.[0];
        }
      }
      i = end;
    } else if (ch === '{' || ch === '[') depth += 1;
    else if (ch === '}' || ch === ']') depth -= 1;
  }
  return found;
}
