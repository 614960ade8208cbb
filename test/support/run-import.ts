import { CATALOG } from '../../src/catalog/load-catalog.js';
import { importCommand } from '../../src/commands/import.js';
import { loadConfig } from '../../src/config.js';
import type { Store } from '../../src/db/store.js';

/** Runs `npm run import FILE` in-process against `store`, with what it printed and its exit code. */
export async function runImport(store: Store, file: string): Promise<{ code: number; out: string; err: string }> {
  const said = { out: '', err: '' };
  const output = {
    out: (t: string) => void (said.out += t),
    err: (t: string) => void (said.err += t),
    progress: () => {},
  };
  const context = { store, catalog: CATALOG, config: loadConfig({}), output, signal: new AbortController().signal };
  const code = await importCommand.run(context, { files: [file] });
  return { code, ...said };
}
