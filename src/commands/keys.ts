import { z } from 'zod';
import { generateApiKey, hashApiKey, KEY_CACHE_MS } from '../auth/api-keys.js';
import { insertApiKey, listApiKeys, revokeApiKey } from '../db/api-key-queries.js';
import type { Queryable } from '../db/store.js';
import type { Command, CommandOutput } from './command.js';

const keysArgs = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('create'), name: z.string(), ratePerMinute: z.number().int().optional(), burst: z.number().int().optional() }),
  z.object({ kind: z.literal('list') }),
  z.object({ kind: z.literal('revoke'), name: z.string() }),
]);

export type KeysArgs = z.infer<typeof keysArgs>;

/** SQLSTATE unique_violation: the name (or, in theory, the digest) is taken. */
const UNIQUE_VIOLATION = '23505';

/** `keys create | list | revoke`: a new key is written to standard output once; only its digest is stored. */
export const keysCommand: Command<KeysArgs> = {
  name: 'keys',
  argsSchema: keysArgs,
  // Nothing to stop part-way: one statement. A key created then is stored but never shown.
  whenLeft: 'the server still runs it to the end; a key created this way was stored but never shown: revoke it and create another',
  async run({ store, output, keysChanged }, args) {
    switch (args.kind) {
      case 'create': {
        const key = generateApiKey();
        try {
          await insertApiKey(store, args.name, hashApiKey(key), { ratePerMinute: args.ratePerMinute, burst: args.burst });
        } catch (cause) {
          if ((cause as { code?: unknown }).code !== UNIQUE_VIOLATION) throw cause;
          output.err(`${await nameTaken(store, args.name)}\n`);
          return 1;
        }
        output.out(`${key}\n`);
        output.err(`Created key "${args.name}". It will not be shown again: store it now and send it as the x-api-key header.\n`);
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
          output.err(`Revoked key "${args.name}"; a running server stops accepting it within ${KEY_CACHE_MS / 1000} seconds.\n`);
          return 0;
        }
        keysChanged();
        output.err(`Revoked key "${args.name}"; the running server no longer accepts it.\n`);
        return 0;
    }
  },
};

// Private

function printTable(output: CommandOutput, keys: readonly { name: string; createdAt: string; revokedAt: string | null; ratePerMinute: number | null; burst: number | null }[]): void {
  if (keys.length === 0) {
    output.err('no keys yet; create one with: npm run keys -- create --name NAME\n');
    return;
  }
  const rows = [
    ['NAME', 'CREATED', 'REVOKED', 'RATE/MIN', 'BURST'],
    ...keys.map((k) => [k.name, k.createdAt, k.revokedAt ?? '-', k.ratePerMinute === null ? 'default' : String(k.ratePerMinute), k.burst === null ? 'default' : String(k.burst)]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const row of rows) output.out(`${row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')}\n`);
}

/** Why `name` cannot be given to a new key: a revoked key keeps its name, which `list` alone would not explain. */
async function nameTaken(store: Queryable, name: string): Promise<string> {
  const revokedAt = (await listApiKeys(store)).find((key) => key.name === name)?.revokedAt;
  return revokedAt == null
    ? `a key named ${name} already exists`
    : `the name ${name} belongs to a key revoked at ${revokedAt} (a revoked key keeps its name); choose another name`;
}
