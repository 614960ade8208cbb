import { z } from 'zod';
import { importFile, type ImportProgress, type ImportResult } from '../import/import-files.js';
import type { Command, CommandOutput } from './command.js';
import { counted } from '../counted.js';

const importArgs = z.object({
  /** Absolute paths, so a server with another working folder reads the same files. */
  files: z.array(z.string()).min(1),
});

export type ImportArgs = z.infer<typeof importArgs>;

/**
 * `import FILE…`: each file all or nothing, one after another. A file with bad rows is
 * reported and the next one is still imported; a failure while writing stops the run.
 */
export const importCommand: Command<ImportArgs> = {
  name: 'import',
  argsSchema: importArgs,
  whenLeft: 'the server stops the import at its next row and rolls back the file it was on; files it had finished stay imported',
  async run({ store, catalog, output, signal }, { files }) {
    let failed = false;
    for (const [index, file] of files.entries()) {
      let result: ImportResult;
      try {
        result = await importFile(store, catalog, file, { signal, onProgress: (p) => output.progress(describeProgress(p)) });
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

function describeProgress(p: ImportProgress): string {
  return `${p.file}: ${p.phase === 'validate' ? 'validated' : 'written'} ${counted(p.rows, 'row')}`;
}

function report(output: CommandOutput, result: ImportResult): void {
  if (result.ok) {
    const rate = result.seconds > 0 ? Math.round(result.rows / result.seconds) : result.rows;
    const { added, revised, removed } = result.written;
    output.out(`imported ${counted(result.rows, 'row')} from ${result.file} in ${result.seconds.toFixed(1)} s (${rate} rows/s): ${counted(added, 'point')} added, ${revised} revised, ${removed} removed\n`);
    return;
  }
  for (const e of result.errors) output.err(`${result.file}:${e.line}: ${e.message}\n`);
  if (result.badHeader) {
    output.err(`${result.file}: not imported, no row can be read without that header; nothing from this file was written\n`);
    return;
  }
  const unshown = result.errorCount - result.errors.length;
  const more = unshown > 0 ? ` (the first ${result.errors.length} shown, ${unshown} more)` : '';
  output.err(`${result.file}: not imported, ${counted(result.errorCount, 'bad row')}${more}; nothing from this file was written\n`);
}
