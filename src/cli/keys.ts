/**
 * `npm run keys -- create --name NAME [--rate-per-minute N] [--burst N] | list | revoke NAME`:
 * manages the API keys of the store the server uses (DATABASE_URL, or the embedded
 * PGlite, handed to the server when it holds it). `create` prints the new key alone on
 * stdout, once; only its SHA-256 digest is stored, with the key's own rate limit when one
 * is given. Exit code 0 on success, 1 when the command could not be carried out, 2 on a
 * usage error (found before any store is opened).
 */
import { parseArgs } from 'node:util';
import { keysCommand, type KeysArgs } from '../commands/keys.js';
import { runCommand } from '../commands/run-command.js';

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

process.exitCode = await main(process.argv.slice(2));

// Private

async function main(args: string[]): Promise<number> {
  const command = parseCommand(args);
  if (command === 'help') {
    console.log(USAGE);
    return 0;
  }
  if (typeof command === 'string') {
    console.error(`${command}\n\n${USAGE}`);
    return 2;
  }
  return runCommand(keysCommand, command);
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
  return value >= min ? value : `${option} expects a whole number from ${min} to 999999999; got ${JSON.stringify(text)}`;
}

function badName(name: string): string {
  return `invalid key name ${JSON.stringify(name)}: expected 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit`;
}
