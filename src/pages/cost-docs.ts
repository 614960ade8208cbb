/** The `/docs` section on dry runs, `extensions.cost` and `/v1/usage`. */
export const COST_DOCS = `<h2 id="cost">Cost before spending, and usage</h2>
<ul>
<li><code>dry_run=true</code> on every series path (<code>/v1/metrics/&lt;name&gt;</code>, <code>/v1/export</code>, \
the analytics paths <code>/v1/totals/&lt;name&gt;</code>, <code>/v1/rank/&lt;name&gt;</code>, <code>/v1/formula</code>, and \
<code>/v1/revisions/&lt;name&gt;</code>, <code>/v1/metrics/&lt;name&gt;/profile</code>) answers 200 <code>{"cost":{"units":N},"rateLimit":{"limit","remaining","resetSeconds"}}</code>
(<code>application/json</code>) after validating and pricing the request: <code>N</code> is what the request would take from the \
key (never less than one unit), <code>rateLimit</code> the key's bucket now (all <code>null</code> for a key without a limit).
It reads no data (a triangle's price counts its history rows first, one indexed count, as the request does) and leaves the key's balance as it was; dry runs are counted in a bucket of their own per key, as large as \
the key's, so a flood of them gets 429 with <code>Retry-After</code> like any other. <code>dry_run=false</code> or none is the \
request itself; any other value is a 400 naming <code>dry_run</code>.</li>
<li>GraphQL: the header <code>x-dry-run: true</code> answers <code>{"data":null,"extensions":{"cost":{"units":N}}}</code> \
after parsing, validation and pricing, without executing (a subscription is priced at its one unit, not subscribed). \
Every field is priced as its resolver charges it: <code>metric</code> (with its <code>vintage</code>'s history rows and \
<code>limitPerProject</code>) and <code>formula</code> once per <code>series { points }</code> selection, <code>total</code>, \
<code>rank</code>, <code>revisions</code>, each <code>revisionProfile</code> selection per metric, <code>changes</code>; \
<code>groups</code>, <code>usage</code> and the webhook fields cost nothing beyond the request's one unit. Arguments the \
request would refuse are refused the same way (<code>BAD_USER_INPUT</code>).
Every other answer of <code>/graphql</code> carries <code>extensions.cost.units</code>: what the request was charged \
(a query's answer in any transport, JSON, event stream or multipart; 0 for a refused dry run), never less than one unit otherwise; a subscription's events carry none (they are charged nothing).</li>
<li><code>GET /v1/usage</code> (GraphQL <code>usage</code>) answers the calling key's requests and units per UTC hour for \
the last 48 hours and per UTC day for the last 30 days (oldest first, empty periods as 0) and its <code>rateLimit</code>.
Units are the prices requests were charged at (what a dry run reports); dry runs and requests refused before the key was \
charged are not counted. Every instance on the database adds its counts within a few seconds (and when it stops); a \
request is counted once it is answered.</li>
</ul>
`;
