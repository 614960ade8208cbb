/**
 * `npm run import -- FILE...`: loads CSV or NDJSON files of daily points into the store
 * the server uses (DATABASE_URL, or the embedded PGlite, handed to the server when it
 * holds it), each file all or nothing. Exit code 0 when every file was imported, 1 when
 * any was not, 2 on a usage error (found before any store is opened).
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { importFile, type ImportProgress, type ImportResult } from '../import/import-files.js';
import { formatOf } from '../import/parse-rows.js';
import type { Command, CommandOutput } from './command.js';
import { runFromCommandLine } from './run-command.js';
import { counted } from '../counted.js';

export interface ImportArgs {
  /** Absolute paths, so a server with another working folder reads the same files. */
  files: string[];
}

const USAGE = `usage: npm run import -- FILE...

Imports daily points from each FILE, one after another; a file with any bad row is
reported and nothing from it is written.
  .csv             header metric,project,date,value[,extra_json]
  .ndjson, .jsonl  one {"metric","project","date","value","extra"?} object per line
The store is the one the server uses: DATABASE_URL, or PGLITE_DIR when it is unset (a
server running on it carries the import out).`;

/**
 * `import FILE…`: each file all or nothing, one after another. A file with bad rows is
 * reported and the next one is still imported; a failure while writing stops the run.
 */
export const importCommand: Command<ImportArgs> = {
  name: 'import',
  parse: parseImportArgs,
  whenLeft:
    'the server stops the import at its next row and rolls back the file it ' +
    'was on; files it had finished stay imported',
  async run({ store, catalog, output, signal }, { files }) {
    let failed = false;
    for (const [index, file] of files.entries()) {
      let result: ImportResult;
      try {
        result = await importFile(store, catalog, file, {
          signal,
          onProgress: (p) => output.progress(describeProgress(p)),
        });
      } catch (error) {
        output.progress('');
        output.err(`${(error as Error).message}\n`);
        const skipped = files.slice(index + 1);
        if (skipped.length > 0) output.err(`not attempted: ${skipped.join(' ')}\n`);
        return 1;
      }
      output.progress('');
      failed ||= !result.ok;
      report(output, result);
    }
    return failed ? 1 : 0;
  },
};

// Private

async function parseImportArgs(argv: string[]): Promise<ImportArgs | number> {
  // Not strict: every argument that is no file is reported below, in the order given.
  const { values, tokens } = parseArgs({
    args: argv,
    strict: false,
    allowPositionals: true,
    tokens: true,
    options: { help: { type: 'boolean', short: 'h' } },
  });
  if (values.help === true) {
    console.log(USAGE);
    return 0;
  }
  const problems = argv.length === 0 ? ['no files given'] : await argumentProblems(argv, tokens);
  if (problems.length > 0) {
    for (const problem of problems) console.error(problem);
    console.error(`\n${USAGE}`);
    return 2;
  }
  return { files: argv.map((file) => resolve(file)) };
}

/** Checked before the store is opened, so a typo in the last name does not leave the first files imported alone. */
async function argumentProblems(argv: string[], tokens: readonly { kind: string; index: number }[]): Promise<string[]> {
  const problems: string[] = [];
  // A group of short options (`-ab`) is one argument and one problem.
  for (const index of new Set(tokens.map((token) => token.index))) {
    const arg = argv[index]!;
    if (arg.startsWith('-')) problems.push(`unknown option "${arg}"`);
    else if (formatOf(arg) === undefined) problems.push(`${arg}: expected a .csv, .ndjson or .jsonl file`);
    else
      await access(arg, constants.R_OK).catch(() => problems.push(`${arg}: the file does not exist or cannot be read`));
  }
  return problems;
}

function describeProgress(p: ImportProgress): string {
  return `${p.file}: ${p.phase === 'validate' ? 'validated' : 'written'} ${counted(p.rows, 'row')}`;
}

function report(output: CommandOutput, result: ImportResult): void {
  if (result.ok) {
    const rate = result.seconds > 0 ? Math.round(result.rows / result.seconds) : result.rows;
    const { added, revised, removed } = result.written;
    output.out(
      `imported ${counted(result.rows, 'row')} from ${result.file} in ${result.seconds.toFixed(1)} ` +
        `s (${rate} rows/s): ${counted(added, 'point')} added, ${revised} revised, ${removed} ` +
        `removed\n`,
    );
    return;
  }
  for (const e of result.errors) output.err(`${result.file}:${e.line}: ${e.message}\n`);
  if (result.badHeader) {
    output.err(
      `${result.file}: not imported, no row can be read without that header; nothing from this file was written\n`,
    );
    return;
  }
  const unshown = result.errorCount - result.errors.length;
  const more = unshown > 0 ? ` (the first ${result.errors.length} shown, ${unshown} more)` : '';
  output.err(
    `${result.file}: not imported, ${counted(result.errorCount, 'bad row')}${more}; ` +
      `nothing from this file was written\n`,
  );
}

await runFromCommandLine(import.meta.url, importCommand);
