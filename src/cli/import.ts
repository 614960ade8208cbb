/**
 * `npm run import -- FILE...`: loads CSV or NDJSON files of daily points into the store
 * the server uses (DATABASE_URL, or the embedded PGlite), each file all or nothing.
 * Exit code 0 when every file was imported, 1 when any was not, 2 on a usage error.
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { CATALOG } from '../catalog/load-catalog.js';
import type { Store } from '../db/store.js';
import { importFile, type ImportProgress, type ImportResult } from '../import/import-files.js';
import { formatOf } from '../import/parse-rows.js';
import { withCliStore } from './open-cli-store.js';

const USAGE = `usage: npm run import -- FILE...

Imports daily points from each FILE, one after another; a file with any bad row is
reported and nothing from it is written.
  .csv             header metric,project,date,value[,extra_json]
  .ndjson, .jsonl  one {"metric","project","date","value","extra"?} object per line
The store is the one the server uses: DATABASE_URL, or PGLITE_DIR when it is unset.`;

process.exitCode = await main(process.argv.slice(2));

// Private

async function main(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  const problems = args.length === 0 ? ['no files given'] : await argumentProblems(args);
  if (problems.length > 0) {
    for (const problem of problems) console.error(problem);
    console.error(`\n${USAGE}`);
    return 2;
  }
  return withCliStore((store) => importAll(store, args));
}

/** Checked before the store is opened, so a typo in the last name does not leave the first files imported alone. */
async function argumentProblems(args: string[]): Promise<string[]> {
  const problems: string[] = [];
  for (const arg of args) {
    if (arg.startsWith('-')) problems.push(`unknown option "${arg}"`);
    else if (formatOf(arg) === undefined) problems.push(`${arg}: expected a .csv, .ndjson or .jsonl file`);
    else await access(arg, constants.R_OK).catch(() => problems.push(`${arg}: the file does not exist or cannot be read`));
  }
  return problems;
}

async function importAll(store: Store, files: string[]): Promise<number> {
  let failed = false;
  for (const [index, file] of files.entries()) {
    let result: ImportResult;
    try {
      result = await importFile(store, CATALOG, file, { onProgress: showProgress });
    } catch (error) {
      clearProgress();
      console.error((error as Error).message);
      const skipped = files.slice(index + 1);
      if (skipped.length > 0) console.error(`not attempted: ${skipped.join(' ')}`);
      return 1;
    }
    clearProgress();
    failed ||= !result.ok;
    printResult(result);
  }
  return failed ? 1 : 0;
}

function printResult(result: ImportResult): void {
  if (result.ok) {
    const rate = result.seconds > 0 ? Math.round(result.rows / result.seconds) : result.rows;
    console.log(`imported ${result.rows} rows from ${result.file} in ${result.seconds.toFixed(1)} s (${rate} rows/s)`);
    return;
  }
  for (const e of result.errors) console.error(`${result.file}:${e.line}: ${e.message}`);
  const unshown = result.errorCount - result.errors.length;
  const more = unshown > 0 ? ` (the first ${result.errors.length} shown, ${unshown} more)` : '';
  console.error(`${result.file}: not imported, ${result.errorCount} bad ${result.errorCount === 1 ? 'row' : 'rows'}${more}; nothing from this file was written`);
}

function showProgress(p: ImportProgress): void {
  const line = `${p.file}: ${p.phase === 'validate' ? 'validated' : 'written'} ${p.rows} rows`;
  if (process.stderr.isTTY) process.stderr.write(`\r${line}\x1b[K`);
  else console.error(line);
}

function clearProgress(): void {
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
}
