/**
 * `npm run sync -- --from URL [--key KEY] [--metric a,b] [--project x,y] [--since YYYY-MM-DD]
 * [--overlap-days N]`: mirrors another instance's `/v1` API into the store the server uses
 * (handed to the server when it holds the embedded store), series by series, each in one
 * transaction through the import's checks and write path. Incremental: first the
 * upstream's changes feed from where the last run left it (every revision and removal
 * since, however old the day; follow-changes.ts), then each series from its last stored
 * day (or the upstream's, if earlier) minus the overlap, so a second run writes only what
 * changed upstream. A series with a bad value is reported (metric, project, date) and
 * nothing of it is written; the others go on. An upstream that stays unavailable after the
 * retries stops the run; everything written until then stays. Exit code 0 when every
 * series is up to date, 1 when any is not, 2 on a usage error.
 */
import { parseArgs } from 'node:util';
import { isIsoDate } from '../dates.js';
import { followChanges, type FeedOutcome } from '../sync/follow-changes.js';
import { mirrorSeries, planMirror, type SeriesOutcome } from '../sync/mirror-series.js';
import { createUpstreamClient, UpstreamError } from '../sync/upstream-client.js';
import { counted } from '../counted.js';
import type { Command } from './command.js';
import { runFromCommandLine } from './run-command.js';

export interface SyncArgs {
  /** The upstream's base URL, e.g. https://metrics.example.com. */
  from: string;
  key: string;
  metrics?: string[] | undefined;
  projects?: string[] | undefined;
  since?: string | undefined;
  overlapDays: number;
}

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

export const syncCommand: Command<SyncArgs> = {
  name: 'sync',
  parse: parseSyncArgs,
  whenLeft:
    'the server stops the sync at its next request; the series it had finished ' +
    'stay written, and the next run resumes from them',
  async run({ store, catalog, output, signal }, args) {
    const started = Date.now();
    const client = createUpstreamClient(args.from, args.key, (why, waitMs, answered) =>
      output.err(
        `upstream ${answered ? 'busy' : 'unreachable'} (${why}); retrying in ${(waitMs / 1000).toFixed(1)} s\n`,
      ),
    );
    let plan;
    try {
      plan = await planMirror(
        store,
        catalog,
        client,
        { metrics: args.metrics, projects: args.projects, since: args.since, overlapDays: args.overlapDays },
        signal,
      );
    } catch (error) {
      output.err(`${describe(error)}\n`);
      return 1;
    }
    if (plan.unmatched.length > 0) {
      // A name the upstream lacks is a typo far more often than a wish to sync nothing of it.
      output.err(
        `${plan.unmatched.join('\n')}\nnothing synced: check --metric and --project against ${args.from}/v1/metrics\n`,
      );
      return 1;
    }
    for (const notice of plan.notices) output.err(`${notice}\n`);
    const totals = { fetched: 0, added: 0, revised: 0, removed: 0, changedSeries: new Set<number>(), failed: 0 };
    let feed: FeedOutcome;
    try {
      feed = await followChanges(
        store,
        catalog,
        client,
        { metrics: args.metrics, projects: args.projects },
        signal,
        (entries) => output.progress(`following the upstream's changes feed: ${entries} entries applied`),
      );
    } catch (error) {
      output.progress('');
      output.err(
        `${describe(error)}\nstopped while following the upstream's changes feed; ` +
          `what was applied stays, and the next run resumes from it\n`,
      );
      return 1;
    }
    output.progress('');
    output.err(`${feedLine(feed)}\n`);
    if (feed.kind === 'followed') {
      totals.fetched += feed.entries;
      totals.added += feed.written.added;
      totals.revised += feed.written.revised;
      totals.removed += feed.written.removed;
      for (const id of feed.series) totals.changedSeries.add(id);
      for (const refusal of feed.refused) output.err(`${refusal}; that entry of the changes feed was not applied\n`);
    }
    for (const [index, task] of plan.tasks.entries()) {
      output.progress(
        `syncing ${index + 1}/${plan.tasks.length} series ` +
          `(${task.metric}/${task.slug}), ${totals.added + totals.revised + totals.removed}` +
          ` ` +
          `points written`,
      );
      let outcome: SeriesOutcome;
      try {
        outcome = await mirrorSeries(store, catalog, client, task, signal);
      } catch (error) {
        output.progress('');
        output.err(
          `${describe(error)}\nstopped after ${index} of ${plan.tasks.length} series; ` +
            `what was written stays, and the next run resumes from it\n`,
        );
        return 1;
      }
      if (!outcome.ok) {
        output.progress('');
        output.err(`${outcome.error}; nothing of this series was written\n`);
        totals.failed += 1;
        continue;
      }
      const { added, revised, removed } = outcome.written;
      totals.fetched += outcome.fetched;
      totals.added += added;
      totals.revised += revised;
      totals.removed += removed;
      if (added + revised + removed > 0) totals.changedSeries.add(task.projectId);
    }
    output.progress('');
    const seconds = (Date.now() - started) / 1000;
    const written = totals.added + totals.revised + totals.removed;
    output.out(
      `synced ${plan.tasks.length - totals.failed} of ${plan.tasks.length} series ` +
        `from ${args.from} in ${seconds.toFixed(1)} s: ` +
        (`${totals.fetched} points checked (${Math.round(totals.fetched / Math.max(seconds, 0.001))}/s), ${written} ` +
          `written `) +
        (`(${totals.added} added, ${totals.revised} revised, ${totals.removed} ` +
          `removed) in ${totals.changedSeries.size} series`) +
        (`${client.retries > 0 ? `, ${client.retries} retries` : ''}` +
          `${totals.failed > 0 ? `, ${totals.failed} refused` : ''}`) +
        (`${feed.kind === 'followed' && feed.refused.length > 0 ? `, ${counted(feed.refused.length, 'changes feed entry', 'changes feed entries')} refused` : ''}` +
          `\n`),
    );
    return totals.failed > 0 || (feed.kind === 'followed' && feed.refused.length > 0) ? 1 : 0;
  },
};

// Private

function parseSyncArgs(argv: string[]): SyncArgs | number {
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
  if (parsed.from === undefined || !/^https?:\/\/[^/]/.test(parsed.from))
    problems.push("--from: give the upstream service's URL, http:// or https://");
  if (key === undefined || key === '') problems.push("--key: give the upstream's API key (or set UPSTREAM_API_KEY)");
  if (parsed.since !== undefined && !isIsoDate(parsed.since))
    problems.push(`--since: expected a date YYYY-MM-DD, got ${JSON.stringify(parsed.since)}`);
  const overlap = parsed['overlap-days'] === undefined ? 7 : Number(parsed['overlap-days']);
  if (!Number.isInteger(overlap) || overlap < 0 || overlap > 3650)
    problems.push('--overlap-days: expected a whole number of days from 0 to 3650');
  if (problems.length > 0) return usage(problems);
  return {
    from: parsed.from!,
    key: key!,
    metrics: list(parsed.metric),
    projects: list(parsed.project),
    since: parsed.since,
    overlapDays: overlap,
  };
}

function list(value: string | undefined): string[] | undefined {
  return value === undefined
    ? undefined
    : value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
}

function usage(problems: string[]): number {
  for (const problem of problems) console.error(problem);
  console.error(`\n${USAGE}`);
  return 2;
}

/** What following the changes feed did, in one line. */
function feedLine(feed: FeedOutcome): string {
  switch (feed.kind) {
    case 'started':
      return (
        'changes feed: position kept; from the next run on, every revision upstream ' + 'is copied, however old the day'
      );
    case 'followed':
      return (
        `changes feed: ${feed.entries} entries since the last ` +
        `run, ${feed.written.added + feed.written.revised + feed.written.removed}` +
        ` ` +
        `points written`
      );
    case 'unavailable':
      return (
        `changes feed: not offered (${feed.reason}); only each series' last days ` +
        `are compared, so older revisions upstream need --since`
      );
    case 'restarted':
      return (
        `changes feed: the position kept was refused (${feed.reason}); kept the ` +
        `feed's end again: revisions upstream before now may need --since`
      );
  }
}

function describe(error: unknown): string {
  if (error instanceof UpstreamError) return error.message;
  if ((error as Error).name === 'AbortError') return 'interrupted';
  return `sync failed: ${(error as Error).message}`;
}

await runFromCommandLine(import.meta.url, syncCommand);
