import { existsSync } from 'node:fs';

/**
 * The folder holding the service's package.json, found from this module's place: `src/`
 * when run from source (tests), `dist/src/` once transpiled or compiled. Files that ship
 * beside the code (migrations, schema.graphql) are found from here.
 */
export const PACKAGE_ROOT: URL = findPackageRoot(new URL('./', import.meta.url));

// Private

function findPackageRoot(start: URL): URL {
  for (let dir = start; ; dir = new URL('../', dir)) {
    if (existsSync(new URL('package.json', dir))) return dir;
    if (dir.pathname === '/') throw new Error(`no package.json above ${start.pathname}`);
  }
}
