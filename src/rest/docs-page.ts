import { ERROR_KINDS } from '../api/api-error.js';
import type { RouteCall } from '../http/route.js';

/** `GET /docs`: the human page for the REST API, its decisions and its problem types; needs no key. */
export function handleDocsPage({ res, services }: RouteCall): void {
  const problems = Object.entries(ERROR_KINDS)
    .map(([kind, k]) => `<li id="problem-${kind}"><code>${k.status}</code> <b>${k.title}</b> — type <code>/docs#problem-${kind}</code></li>`)
    .join('\n');
  const metrics = services.catalog.metrics
    .map((m) => `<li><code>GET /v1/metrics/${m.name}</code> — ${m.valueKind}${m.projectRequired ? ', <code>project</code> required' : ''}</li>`)
    .join('\n');
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Metrics API</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem}code{background:#f3f3f3;padding:0 .2em}</style>
</head><body>
<h1>Metrics API</h1>
<p>Daily metric time series per project, over REST (<code>/v1</code>) and GraphQL (<a href="/graphql">/graphql</a>, with GraphiQL).
Every API request needs the <code>x-api-key</code> header.</p>
<h2>REST</h2>
<p><code>GET /v1/metrics/&lt;name&gt;?project=a,b&amp;start_date=YYYY-MM-DD&amp;end_date=YYYY-MM-DD</code> returns one key per requested project,
in request order, each an array of <code>{date, value}</code> ascending by date. Both bounds are inclusive; omitted bounds mean the first and last stored day.
Omitted <code>project</code> means every project of the metric, except where it is required. <code>GET /v1/metrics</code> lists the catalog with date coverage.
The machine-readable contract is <code>GET /v1/openapi.json</code> (OpenAPI 3.1; needs the key).</p>
<ul>${metrics}</ul>
<h2 id="limits">Limits</h2>
<p>Each key has a budget (a token bucket shared by REST and GraphQL). A request costs one unit per started 365 project-days it asks for
(at least one); every answer carries <code>RateLimit</code> and <code>RateLimit-Policy</code> headers, and a request over the budget gets
429 with <code>Retry-After</code>. GraphQL documents are limited in depth, aliases, tokens, directives and cost; bodies over 1 MB get 413.
When the database is away or too slow, requests get 503 with <code>Retry-After</code>.</p>
<h2 id="problems">Errors</h2>
<p>Every error is <code>application/problem+json</code> (RFC 9457) with <code>type</code>, <code>title</code>, <code>status</code>, <code>detail</code>,
and for 400s <code>errors: [{param, message}]</code>.</p>
<ul>${problems}</ul>
</body></html>`;
  res.statusCode = 200;
  res.setHeader('content-type', 'text/html; charset=utf-8');
  res.setHeader('cache-control', 'public, max-age=300');
  res.end(html);
}
