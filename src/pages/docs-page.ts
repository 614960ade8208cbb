import { ERROR_KINDS } from '../api/api-error.js';
import { GRAPHQL_LIMITS } from '../limits/graphql-limits.js';
import type { PageCall, PageServices } from './page-services.js';
import { counted } from '../counted.js';
import { COST_DOCS } from './cost-docs.js';
import { hooksDocsSection } from './hooks-docs.js';
import { sendWhole } from '../http/send-json.js';

/**
 * `GET /docs`: the human page for both APIs, every decision the REST contract leaves open, and the
 * problem types; needs no key.
 */
export function handleDocsPage({ req, res, services }: PageCall): Promise<void> {
  const headers = [
    ['content-type', 'text/html; charset=utf-8'],
    ['cache-control', 'public, max-age=300'],
    ['content-security-policy', CSP],
  ] as const;
  return sendWhole(req, res, { headers, body: Buffer.from(renderDocs(services)), compress: false });
}

/** The page's HTML; `/docs.md` and `/llms.txt` are made from it (docs-markdown.ts). */
export function renderDocs({ catalog, config, store }: PageServices): string {
  const metrics = catalog.metrics
    .map(
      (m) =>
        `<li><code>GET /v1/metrics/${m.name}</code> — ${m.valueKind}` +
        `${m.projectRequired ? ', <code>project</code> required' : ''}` +
        `; ${counted(m.projects.length, 'project')}; in ${html(m.unit)}; lands by ${m.expectedBy} UTC the next day` +
        `${m.stabilizationDays > 0 ? `, provisional for ${counted(m.stabilizationDays, 'day')}` : ', never revised'}` +
        `<br><small>${html(m.methodology)}</small></li>`,
    )
    .join('\n');
  const problems = Object.entries(ERROR_KINDS)
    .map(
      ([kind, k]) =>
        `<li id="problem-${kind}"><code>${k.status}</code> <b>${k.title}</b> — ` +
        `type <code>/docs#problem-${kind}</code>, GraphQL code <code>${k.graphqlCode}` +
        `</code></li>`,
    )
    .join('\n');
  return (
    `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Metrics API</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem ` +
    `auto;padding:0 1rem}code{background:#f3f3f3;padding:0 .2em}li{margin:.2em ` +
    `0}</style>
</head><body>
<h1>Metrics API</h1>
<p>Daily metric time series per project, over REST (<code>/v1</code>) ` +
    `and GraphQL (<a href="/graphql">/graphql</a>, with GraphiQL);
charts of any series in the <a href="/explore">explorer</a>.
The machine-readable REST contract is <code>GET /v1/openapi.json</code> ` +
    `(OpenAPI 3.1); the GraphQL schema is introspectable.</p>

<h2 id="keys">Keys</h2>
<ul>
<li>Every <code>/v1</code> and <code>/graphql</code> request needs the ` +
    `<code>x-api-key</code> header; only the header counts (a key in the query ` +
    `string or a cookie is ignored).
It is checked before anything else is parsed. Missing or unknown: 401 ` +
    `with <code>WWW-Authenticate: ApiKey header="x-api-key"</code>.</li>
<li><code>/mcp</code> takes the key as <code>Authorization: Bearer &lt;key&gt;</code> too ` +
    `(MCP clients send bearer tokens); its 401 is the same problem, with ` +
    `<code>WWW-Authenticate: ApiKey header="x-api-key", Bearer</code>.</li>
<li>This page, <code>/docs.md</code>, <code>/llms.txt</code>, GraphiQL's page, <code>/healthz</code> and <code>/readyz</code> ` +
    `need no key. No answer to a request without a key ever contains one:
GraphiQL's headers editor starts empty and keeps what you type in your ` +
    `browser.</li>
<li>Keys are stored as SHA-256 digests and shown once at creation; a ` +
    `revoked key stops working within 5 s, and its open subscriptions end within ` +
    `a second after that.</li>
${config.metrics === 'off' ? '' : `<li><code>GET /metrics</code> gives the service's figures in Prometheus text format ${config.metrics === 'on' ? 'to a key holder (one unit of its budget)' : 'without a key'}.</li>`}
</ul>

<h2 id="rest">REST</h2>
<p><code>GET /v1/metrics/&lt;name&gt;?project=a,b&amp;start_date=YYYY-MM-DD&amp;end_date=YYYY-MM-DD</code> ` +
    `returns one key per requested project,
in request order, each an array of <code>{date, value}</code> ascending ` +
    `by date (<code>etf-num-products</code> points also carry their extra fields).
<code>GET /v1/metrics</code> lists the catalog with each project's stored ` +
    `date coverage.</p>
<ul>${metrics}</ul>
<p id="quality">Each catalog entry (REST <code>/v1/metrics</code>, GraphQL <code>metrics</code>) gives the ` +
    `metric's <code>unit</code>, <code>methodology</code>, <code>tags</code>, <code>expectedBy</code> ` +
    `(day D normally lands by D + 1 at that UTC time) and <code>stabilizationDays</code>.
A project is <code>stale</code> when its last stored day is older than the last day that should have landed ` +
    `by now (GraphQL <code>Series.freshness</code> gives <code>expectedLastDate</code>, <code>lastDate</code>, ` +
    `<code>lastWriteAt</code>, <code>lagDays</code> and <code>stale</code>).
A point's <code>status</code> (GraphQL <code>DataPoint.status</code>, or <code>include=status</code> on an ` +
    `export) is <code>PROVISIONAL</code> while fewer than <code>stabilizationDays</code> have passed since its ` +
    `day's first write, else <code>REVISED</code> when it was written more than once, else <code>FINAL</code>; ` +
    `a bucket is provisional when any of its days is, else revised when any of them was; with ` +
    `<code>as_of</code>, as known then.</p>

<h2 id="options">Time-series options (extensions)</h2>
<p>Optional parameters of <code>/v1/metrics/&lt;name&gt;</code> and <code>/v1/export</code> ` +
    `(GraphQL: the <code>metric</code> field's arguments, in upper case).
A request without them is answered exactly as the contract says; <code>interval=day</code> ` +
    `alone is the same stored series, byte for byte.</p>
<ul>
<li><code>interval=day|week|month|quarter|year</code>: days are UTC calendar ` +
    `dates; buckets are calendar aligned (ISO weeks from Monday, months, quarters ` +
    `from
Jan/Apr/Jul/Oct 1, years from Jan 1) and labelled by their first day, ` +
    `even when the range starts inside one. Only days inside [start_date, end_date] ` +
    `are aggregated.
GraphQL's <code>count</code> says how many daily values are behind a ` +
    `point (fewer than the bucket's days: a partial bucket; 0: a filled one).</li>
<li><code>aggregation=sum|avg|min|max|first|last</code>: omitted, each ` +
    `metric's default applies (listed by <code>GET /v1/metrics</code>): flows ` +
    `and counts add up,
stocks take the last day, prices, rates, yields and ratios average. Integer ` +
    `metrics stay whole under sum, min, max, first and last; avg gives decimals.
<code>etf-num-products</code>' extra fields are aggregated the same way.</li>
<li><code>fill=none|null|zero|previous</code>: a bucket without data, ` +
    `between the series' first and last stored day (never outside), is left ` +
    `out (none, the default),
given a null value, a 0, or the last known value (carried from before ` +
    `the range if need be).</li>
<li><code>transform=moving_average|change|percent_change|cumulative_sum</code>, ` +
    `after buckets and fill: the mean of the last <code>window</code> calendar ` +
    `buckets
(<code>window</code>, default 7, 1–3650; warmed up from data before the ` +
    `range, so the first point has a full window where history allows);
the change against the calendar-previous bucket (not the previous stored ` +
    `one); the percent change against it, as (v − prev) / |prev| × 100, so ` +
    `3 → 4 is 33.33…;
a running sum from the range's first bucket. A percentage from a missing ` +
    `or zero previous bucket, and any transform of a bucket without a value, ` +
    `is <code>null</code>:
never ∞, NaN, or a number made from a gap. With a transform, and on a ` +
    `filled bucket (whatever its value), extra fields are left out.</li>
<li>Responses carry <code>Last-Modified</code> (the newest write to any ` +
    `series of the answer) besides the <code>ETag</code>; without <code>If-None-Match</code>,
an <code>If-Modified-Since</code> not earlier than it gives 304.</li>
<li><code>as_of=&lt;RFC 3339 instant&gt;</code> or <code>as_of=YYYY-MM-DD</code> ` +
    `(the end of that UTC day): the values as they were served at that instant,
for backtests that must not see later corrections. A point first written ` +
    `later is absent; a value revised or removed later shows what was served ` +
    `then.
Every option above applies to that view. GraphQL: <code>metric(asOf: ` +
    `DateTime)</code>, and each point's <code>revisedAt</code> tells when its ` +
    `served value was written; a series' <code>firstDate</code>, <code>lastDate</code> ` +
    `and <code>updatedAt</code> are as of that instant too.
Without <code>as_of</code> the answer is today's data.</li>
<li><code>vintage=latest|first_release|known_after</code> and <code>lag_days=K</code> ` +
    `(GraphQL <code>metric(vintage: Vintage = LATEST, lagDays: Int)</code>): which of each day's values ` +
    `is read from its revision history.
<code>latest</code> (the default) is the value served now, or at <code>as_of</code>; ` +
    `<code>first_release</code> the first value ever written for the day, even one removed since;
<code>known_after</code> with <code>lag_days</code> (0–3650, required with it and refused without it) ` +
    `the value standing at the end of UTC day D + K, that is written before 00:00 UTC of D + K + 1 ` +
    `and not yet replaced then, absent when none was.
For a backtest that runs daily, <code>known_after&amp;lag_days=0</code> is each day's value as it ` +
    `was known that day. With <code>as_of</code> nothing written after it counts.
Buckets, fill and transforms then apply to the values chosen. Cost: the same request's cost without ` +
    `it, plus one unit per 3,650 history rows (replaced or removed values) of its projects in its range, ` +
    `counted before the read.</li>
<li><code>limit_per_project=N</code> (1–10000; GraphQL <code>limitPerProject</code>): only the newest N ` +
    `points (buckets) of each series within the range, still ascending; <code>limit_per_project=1</code> ` +
    `is the latest value. Priced by what is read: a daily series reads only those N days.</li>
<li><code>GET /v1/formula?expr=…&amp;input=p:priority-fees-usd&amp;input=b:transaction-base-fee-total-usd[:sum]</code> ` +
    `(GraphQL <code>formula</code>): an expression per bucket of stored metrics, answered as ` +
    `<code>{"slug":[{date, value}]}</code>. Each input is bucketed with its own aggregation (its ` +
    `metric's default), the inputs are joined on (project, bucket); a bucket an input lacks has no point ` +
    `(with <code>fill=null</code> a null one). Operators + − * / ^ (right-associative), unary minus ` +
    `(binding tightest), parentheses, numbers, input names, abs min max coalesce ln exp sqrt; at most 8 ` +
    `inputs, 500 characters, 64 nodes. Division by zero, ln or sqrt out of range and results beyond ` +
    `about 1e300 are <code>null</code>. Projects: those every input allows, or with <code>group</code> a group's among them. Priced as the sum of its ` +
    `inputs. Derived metrics (<code>priority-fee-share-pct</code> = 100 × p / (p + b)) are served by ` +
    `<code>/v1/metrics/&lt;name&gt;</code> like stored ones and listed with their <code>formula</code>.</li>
<li>Cost: one unit per 365 points asked for per project, or per 3,650 ` +
    `days read (the range and any warm-up), whichever is more: a yearly view ` +
    `of ten years is cheap,
a daily view of everything is not.</li>
</ul>

<h2 id="export">Bulk export</h2>
<p><code>GET /v1/export?metric=a,b&amp;project=x,y&amp;start_date=…&amp;end_date=…&amp;format=csv|ndjson|parquet|arrow</code> ` +
    `plus the options above streams long rows
<code>metric,project,date,value</code> (CSV with a header, the default; ` +
    `NDJSON one object per line) as a download, ordered by metric and project ` +
    `as requested
(catalog order when <code>project</code> is omitted), then date. Omitted ` +
    `<code>project</code> means every project of each metric (a 400 where a ` +
    `metric requires projects);
a project one of the metrics does not allow is a 400 naming the pair. ` +
    `Each metric's dates and values equal its <code>/v1/metrics/&lt;name&gt;</code> ` +
    `answer; a missing value is an empty
CSV field or <code>null</code>. Extra fields (<code>etf-num-products</code>' ` +
    `spot, futures, leveraged) are left out unless <code>extra=include</code>, ` +
    `which adds them as
<code>npm run import</code> reads them (a fifth CSV column <code>extra_json</code>, ` +
    `an NDJSON key <code>extra</code>): only such an export imports back whole, ` +
    `and importing
one without them stores those points without their extra fields. <code>include=status</code> adds each ` +
    `point's <a href="#quality">status</a> as a last column (CSV <code>status</code>, NDJSON key ` +
    `<code>status</code>); without it the rows are as they always were. Memory ` +
    `stays flat for any size; a client that leaves stops the export (its query ` +
    `is cancelled, or read no further than the next batch).</p>
<p><code>format=parquet</code> (a Parquet file, <code>application/vnd.apache.parquet</code>) and ` +
    `<code>format=arrow</code> (an Arrow IPC stream, <code>application/vnd.apache.arrow.stream</code>) ` +
    `hold the same rows as typed columns: <code>metric</code> and <code>project</code> ` +
    `(dictionary-encoded strings), <code>date</code> (DATE), <code>value</code> (DOUBLE, null where the ` +
    `series has none) and, with <code>extra=include</code>, one DOUBLE column per extra field. They are ` +
    `written in batches of 16,384 rows (a Parquet row group, an Arrow record batch) as they are read, so ` +
    `memory stays flat here too. Pandas: <code>pd.read_parquet("metrics-export.parquet")</code>; ` +
    `polars: <code>pl.read_ipc_stream("metrics-export.arrow")</code>; DuckDB: ` +
    `<code>select * from 'metrics-export.parquet'</code>.</p>

<h2 id="totals">Groups, totals and rankings</h2>
<p><code>GET /v1/groups</code> lists named groups of projects (<code>{"groups":[{"name","description","projects"}]}</code>); ` +
    `for a metric, a group's members are its projects the metric allows. Wherever a <code>group</code> is taken, ` +
    `<code>project=a,b</code> may name the members instead (both: a 400; neither: every project of the metric).</p>
<p><code>GET /v1/totals/&lt;name&gt;?group=…&amp;op=sum|avg|min|max|count|median&amp;require_complete=true</code> ` +
    `plus <code>start_date</code>, <code>end_date</code> and the options above answers ` +
    `<code>{"metric","op","expected":[…],"points":[{"date","value","contributors","missing":[…]}]}</code>. ` +
    `Each member is bucketed with the aggregation and filled first; <code>op</code> then combines the members ` +
    `with a value in the bucket (<code>count</code> counts them, <code>median</code> is exact); ` +
    `<code>transform</code> applies to the total. A member is <em>expected</em> in a bucket its stored days span ` +
    `(first to last stored day, as of <code>as_of</code>): a fund not launched yet is not missing. ` +
    `<code>missing</code> names the expected members without a value, in member order; with ` +
    `<code>require_complete=true</code> such a bucket's value is null. With <code>fill=none</code> a bucket ` +
    `without any value is left out; with the other fills every bucket with an expected member is given. ` +
    `An integer metric stays whole under sum, min and max. Priced like the members' series.</p>
<p><code>GET /v1/rank/&lt;name&gt;?start_date=…&amp;end_date=…&amp;group=…&amp;by=value|change|percent_change` +
    `&amp;order=desc|asc&amp;top=10&amp;aggregation=…&amp;as_of=…</code> answers ` +
    `<code>{"metric","start_date","end_date","previous_start_date","previous_end_date","rows":[…],"unranked":[…]}</code>, ` +
    `rows <code>{"rank","project","slug","value","previous_value","previous_rank","change","change_percent",` +
    `"share_of_total"}</code>. <code>value</code> is the member's days in the window aggregated into one value; ` +
    `the previous window is as many days just before <code>start_date</code> and is ranked the same way ` +
    `(<code>previous_rank</code>). Ties are ordered by slug (code points); members without data in the window ` +
    `are <code>unranked</code>; ranking by a change, a member without a previous value ranks after the others. ` +
    `<code>change</code> is value minus previous value, <code>change_percent</code> that in percent of the ` +
    `previous value (null from zero or none); <code>share_of_total</code> is the percent of the sum of ranked ` +
    `values, for sum and last aggregations only. <code>top</code> is 1–1,000. Priced as a yearly series of ` +
    `the days read. GraphQL: <code>groups</code>, <code>total(…)</code> and <code>rank(…)</code> with the same ` +
    `rules.</p>

<h2 id="changes">Changes feed</h2>
<p><code>GET /v1/changes?since=&lt;RFC 3339 instant&gt;&amp;limit=N</code> ` +
    `(limit 1–10,000, default 1,000) lists every write of a point since that ` +
    (`instant
(a date alone: the start of that UTC ` +
      `day) as <code>{"changes":[{"metric","project","date","value","extra"?,"updatedAt"}], `) +
    `"next"?, "cursor"}</code>:
one entry per write, so a value written twice appears twice; a removed ` +
    `point has <code>value</code> null; <code>extra</code> holds the extra ` +
    `fields written with the value, when it has some
(a revision of an extra field alone is an entry with the same value and ` +
    `the new <code>extra</code>); <code>updatedAt</code> is the write's time, ` +
    `UTC with microseconds.
Entries are in commit order (writers take turns, so that is write order ` +
    `too). <code>next</code> is present while more entries wait; pass it as ` +
    `<code>?cursor=</code> for the next page.
<code>cursor</code> is always present: keep it and ask again later to ` +
    `get only what landed since. Following cursors skips nothing and repeats ` +
    `nothing, even while writes land
between pages: a write is numbered while its writer holds the turn, so ` +
    `one that commits later always comes later.
Sample data loaded at first start is not a change. A cursor carries its ` +
    `<code>since</code>; given both, they must agree. Cost: one unit per 1,000 ` +
    `entries asked for.
GraphQL: <code>changes(since, first, after)</code> returns the same entries ` +
    `as a plain list with <code>endCursor</code> and <code>hasNextPage</code>.</p>

<h2 id="revisions">Revision triangles and profiles</h2>
<p><code>GET /v1/revisions/&lt;metric&gt;?project=&lt;one slug&gt;&amp;start_date=…&amp;end_date=…&amp;lags=0,1,7,30</code> ` +
    `answers <code>{"metric","project","lags":[…],"rows":[…]}</code>, one row per day ever written, ascending:
<code>date</code>; <code>firstWrittenAt</code> (UTC with microseconds, as the changes feed writes it, so it ` +
    `can be passed back as <code>as_of</code>); <code>values</code>, one per lag, the value standing at the end ` +
    `of UTC day date + lag (null where none);
<code>latest</code> (null for a removed day); <code>revisionCount</code>, the writes after the first ` +
    `(a removal counts); <code>maxAbsRevisionPercent</code>, the largest change of a revision relative to ` +
    `the value it replaced, in percent (null when that was 0, or never revised).
All of <code>project</code>, <code>start_date</code>, <code>end_date</code> and <code>lags</code> are required; ` +
    `the range spans at most 3,660 days; <code>lags</code> are 1 to 16 whole numbers from 0 to 3650, strictly ` +
    `increasing. Cost: <code>max(1, ceil(days × (lags + 1) / 365 + (days + history rows) / 3650))</code>, ` +
    `the history rows counted before the read.
GraphQL: <code>revisions(name, project, from, to, lags)</code> gives the same rows.</p>
<p><code>GET /v1/metrics/&lt;name&gt;/profile?lookback_days=180</code> (7–3650, default 180) measures how the ` +
    `metric's values were revised over its last days of data, every project together:
<code>{"metric","lookbackDays","revisionProfile":{"days","revisedShare","medianRevisionDelayHours",` +
    `"p95AbsRevisionPercent","stableAfterDays","computedAt"}}</code>. The window holds the days after the ` +
    `last day ever written minus <code>lookback_days</code>.
<code>revisedShare</code> is the share of those days written more than once; ` +
    `<code>medianRevisionDelayHours</code> the median time from a day's first write to each later write; ` +
    `<code>p95AbsRevisionPercent</code> the 95th percentile (interpolated) of revisions' changes;
<code>stableAfterDays</code> the smallest K such that 95 % of days never change after the end of D + K ` +
    `(null when fewer than 30 days are in the window). A profile is kept and computed again on the first ` +
    `read after a write to its metric, at most once a minute (<code>computedAt</code> says when).
Cost: one unit when kept, else <code>max(1, ceil(projects × lookback_days / 3650))</code>. GraphQL: ` +
    `<code>metrics { revisionProfile(lookbackDays: 180) { … } }</code>.</p>

<h2 id="live">Live updates</h2>
<p>The GraphQL subscription <code>seriesUpdated(name, projects)</code> ` +
    `sends a <code>SeriesUpdate {name project slug from to updatedAt}</code>
each time a matching series is written, by any writer (the import and ` +
    `sync commands in another process, a command handed to the server, the ` +
    `server itself),
after the write has committed: an event never names data a query cannot ` +
    `read yet. It is served over Server-Sent Events: POST the subscription ` +
    `to
<code>/graphql</code> with <code>Accept: text/event-stream</code> and ` +
    `the key; each event is <code>event: next</code> with the GraphQL result ` +
    `as <code>data</code>.
Subscribing costs one unit of the key's rate limit. A key holds at most ` +
    `${config.subscriptionsPerKey} open subscriptions (<code>RATE_LIMITED</code> ` +
    `past it),
a process ${config.subscriptionsMax} (<code>SERVICE_UNAVAILABLE</code>). ` +
    `Events are hints, delivered while the subscriber is connected; what changed ` +
    `while it was not is in the changes feed.</p>

${hooksDocsSection(config)}
<h2 id="cache">Response cache</h2>
<p>Repeated identical requests (REST series answers, whole GraphQL results) ` +
    `are answered from memory, up to ${config.responseCacheMb} MB, until a ` +
    `write is announced:
PostgreSQL notifies every instance after the writing transaction commits, ` +
    `and every kept answer is dropped then. A hit costs the same rate-limit ` +
    `units as the
first answer; its bytes, ETag and Last-Modified are the same.</p>

<h2 id="mcp">MCP</h2>
<p><code>POST /mcp</code> speaks the Model Context Protocol for AI agents: Streamable HTTP, stateless ` +
    `(JSON answers, no session; <code>GET</code> and <code>DELETE</code> get 405).
It is keyed like <code>/v1</code>. Each MCP request costs one unit; a tool call runs its REST request ` +
    `in-process and costs what that request costs, from the same bucket, through the same response cache.</p>
<ul>
<li><code>list_metrics</code>: the catalog of <code>GET /v1/metrics</code> (derived metrics with their ` +
    `<code>formula</code> and <code>inputs</code>), each metric with its description, and the groups of ` +
    `<code>GET /v1/groups</code>.</li>
<li><code>explain_metric(metric)</code>: one metric: what a value is and why it aggregates as it does, its ` +
    `unit, methodology, tags, <code>expectedBy</code> and <code>stabilizationDays</code>, integer or decimal, its ` +
    `projects with their stored days and last write, its <code>revisionProfile</code> (from ` +
    `<code>GET /v1/metrics/&lt;name&gt;/profile</code>; absent where that has none) and its GraphQL name.</li>
<li><code>get_series(metric, project, start_date, end_date, interval, aggregation, fill, transform, window, as_of)</code>: ` +
    `REST's parameters (<code>project</code> an array of slugs), checked by the same validation.
It answers a summary per series (<code>points</code>, <code>from</code>, <code>to</code>, <code>first</code>, ` +
    `<code>last</code>, <code>min</code>, <code>max</code>, <code>mean</code>, <code>changePercent</code>),
then the points as the REST answer holds them (at most 500 over all series; more is a tool error asking for a ` +
    `coarser interval), then a <code>citation</code> <code>{asOf, rest, graphql, sha256}</code>:
<code>asOf</code> is the newest write to the series (by <code>as_of</code> when given; UTC, microseconds), ` +
    `<code>rest</code> the REST path and query with <code>as_of</code> set to it,
<code>graphql</code> the GraphQL query that gives the same numbers, and <code>sha256</code> the lowercase hex ` +
    `SHA-256 of that REST answer's body (uncompressed): fetched later, it gives the same bytes.</li>
<li><code>total(metric, group, project, start_date, end_date, interval, aggregation, fill, transform, ` +
    `window, as_of, op, require_complete)</code>: <code>GET /v1/totals/&lt;name&gt;</code> run in-process.</li>
<li><code>rank(metric, group, project, start_date, end_date, aggregation, as_of, by, order, top)</code>: ` +
    `<code>GET /v1/rank/&lt;name&gt;</code> run in-process.</li>
<li><code>formula(expr, input, project, start_date, end_date, interval, fill, transform, window, as_of, ` +
    `limit_per_project)</code>: <code>GET /v1/formula</code> run in-process (<code>input</code> an array of ` +
    `<code>name:metric[:aggregation]</code>).
These three take their REST path's parameters as arguments (<code>project</code> an array), validated by REST, ` +
    `and answer REST's JSON as it is; a total or formula of more than 500 points is a tool error asking for a ` +
    `coarser interval.</li>
<li>Every tool takes <code>dry_run: true</code> and then answers only <code>{"cost":{"units":N}}</code>, ` +
    `REST's price of its request (the <code>cost.units</code> of REST's <code>dry_run=true</code> answer to it), ` +
    `reading no data.</li>
<li>Results come as <code>structuredContent</code> (each tool declares an output schema) and as the same ` +
    `JSON in a text content. A refused argument is a tool error (<code>isError</code>) whose text is ` +
    `REST's problem detail, naming the parameter.</li>
</ul>
<p><a href="/llms.txt">/llms.txt</a> and <a href="/docs.md">/docs.md</a> (this page as Markdown) need no key; ` +
    `<code>GET /schema.graphql</code> gives a key holder the GraphQL schema as SDL.</p>

<h2 id="decisions">Decisions where the contract is silent</h2>
<ul>
<li><b>Dates</b> are ISO calendar dates, <code>YYYY-MM-DD</code>, real ` +
    `days only (<code>2024-02-30</code> is a 400). Both bounds are inclusive.
An omitted <code>start_date</code> means the earliest stored day, an ` +
    `omitted <code>end_date</code> the latest. <code>start_date</code> after ` +
    `<code>end_date</code> is a 400.</li>
<li><b>Points</b> are ascending by date, at most one per project and ` +
    `day. A project with no data in range gets an empty array.</li>
<li><b>Values</b>: integer metrics are JSON integers; decimals are written ` +
    `exactly as stored, without trailing zeros.</li>
<li><b>Projects</b>: several slugs are joined with commas and duplicates ` +
    `collapsed (first position kept). An empty segment (<code>a,,b</code>, ` +
    `a trailing comma),
an unknown slug or a slug in the wrong case is a 400 naming it and listing ` +
    `the allowed ones; slugs are case-sensitive.
<code>project</code> is required for the seven metrics the contract names; ` +
    `for the others an omitted <code>project</code> means every allowed slug.</li>
<li><b>Parameters</b>: an unknown parameter (a <code>startDate</code> ` +
    `typo) is a 400 naming it, also on <code>GET /v1/metrics</code>, which ` +
    `takes none; a repeated one (<code>?project=a&amp;project=b</code>) is ` +
    `a 400.</li>
<li><b>Paths and methods</b>: an unknown metric is a 404 (after the key ` +
    `check); methods other than GET and HEAD get 405 with <code>Allow: GET, ` +
    `HEAD</code>.</li>
<li><b>Caching</b>: series answers and the catalog carry <code>ETag</code> ` +
    `(known before the body, so large answers stream: for a series answer, ` +
    `the dataset's version and the request, so any write makes every series ` +
    `answer's ETag new) and <code>Cache-Control: private, max-age=${config.cacheMaxAgeSeconds}` +
    `</code>
(the OpenAPI document <code>max-age=300</code>; the changes feed an ETag ` +
    `and <code>no-store</code>; export <code>no-store</code>);
<code>If-None-Match</code> gives 304. Bodies over 1 KB are compressed ` +
    `with brotli or gzip when asked.</li>
<li><b>Size</b>: a request may name every slug of its metric over its ` +
    `whole history; such answers stream with bounded memory.
URLs (with all header fields) over 16 KB get 431, a request HTTP cannot ` +
    `read (raw non-ASCII bytes in the URL) 400. REST reads no request body ` +
    `(one sent is ignored); GraphQL bodies over 1 MB get 413.</li>
</ul>

<h2 id="graphql">GraphQL</h2>
<ul>
<li><code>metric(name, projects, from, to)</code> follows the REST rules ` +
    `above, through the same validation code, and returns the same numbers;
<code>metrics</code> is the catalog. Slugs are enum values with <code>-</code> ` +
    `replaced by <code>_</code>, case kept; each value's description gives ` +
    `the slug.</li>
<li>Documents are bounded before they run: depth ${GRAPHQL_LIMITS.maxDepth}` +
    `, ${GRAPHQL_LIMITS.maxAliases} aliases, ${GRAPHQL_LIMITS.maxTokens} tokens,
${GRAPHQL_LIMITS.maxDirectives} directives, cost ${GRAPHQL_LIMITS.maxCost}` +
    ` (introspection stays open to key holders); a batched (array) body is ` +
    `a 400; no "did you mean" hints.</li>
<li>Every answer is a GraphQL response, failures before execution included ` +
    `(401, 405, 406, 413, 415, 429, 431, 503): no <code>data</code>, one error ` +
    `with
<code>extensions.code</code> (listed below), under the HTTP status of ` +
    `the failure; <code>application/graphql-response+json</code> when the <code>Accept</code> ` +
    `header names it
(else <code>application/json</code>, also for <code>*/*</code> or no ` +
    `<code>Accept</code>; a 406, whose client accepts nothing the service can ` +
    `send, is <code>application/json</code>).</li>
<li>A document that does not parse gets <code>GRAPHQL_PARSE_FAILED</code>, ` +
    `one that does not validate or is over a limit <code>GRAPHQL_VALIDATION_FAILED</code>
(an argument written with the wrong type, <code>from: 123</code> or <code>name: ` +
    `"token_price_usd"</code>, is <code>BAD_USER_INPUT</code>: the message ` +
    `names the argument, what it expects and what it got, and for an enum the ` +
    `values closest to it),
with 400 (with 200 when the answer is <code>application/json</code>, ` +
    `as GraphQL over HTTP asks; so is every limit).
A query whose points are sized, before it runs, over the 32 MB one GraphQL ` +
    `answer may take is refused the same way with <code>PAYLOAD_TOO_LARGE</code> ` +
    `(413; 200 to <code>application/json</code>). Here the answer's type is ` +
    `the first of the two the <code>Accept</code> header lists,
in the order written: <code>application/json</code> for curl's <code>*/*</code>, ` +
    `for no <code>Accept</code>, and for <code>application/json, application/graphql-response+json</code>.</li>
</ul>

<h2 id="limits">Limits</h2>
<p>Each key has a budget: a token bucket shared by REST and GraphQL, ` +
    `${config.rateLimitBurst} units deep, refilled at ${config.rateLimitPerMinute}` +
    ` a minute unless the key has its own.
A request costs one unit per started 365 project-days it asks for (at ` +
    `least one; an open end counts as today, an open start as ten years before ` +
    `the end;
a series stored further back, or past today, costs what the request reads ` +
    `of it: the range asked, clipped to the days it holds),
and every authenticated request pays one unit up front. Every answer ` +
    `carries <code>RateLimit</code> and <code>RateLimit-Policy</code>
(draft-ietf-httpapi-ratelimit-headers-10); a request over the budget ` +
    (`gets 429 with <code>Retry-After</code>.
${
  config.refusedKeysPerMinute === 0
    ? ''
    : `A client address that presents more than ${config.refusedKeysPerMinute} refused keys a minute gets 429 with <code>Retry-After</code>, instead of a lookup,
for a key not seen accepted before, until its allowance refills; a key already in use keeps working.
`
}${
  config.redisUrl === undefined
    ? ''
    : `The budget is shared by every instance of the service (it is kept in Redis). While Redis cannot be reached, each instance counts
on its own, so a key may get more than its budget for that time; requests are neither refused nor delayed because of it (a charge waits 250 ms for Redis at most).
`
}${
  store.kind === 'postgres'
    ? `When the database is away or too slow (statement timeout ${config.statementTimeoutSeconds} s), requests get 503 with <code>Retry-After: 5</code>, never a hang or a trace.`
    : 'This instance serves an embedded database in its own thread: each query runs to its end, without a statement timeout, and the others wait for it.'
}</p>

${COST_DOCS}
<h2 id="problems">Errors</h2>
<p>On <code>/v1</code> every ` +
      `error ` +
      `is <code>application/problem+json</code> `) +
    `(RFC 9457) with <code>type</code>, <code>title</code>, <code>status</code>, ` +
    `<code>detail</code>,
and for 400s <code>errors: [{param, message}]</code>. On <code>/graphql</code> ` +
    `the same failures carry these <code>extensions.code</code> values:</p>
<ul>${problems}</ul>
</body></html>`
  );
}

// Private

/** Catalog text in the page's HTML. */
function html(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** The page is static HTML with one inline style sheet: no script runs in it, and no other site frames it. */
const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
