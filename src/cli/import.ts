/**
 * `npm run import -- FILE...`: loads CSV or NDJSON files of daily points into the store
 * the server uses (DATABASE_URL, or the embedded PGlite, handed to the server when it
 * holds it), each file all or nothing. Exit code 0 when every file was imported, 1 when
 * any was not, 2 on a usage error (found before any store is opened).
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { resolve } from 'node:path';
import { importCommand } from '../commands/import.js';
import { runCommand } from '../commands/run-command.js';
import { formatOf } from '../import/parse-rows.js';

const USAGE = `usage: npm run import -- FILE...

Imports daily points from each FILE, one after another; a file with any bad row is
reported and nothing from it is written.
  .csv             header metric,project,date,value[,extra_json]
  .ndjson, .jsonl  one {"metric","project","date","value","extra"?} object per line
The store is the one the server uses: DATABASE_URL, or PGLITE_DIR when it is unset (a
server running on it carries the import out).`;

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
  return runCommand(importCommand, { files: args.map((file) => resolve(file)) });
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
