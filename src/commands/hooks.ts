/**
 * `npm run hooks -- list [--key NAME] | create --key NAME --url URL --rule SPEC… | delete ID |
 * deliveries ID [--limit N]`: manages webhooks in the store the server uses (DATABASE_URL, or
 * the embedded PGlite, handed to the server when it holds it), with the same checks as
 * `/v1/hooks`. `create` prints the new hook, its secret included, once, as JSON on stdout.
 * Exit code 0 on success, 1 when the command could not be carried out, 2 on a usage error.
 */
import { parseArgs } from 'node:util';
import { ApiError } from '../api/api-error.js';
import { hookActions } from '../hooks/hook-actions.js';
import {
  deleteHook,
  findHook,
  keyNamesByOwner,
  listDeliveries,
  listHooks,
  ownerOfKeyName,
} from '../hooks/hook-queries.js';
import type { HookRule } from '../hooks/hook-input.js';
import type { Command, CommandOutput } from './command.js';
import { runFromCommandLine } from './run-command.js';

export type HooksArgs =
  | { kind: 'list'; key?: string | undefined }
  | {
      kind: 'create';
      key: string;
      url: string;
      rules: Record<string, unknown>[];
      metrics?: string[] | undefined;
      projects?: string[] | undefined;
      description?: string | undefined;
    }
  | { kind: 'delete'; id: string }
  | { kind: 'deliveries'; id: string; limit: number };

const USAGE = `usage: npm run hooks -- list [--key NAME]        every hook (or those of one stored key)
       npm run hooks -- create --key NAME --url URL --rule SPEC [--rule SPEC…]
                               [--metric a,b] [--project x,y] [--description TEXT]
                                              a new hook of that key; prints it with its secret, once
       npm run hooks -- delete ID             delete a hook and its deliveries
       npm run hooks -- deliveries ID [--limit N]  its latest deliveries (default 20)

SPEC is landed, revision[:MIN_ABS_PERCENT], threshold:OP:VALUE (OP one of > >= < <=) or
late[:GRACE_MINUTES]. NAME is a stored key's name (npm run keys -- list).`;

/** `hooks list | create | delete | deliveries`. */
export const hooksCommand: Command<HooksArgs> = {
  name: 'hooks',
  parse: parseHooksArgs,
  whenLeft: 'the server still runs it to the end (one statement)',
  async run({ store, catalog, config, output }, args) {
    switch (args.kind) {
      case 'list': {
        const owner = args.key === undefined ? undefined : await ownerOfKeyName(store, args.key);
        if (args.key !== undefined && owner === undefined) return noKey(output, args.key);
        const names = await keyNamesByOwner(store);
        const hooks = await listHooks(store, owner);
        if (hooks.length === 0) {
          output.err('no hooks yet; create one with: npm run hooks -- create --key NAME --url URL --rule landed\n');
          return 0;
        }
        printTable(output, [
          ['ID', 'KEY', 'ACTIVE', 'URL', 'RULES'],
          ...hooks.map((h) => [
            h.id,
            names.get(h.owner) ?? h.owner,
            h.active ? 'yes' : 'no',
            h.url,
            h.rules.map(ruleSpec).join(' '),
          ]),
        ]);
        return 0;
      }
      case 'create': {
        const owner = await ownerOfKeyName(store, args.key);
        if (owner === undefined) return noKey(output, args.key);
        const filter = {
          ...(args.metrics === undefined ? {} : { metrics: args.metrics }),
          ...(args.projects === undefined ? {} : { projects: args.projects }),
        };
        try {
          const hook = await hookActions.create({ db: store, catalog, allowPrivate: config.hooksAllowPrivate }, owner, {
            url: args.url,
            rules: args.rules,
            filter,
            description: args.description,
          });
          output.out(`${JSON.stringify(hook)}\n`);
          output.err(`Created hook ${hook.id}. Its secret will not be shown again: store it to verify signatures.\n`);
          return 0;
        } catch (error) {
          if (!(error instanceof ApiError)) throw error;
          for (const e of error.errors.length > 0 ? error.errors : [{ param: 'hook', message: error.message }])
            output.err(`${e.param}: ${e.message}\n`);
          return 1;
        }
      }
      case 'delete':
        if (!(await deleteHook(store, undefined, args.id))) {
          output.err(`no hook ${args.id}: nothing deleted\n`);
          return 1;
        }
        output.err(`Deleted hook ${args.id} and its deliveries.\n`);
        return 0;
      case 'deliveries': {
        if ((await findHook(store, undefined, args.id)) === undefined) {
          output.err(`no hook ${args.id}\n`);
          return 1;
        }
        const { deliveries } = await listDeliveries(store, args.id, args.limit, undefined);
        if (deliveries.length === 0) {
          output.err(`hook ${args.id} has no deliveries yet\n`);
          return 0;
        }
        printTable(output, [
          ['ID', 'STATE', 'ATTEMPTS', 'LAST', 'NEXT', 'EVENTS', 'CREATED'],
          ...deliveries.map((d) => [
            d.id,
            d.state,
            String(d.attempts),
            d.lastStatus === null ? (d.lastError ?? '-') : String(d.lastStatus),
            d.nextAttemptAt ?? '-',
            String(d.events.length),
            d.createdAt,
          ]),
        ]);
        return 0;
      }
    }
  },
};

// Private

function parseHooksArgs(args: string[]): HooksArgs | number {
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

function parseCommand(args: string[]): HooksArgs | string {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        key: { type: 'string' },
        url: { type: 'string' },
        rule: { type: 'string', multiple: true },
        metric: { type: 'string' },
        project: { type: 'string' },
        description: { type: 'string' },
        limit: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return (error as Error).message;
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  const [verb, ...rest] = positionals;
  const list = (text: string | undefined) => (text === undefined ? undefined : text.split(',').filter(Boolean));
  switch (verb) {
    case 'list':
      if (rest.length > 0) return 'list takes no arguments besides --key';
      return { kind: 'list', key: values.key };
    case 'create': {
      if (rest.length > 0) return `create takes no arguments besides its options; got "${rest.join(' ')}"`;
      if (values.key === undefined) return 'create needs --key NAME (the stored key that will own the hook)';
      if (values.url === undefined) return 'create needs --url URL';
      if (values.rule === undefined) return 'create needs at least one --rule SPEC';
      const rules = values.rule.map(parseRule);
      const bad = rules.find((r) => typeof r === 'string');
      if (typeof bad === 'string') return bad;
      return {
        kind: 'create',
        key: values.key,
        url: values.url,
        rules: rules as Record<string, unknown>[],
        metrics: list(values.metric),
        projects: list(values.project),
        description: values.description,
      };
    }
    case 'delete':
    case 'deliveries': {
      if (rest.length !== 1) return `${verb} needs exactly one hook ID`;
      const limit = values.limit === undefined ? 20 : /^\d{1,3}$/.test(values.limit) ? Number(values.limit) : 0;
      if (limit < 1 || limit > 500) return `--limit expects a whole number from 1 to 500; got "${values.limit}"`;
      return verb === 'delete' ? { kind: 'delete', id: rest[0]! } : { kind: 'deliveries', id: rest[0]!, limit };
    }
    case undefined:
      return 'no command given; expected list, create, delete or deliveries';
    default:
      return `unknown command "${verb}"; expected list, create, delete or deliveries`;
  }
}

/** A --rule SPEC as the rule object the API takes, or what is wrong with it. */
function parseRule(spec: string): Record<string, unknown> | string {
  const [type, ...parts] = spec.split(':');
  const number = (text: string | undefined) => (text === undefined || text === '' ? Number.NaN : Number(text));
  switch (type) {
    case 'landed':
      if (parts.length === 0) return { type };
      break;
    case 'revision':
      if (parts.length === 0) return { type };
      if (parts.length === 1) return { type, minAbsPercent: number(parts[0]) };
      break;
    case 'threshold':
      if (parts.length === 2) return { type, op: parts[0], value: number(parts[1]) };
      break;
    case 'late':
      if (parts.length === 0) return { type };
      if (parts.length === 1) return { type, graceMinutes: number(parts[0]) };
      break;
  }
  return `--rule ${JSON.stringify(spec)}: expected landed, revision[:PERCENT], threshold:OP:VALUE or late[:MINUTES]`;
}

function ruleSpec(rule: HookRule): string {
  switch (rule.type) {
    case 'landed':
      return 'landed';
    case 'revision':
      return `revision:${rule.minAbsPercent}`;
    case 'threshold':
      return `threshold:${rule.op}:${rule.value}`;
    case 'late':
      return `late:${rule.graceMinutes}`;
  }
}

function noKey(output: CommandOutput, name: string): number {
  output.err(`no active key named ${name}; see npm run keys -- list\n`);
  return 1;
}

function printTable(output: CommandOutput, rows: readonly string[][]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const row of rows)
    output.out(`${row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')}\n`);
}

await runFromCommandLine(import.meta.url, hooksCommand);
