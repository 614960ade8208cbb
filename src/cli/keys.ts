/**
 * `npm run keys -- create --name NAME [--rate-per-minute N] [--burst N] | list | revoke NAME`:
 * manages the API keys of the store the server uses (DATABASE_URL, or the embedded
 * PGlite). `create` prints the new key alone on stdout, once; only its SHA-256 digest is
 * stored, with the key's own rate limit when one is given.
 * Exit code 0 on success, 1 when the command could not be carried out, 2 on a usage error.
 */
import { parseArgs } from 'node:util';
import { generateApiKey, hashApiKey } from '../auth/api-keys.js';
import { insertApiKey, listApiKeys, revokeApiKey, type KeyRateLimits } from '../db/api-key-queries.js';
import type { Store } from '../db/store.js';
import { withCliStore } from './open-cli-store.js';

const USAGE = `usage: npm run keys -- create --name NAME   print a new key once and store its digest
       npm run keys -- list                 show every key's name, creation and revocation time
       npm run keys -- revoke NAME          stop a key from working (within a few seconds)

create also takes --rate-per-minute N and --burst N: the key's own rate limit in cost
units (--rate-per-minute 0: not limited), instead of RATE_LIMIT_PER_MINUTE / RATE_LIMIT_BURST.
NAME is 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit.
The store is the one the server uses: DATABASE_URL, or PGLITE_DIR when it is unset.`;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** SQLSTATE unique_violation: the name (or, in theory, the digest) is taken. */
const UNIQUE_VIOLATION = '23505';

type Command = { kind: 'help' } | { kind: 'create'; name: string; limits: KeyRateLimits } | { kind: 'list' } | { kind: 'revoke'; name: string };

process.exitCode = await main(process.argv.slice(2));

// Private

async function main(args: string[]): Promise<number> {
  const command = parseCommand(args);
  if (typeof command === 'string') {
    console.error(`${command}\n\n${USAGE}`);
    return 2;
  }
  if (command.kind === 'help') {
    console.log(USAGE);
    return 0;
  }
  // Expected failures (a taken name, an unknown name, an unreachable database) print one line, no stack.
  return withCliStore((store) => run(store, command));
}

/** The command, or a message saying what was expected and what arrived. */
function parseCommand(args: string[]): Command | string {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        'rate-per-minute': { type: 'string' },
        burst: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return (error as Error).message;
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: 'help' };
  const [verb, ...rest] = positionals;
  const rate = values['rate-per-minute'];
  if (verb !== 'create' && (rate !== undefined || values.burst !== undefined)) return '--rate-per-minute and --burst go with create only';
  switch (verb) {
    case 'create': {
      if (rest.length > 0) return `create takes no arguments besides its options; got "${rest.join(' ')}"`;
      if (values.name === undefined) return 'create needs --name NAME';
      if (!NAME.test(values.name)) return badName(values.name);
      const ratePerMinute = rate === undefined ? undefined : wholeNumber('--rate-per-minute', rate, 0);
      const burst = values.burst === undefined ? undefined : wholeNumber('--burst', values.burst, 1);
      if (typeof ratePerMinute === 'string') return ratePerMinute;
      if (typeof burst === 'string') return burst;
      return { kind: 'create', name: values.name, limits: { ratePerMinute, burst } };
    }
    case 'list':
      if (rest.length > 0 || values.name !== undefined) return 'list takes no arguments';
      return { kind: 'list' };
    case 'revoke': {
      if (values.name !== undefined || rest.length !== 1) return 'revoke needs exactly one NAME (revoke NAME)';
      const name = rest[0]!;
      return NAME.test(name) ? { kind: 'revoke', name } : badName(name);
    }
    case undefined:
      return 'no command given; expected create, list or revoke';
    default:
      return `unknown command "${verb}"; expected create, list or revoke`;
  }
}

/** The option's value as a whole number of at least `min`, or a message saying what was expected. */
function wholeNumber(option: string, text: string, min: number): number | string {
  const value = /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN;
  return value >= min ? value : `${option} expects a whole number from ${min} to 999999999; got ${JSON.stringify(text)}`;
}

function badName(name: string): string {
  return `invalid key name ${JSON.stringify(name)}: expected 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit`;
}

async function run(store: Store, command: Exclude<Command, { kind: 'help' }>): Promise<void> {
  switch (command.kind) {
    case 'create': {
      const key = generateApiKey();
      try {
        await insertApiKey(store, command.name, hashApiKey(key), command.limits);
      } catch (cause) {
        if ((cause as { code?: unknown }).code === UNIQUE_VIOLATION) {
          throw new Error(`a key named ${command.name} already exists`, { cause });
        }
        throw cause;
      }
      process.stdout.write(`${key}\n`);
      console.error(`Created key "${command.name}". It will not be shown again: store it now and send it as the x-api-key header.`);
      return;
    }
    case 'list':
      printTable(await listApiKeys(store));
      return;
    case 'revoke':
      if (!(await revokeApiKey(store, command.name))) throw new Error(`no active key named ${command.name}: nothing revoked`);
      console.error(`Revoked key "${command.name}"; a running server stops accepting it within a few seconds.`);
  }
}

function printTable(keys: readonly { name: string; createdAt: string; revokedAt: string | null }[]): void {
  if (keys.length === 0) {
    console.error('no keys yet; create one with: npm run keys -- create --name NAME');
    return;
  }
  const rows = [['NAME', 'CREATED', 'REVOKED'], ...keys.map((k) => [k.name, k.createdAt, k.revokedAt ?? '-'])];
  const widths = [0, 1].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const row of rows) console.log(`${row[0]!.padEnd(widths[0]!)}  ${row[1]!.padEnd(widths[1]!)}  ${row[2]}`);
}
