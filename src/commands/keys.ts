/**
 * `npm run keys -- create --name NAME [--rate-per-minute N] [--burst N] | list | revoke NAME`:
 * manages the API keys of the store the server uses (DATABASE_URL, or the embedded
 * PGlite, handed to the server when it holds it). `create` prints the new key alone on
 * stdout, once; only its SHA-256 digest is stored, with the key's own rate limit when one
 * is given. Exit code 0 on success, 1 when the command could not be carried out, 2 on a
 * usage error (found before any store is opened).
 */
import { parseArgs } from 'node:util';
import { generateApiKey, hashApiKey, KEY_CACHE_MS } from '../auth/api-keys.js';
import { insertApiKey, listApiKeys, revokeApiKey } from '../db/api-key-queries.js';
import type { Queryable } from '../db/store.js';
import type { Command, CommandOutput } from './command.js';
import { runFromCommandLine } from './run-command.js';

export type KeysArgs =
  | { kind: 'create'; name: string; ratePerMinute?: number | undefined; burst?: number | undefined }
  | { kind: 'list' }
  | { kind: 'revoke'; name: string };

const USAGE = `usage: npm run keys -- create --name NAME   print a new key once and store its digest
       npm run keys -- list                 show every key's name, creation and revocation time and limits
       npm run keys -- revoke NAME          stop a key from working (at once on a server holding
                                            the embedded store, else within 5 seconds)

create also takes --rate-per-minute N and --burst N: the key's own rate limit in cost
units (--rate-per-minute 0: not limited), instead of RATE_LIMIT_PER_MINUTE / RATE_LIMIT_BURST.
NAME is 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit.
The store is the one the server uses: DATABASE_URL, or PGLITE_DIR when it is unset (a
server running on it carries the command out).`;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** SQLSTATE unique_violation: the name (or, in theory, the digest) is taken. */
const UNIQUE_VIOLATION = '23505';

/** `keys create | list | revoke`: a new key is written to standard output once; only its digest is stored. */
export const keysCommand: Command<KeysArgs> = {
  name: 'keys',
  parse: parseKeysArgs,
  // Nothing to stop part-way: one statement. A key created then is stored but never shown.
  whenLeft:
    'the server still runs it to the end; a key created this way was stored ' +
    'but never shown: revoke it and create another',
  async run({ store, output, keysChanged }, args) {
    switch (args.kind) {
      case 'create': {
        const key = generateApiKey();
        try {
          await insertApiKey(store, args.name, hashApiKey(key), {
            ratePerMinute: args.ratePerMinute,
            burst: args.burst,
          });
        } catch (cause) {
          if ((cause as { code?: unknown }).code !== UNIQUE_VIOLATION) throw cause;
          output.err(`${await nameTaken(store, args.name)}\n`);
          return 1;
        }
        output.out(`${key}\n`);
        output.err(
          `Created key "${args.name}". It will not be shown again: store it now and send it as the x-api-key header.\n`,
        );
        return 0;
      }
      case 'list':
        printTable(output, await listApiKeys(store));
        return 0;
      case 'revoke':
        if (!(await revokeApiKey(store, args.name))) {
          output.err(`no active key named ${args.name}: nothing revoked\n`);
          return 1;
        }
        if (keysChanged === undefined) {
          output.err(
            `Revoked key "${args.name}"; a running server stops accepting it within ${KEY_CACHE_MS / 1000} seconds.\n`,
          );
          return 0;
        }
        keysChanged();
        output.err(`Revoked key "${args.name}"; the running server no longer accepts it.\n`);
        return 0;
    }
  },
};

// Private

function parseKeysArgs(args: string[]): KeysArgs | number {
  const command = parseCommand(args);
  if (command === 'help') {
    console.log(USAGE);
    return 0;
  }
  if (typeof command === 'string') {
    console.error(`${command}\n\n${USAGE}`);
    return 2;
  }
  return command;
}

/** The command, 'help', or a message saying what was expected and what arrived. */
function parseCommand(args: string[]): KeysArgs | string {
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
  if (values.help) return 'help';
  const [verb, ...rest] = positionals;
  const rate = values['rate-per-minute'];
  if (verb !== 'create' && (rate !== undefined || values.burst !== undefined))
    return '--rate-per-minute and --burst go with create only';
  switch (verb) {
    case 'create': {
      if (rest.length > 0) return `create takes no arguments besides its options; got "${rest.join(' ')}"`;
      if (values.name === undefined) return 'create needs --name NAME';
      if (!NAME.test(values.name)) return badName(values.name);
      const ratePerMinute = rate === undefined ? undefined : wholeNumber('--rate-per-minute', rate, 0);
      const burst = values.burst === undefined ? undefined : wholeNumber('--burst', values.burst, 1);
      if (typeof ratePerMinute === 'string') return ratePerMinute;
      if (typeof burst === 'string') return burst;
      return { kind: 'create', name: values.name, ratePerMinute, burst };
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
  return value >= min
    ? value
    : `${option} expects a whole number from ${min} to 999999999; got ${JSON.stringify(text)}`;
}

function badName(name: string): string {
  return (
    `invalid key name ${JSON.stringify(name)}: expected 1 to 64 letters, digits, ` +
    `".", "_" or "-", starting with a letter or digit`
  );
}

function printTable(
  output: CommandOutput,
  keys: readonly {
    name: string;
    createdAt: string;
    revokedAt: string | null;
    ratePerMinute: number | null;
    burst: number | null;
  }[],
): void {
  if (keys.length === 0) {
    output.err('no keys yet; create one with: npm run keys -- create --name NAME\n');
    return;
  }
  const rows = [
    ['NAME', 'CREATED', 'REVOKED', 'RATE/MIN', 'BURST'],
    ...keys.map((k) => [
      k.name,
      k.createdAt,
      k.revokedAt ?? '-',
      k.ratePerMinute === null ? 'default' : String(k.ratePerMinute),
      k.burst === null ? 'default' : String(k.burst),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const row of rows)
    output.out(`${row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')}\n`);
}

/** Why `name` cannot be given to a new key: a revoked key keeps its name, which `list` alone would not explain. */
async function nameTaken(store: Queryable, name: string): Promise<string> {
  const revokedAt = (await listApiKeys(store)).find((key) => key.name === name)?.revokedAt;
  return revokedAt == null
    ? `a key named ${name} already exists`
    : `the name ${name} belongs to a key revoked at ${revokedAt} (a revoked key keeps its name); choose another name`;
}

await runFromCommandLine(import.meta.url, keysCommand);
