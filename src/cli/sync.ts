/**
 * `npm run sync -- --from URL [--key KEY] [--metric a,b] [--project x,y] [--since YYYY-MM-DD]
 * [--overlap-days N]`: mirrors another instance's /v1 API into the store the server uses
 * (handed to the server when it holds the embedded store). Exit code 0 when every series
 * is up to date, 1 when any is not, 2 on a usage error.
 */
import { parseArgs } from 'node:util';
import { runCommand } from '../commands/run-command.js';
import { syncCommand, type SyncArgs } from '../commands/sync.js';
import { isIsoDate } from '../dates.js';

const USAGE = `usage: npm run sync -- --from URL [--key KEY] [options]

Mirrors the daily points of another metrics service (its /v1 REST API) into this store,
series by series, each all or nothing, through the same checks as an import.
  --from URL          the upstream service, e.g. https://metrics.example.com
  --key KEY           its API key (or set UPSTREAM_API_KEY, which keeps it out of ps)
  --metric a,b        only these metrics
  --project x,y       only these projects
  --since YYYY-MM-DD  fetch every series from this day (default: each series' last stored day,
                      or the upstream's if earlier; all of it when the upstream has earlier days)
  --overlap-days N    days before the last stored day fetched again for late revisions (default 7)
Each run first applies the upstream's changes feed from where the last one left it, so every
revision upstream arrives, however old its day; the first run only notes where the feed ends.
A second run fetches only what is new; a series with a bad value is reported and skipped.`;

process.exitCode = await main(process.argv.slice(2));

// Private

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      options: {
        from: { type: 'string' },
        key: { type: 'string' },
        metric: { type: 'string' },
        project: { type: 'string' },
        since: { type: 'string' },
        'overlap-days': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (error) {
    return usage([(error as Error).message]);
  }
  if (parsed.help === true) {
    console.log(USAGE);
    return 0;
  }
  const problems: string[] = [];
  const key = parsed.key ?? process.env.UPSTREAM_API_KEY;
  if (parsed.from === undefined || !/^https?:\/\/[^/]/.test(parsed.from)) problems.push('--from: give the upstream service\'s URL, http:// or https://');
  if (key === undefined || key === '') problems.push('--key: give the upstream\'s API key (or set UPSTREAM_API_KEY)');
  if (parsed.since !== undefined && !isIsoDate(parsed.since)) problems.push(`--since: expected a date YYYY-MM-DD, got ${JSON.stringify(parsed.since)}`);
  const overlap = parsed['overlap-days'] === undefined ? 7 : Number(parsed['overlap-days']);
  if (!Number.isInteger(overlap) || overlap < 0 || overlap > 3650) problems.push('--overlap-days: expected a whole number of days from 0 to 3650');
  if (problems.length > 0) return usage(problems);
  const args: SyncArgs = {
    from: parsed.from!,
    key: key!,
    metrics: list(parsed.metric),
    projects: list(parsed.project),
    since: parsed.since,
    overlapDays: overlap,
  };
  return runCommand(syncCommand, args);
}

function list(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

function usage(problems: string[]): number {
  for (const problem of problems) console.error(problem);
  console.error(`\n${USAGE}`);
  return 2;
}
