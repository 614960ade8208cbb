// The explorer page: the catalog and series come from the GraphQL API with the key the
// user typed (kept in sessionStorage, never in the page the server sends); what is drawn
// is also kept in window.explorer.series, so devtools and tests can read the data itself.
'use strict';

const KEY_STORAGE = 'metrics-explorer-key';
/** URL parameters that make up a view, in the order they are written. */
const STATE_PARAMS = [
  'metric',
  'project',
  'start_date',
  'end_date',
  'interval',
  'aggregation',
  'fill',
  'transform',
  'window',
  'log',
  'view',
  'mode',
  'op',
  'by',
];
const OPTION_PARAMS = ['interval', 'aggregation', 'fill', 'transform', 'window'];
const COLORS = [
  '#1f77b4',
  '#d62728',
  '#2ca02c',
  '#9467bd',
  '#ff7f0e',
  '#17becf',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
];

/** A series' colour: the ten above, then hues a golden angle apart, so no two of up to 76 series look alike. */
function colorOf(i) {
  return i < COLORS.length ? COLORS[i] : `hsl(${Math.round((i * 137.508) % 360)}, 70%, ${i % 2 ? 38 : 52}%)`;
}
/** Cells the table view shows at most (76 series × 3,650 days would be 277,400): a page stays quick to draw. */
const TABLE_CELL_LIMIT = 40_000;

const $ = (id) => document.getElementById(id);
const explorer = (window.explorer = {
  series: {},
  catalog: [],
  state: {},
  ready: false,
  error: null,
  loads: 0,
  summary: '',
  linkNotes: [],
});
let plot;
/** Counts series requests: only the newest one's answer (or failure) may reach the page. */
let seriesRequests = 0;

// The view in the URL and in the controls

function readUrlState() {
  const q = new URLSearchParams(location.search);
  return Object.fromEntries(STATE_PARAMS.filter((p) => q.get(p)).map((p) => [p, q.get(p)]));
}

/**
 * Writes a view into the URL: as a new history entry when `push` (a view the user asked for, so
 * Back returns to the one before), else in place.
 */
function writeUrlState(state, push = false) {
  const q = new URLSearchParams();
  for (const p of STATE_PARAMS) if (state[p]) q.set(p, state[p]);
  const url = `${location.pathname}?${q.toString().replaceAll('%2C', ',')}`;
  if (push && url !== `${location.pathname}${location.search}`) history.pushState(null, '', url);
  else history.replaceState(null, '', url);
}

function controlsState() {
  const projects = [...$('projects').selectedOptions].map((o) => o.value);
  return {
    metric: $('metric').value,
    project: projects.join(','),
    start_date: $('start').value,
    end_date: $('end').value,
    interval: $('interval').value,
    aggregation: $('aggregation').value,
    fill: $('fill').value,
    transform: $('transform').value,
    window: $('transform').value === 'moving_average' ? $('window').value : '',
    // Always written: a price metric defaults to log, so "off" must survive a reload.
    log: $('log').checked ? 'on' : 'off',
    view: $('table-view').checked ? 'table' : '',
    mode: $('mode').value,
    op: $('mode').value === 'total' ? $('op').value : '',
    by: $('mode').value === 'rank' ? $('by').value : '',
  };
}

/**
 * Puts a view (from the URL) into the controls. Returns a sentence for each value of the
 * link that the page could not use and what it shows instead: a mistyped or outdated link
 * must not silently show something else.
 */
function applyState(state) {
  const notes = [];
  const named = explorer.catalog.find((m) => m.name === state.metric);
  const metric = named ?? explorer.catalog.find((m) => m.name === 'token-price-usd') ?? explorer.catalog[0];
  if (state.metric && !named)
    notes.push(`The link's metric "${state.metric}" is not in the catalog; showing ${metric.name}.`);
  $('metric').value = metric.name;
  const wanted = state.project ? state.project.split(',').filter(Boolean) : [];
  const unknown = wanted.filter((slug) => !metric.coverage.some((c) => c.slug === slug));
  if (unknown.length) notes.push(`${metric.name} has no project ${unknown.map((s) => `"${s}"`).join(', ')}; left out.`);
  const known = wanted.filter((slug) => !unknown.includes(slug));
  fillProjects(metric, known.length ? known : defaultProjects(metric));
  for (const [param, id] of [
    ['start_date', 'start'],
    ['end_date', 'end'],
    ['window', 'window'],
  ]) {
    $(id).value = state[param] ?? '';
    // A date or number input takes only a well-formed value: anything else leaves it empty.
    if (state[param] && $(id).value !== state[param])
      notes.push(
        `The link's ${param} "${state[param]}` +
          `" is not ${param === 'window' ? 'a number of days' : 'a date (YYYY-MM-DD)'}` +
          `; ` +
          `left empty.`,
      );
  }
  for (const p of ['interval', 'aggregation', 'fill', 'transform', 'mode', 'op', 'by']) {
    $(p).value = state[p] ?? '';
    if (state[p] && $(p).value !== state[p]) {
      const choices = [...$(p).options]
        .map((o) => o.value)
        .filter(Boolean)
        .join(', ');
      notes.push(`The link's ${p} "${state[p]}" is not one of ${choices}; left at the default.`);
      $(p).value = '';
    }
  }
  $('log').checked = state.log === 'on' || (state.log === undefined && isPrice(metric));
  $('table-view').checked = state.view === 'table';
  if (!$('start').value && !$('end').value) applyPreset(90);
  return notes;
}

/**
 * Prices and market capitalisations span orders of magnitude across projects, so they open
 * on a log scale. The catalog carries no unit; its REST names (a fixed contract) say it.
 */
function isPrice(metric) {
  return /(^|-)(price|market-cap)(-|$)/.test(metric.name);
}

// Requests to the API

async function graphql(query, variables) {
  const key = sessionStorage.getItem(KEY_STORAGE);
  if (!key) throw new UserError('Enter an API key to load data.', 'key');
  let res;
  try {
    res = await fetch('/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json, application/json',
        'x-api-key': key,
      },
      body: JSON.stringify({ query, variables }),
    });
  } catch (error) {
    throw unreachable(error);
  }
  await refuseHttpFailure(res);
  const body = await res.json();
  if (body.errors?.length) throw new UserError(describeGraphqlError(body.errors[0]));
  return body.data;
}

/** A fetch that got no answer at all: the service is stopped or the network is down. */
function unreachable(error) {
  return new UserError(`The service cannot be reached (${error.message}). Check that it is running, then try again.`);
}

/** "1 second", "5 seconds": Retry-After as a person reads it. */
function seconds(count) {
  return `${count} second${String(count) === '1' ? '' : 's'}`;
}

async function refuseHttpFailure(res) {
  if (res.ok) return;
  let detail = '';
  try {
    const body = await res.json();
    detail = body.detail ?? body.errors?.[0]?.message ?? '';
  } catch {
    // no readable body
  }
  const retry = res.headers.get('retry-after');
  if (res.status === 401) throw new UserError('The API key was not accepted (401). Enter a valid key.', 'key');
  if (res.status === 429)
    throw new UserError(
      `Too many requests for this key (429): try again in ${retry === null ? 'a few seconds' : seconds(retry)}.`,
    );
  if (res.status === 503)
    throw new UserError(
      `The service is not ready or is shutting down (503)${retry ? `; try again in ${seconds(retry)}` : ''}.`,
    );
  throw new UserError(`The request failed (${res.status})${detail ? `: ${detail}` : ''}.`);
}

function describeGraphqlError(error) {
  const code = error.extensions?.code;
  if (code === 'UNAUTHENTICATED') return 'The API key was not accepted. Enter a valid key.';
  if (code === 'RATE_LIMITED') return `Too many requests for this key: ${error.message}`;
  return error.message;
}

class UserError extends Error {
  constructor(message, needs) {
    super(message);
    this.needs = needs;
  }
}

const CATALOG_QUERY =
  '{ metrics { name description valueKind defaultAggregation extraFields unit methodology ' +
  'coverage { slug firstDate lastDate } } }';

/** The series query of a view; `extra` only for a metric whose points carry a breakdown (the table shows it). */
function seriesQuery(state) {
  const fields = extraFieldsOf(state.metric).length ? 'date value extra' : 'date value';
  return (
    `query Explore($name: MetricName!, $projects: [Project!], $from: Date, ` +
    `$to: Date, $interval: Interval, $aggregation: Aggregation, $fill: Fill, ` +
    `$transform: Transform, $window: Int) {
  metric(name: $name, projects: $projects, from: $from, to: $to, interval: ` +
    `$interval, aggregation: $aggregation, fill: $fill, transform: $transform, ` +
    `window: $window) {
    series { slug points { ${fields} } }
  }
}`
  );
}

function extraFieldsOf(metricName) {
  return explorer.catalog.find((m) => m.name === metricName)?.extraFields ?? [];
}

const gqlName = (text) => text.replaceAll('-', '_');

/** The GraphQL variables of a view: only what is set, so the API's defaults apply to the rest. */
function seriesVariables(state) {
  const v = { name: gqlName(state.metric), projects: state.project.split(',').filter(Boolean).map(gqlName) };
  if (state.start_date) v.from = state.start_date;
  if (state.end_date) v.to = state.end_date;
  for (const p of ['interval', 'aggregation', 'fill', 'transform']) if (state[p]) v[p] = state[p].toUpperCase();
  if (state.window) v.window = Number(state.window);
  return v;
}

/** The REST parameters of a view, as /v1/metrics/<name> and /v1/export take them. */
function restParams(state) {
  const q = new URLSearchParams();
  q.set('project', state.project);
  if (state.start_date) q.set('start_date', state.start_date);
  if (state.end_date) q.set('end_date', state.end_date);
  for (const p of OPTION_PARAMS) if (state[p]) q.set(p, state[p]);
  return q.toString().replaceAll('%2C', ',');
}

// Loading and drawing

async function loadCatalog() {
  setStatus('Loading the catalog…', 'loading');
  const data = await graphql(CATALOG_QUERY);
  explorer.catalog = data.metrics;
  $('metric').replaceChildren(...explorer.catalog.map((m) => new Option(m.name, m.name)));
}

/** The projects a metric opens with when nothing names them: its first two. */
function defaultProjects(metric) {
  return metric.coverage.slice(0, 2).map((c) => c.slug);
}

function fillProjects(metric, selected) {
  $('metric-about').textContent =
    `${metric.description} — ${metric.valueKind.toLowerCase()} values in ${metric.unit}, default ` +
    `aggregation ${metric.defaultAggregation.toLowerCase()}. ${metric.methodology}`;
  $('projects').replaceChildren(
    ...metric.coverage.map((c) => {
      const option = new Option(`${c.slug} (${c.firstDate ?? 'no data'} – ${c.lastDate ?? ''})`, c.slug);
      option.selected = selected.includes(c.slug);
      return option;
    }),
  );
}

function selectedCoverage() {
  const metric = explorer.catalog.find((m) => m.name === $('metric').value);
  const chosen = new Set([...$('projects').selectedOptions].map((o) => o.value));
  const covered = metric.coverage.filter((c) => chosen.has(c.slug) && c.lastDate);
  return covered.length ? covered : metric.coverage.filter((c) => c.lastDate);
}

/** The first and last stored day of some projects' coverage together. */
function coverageSpan(covered) {
  return {
    first: covered.map((c) => c.firstDate).sort()[0],
    last: covered
      .map((c) => c.lastDate)
      .sort()
      .at(-1),
  };
}

/** A preset ends on the last stored day of the chosen projects, not on today's date: data may end earlier. */
function applyPreset(days) {
  const covered = selectedCoverage();
  if (!covered.length) return;
  const { first, last } = coverageSpan(covered);
  $('end').value = last;
  if (days === 'all') $('start').value = first;
  else {
    const start = new Date(Date.parse(`${last}T00:00:00Z`) - (days - 1) * 86_400_000).toISOString().slice(0, 10);
    $('start').value = start < first ? first : start;
  }
}

/** Loads and draws the controls' view; `push` makes it a new history entry (see writeUrlState). */
async function loadSeries({ push = false } = {}) {
  const state = controlsState();
  explorer.state = state;
  writeUrlState(state, push);
  const request = ++seriesRequests;
  if (!state.project) {
    setStatus('Choose at least one project.', 'error');
    return;
  }
  if (state.mode === 'total' || state.mode === 'rank') return loadAcross(state, request);
  const started = performance.now();
  setStatus(`Loading ${state.project.split(',').length} series of ${state.metric}…`, 'loading');
  explorer.ready = false;
  let data;
  try {
    data = await graphql(seriesQuery(state), seriesVariables(state));
  } catch (error) {
    if (request !== seriesRequests) return; // a newer view was asked for meanwhile: its answer counts
    // The URL and controls now name the view that failed: a chart of the one before would pass for it.
    clearDrawing();
    throw error;
  }
  // A slower answer to an older view (an "All" clicked before "30 d") must not replace the newer one.
  if (request !== seriesRequests) return;
  explorer.series = Object.fromEntries(data.metric.series.map((s) => [s.slug, s.points]));
  const points = data.metric.series.reduce((n, s) => n + s.points.length, 0);
  explorer.summary =
    `${data.metric.series.length} series, ${points} points in ${Math.round(performance.now() - started)} ` +
    `ms.${points === 0 ? ` ${noDataNote(state)}` : ''}`;
  // Said with the first view a link opens, then no more.
  if (explorer.linkNotes.length) explorer.summary += ` ${explorer.linkNotes.join(' ')}`;
  explorer.linkNotes = [];
  const note = draw(state);
  explorer.ready = true;
  explorer.loads += 1;
  setStatus(explorer.summary + note);
}

/** Why a view drew nothing: where the chosen projects' data lies, so the range can be moved there. */
function noDataNote(state) {
  const metric = explorer.catalog.find((m) => m.name === state.metric);
  const chosen = state.project.split(',');
  const covered = metric.coverage.filter((c) => chosen.includes(c.slug) && c.firstDate);
  if (!covered.length) return 'The chosen projects have no data yet.';
  const { first, last } = coverageSpan(covered);
  return `No data in this range: the chosen projects have data from ${first} to ${last}.`;
}

function clearDrawing() {
  explorer.series = {};
  explorer.total = undefined;
  explorer.ranking = undefined;
  plot?.destroy();
  plot = undefined;
  explorer.plot = undefined;
  $('table').replaceChildren();
}

/** Draws the loaded series as the view asks; returns a note for the status line ('' or a sentence). */
function draw(state) {
  if (state.mode === 'total' && explorer.total) return drawTotal(state);
  if (state.mode === 'rank' && explorer.ranking) return drawRanking();
  const slugs = Object.keys(explorer.series);
  const dates = [...new Set(slugs.flatMap((s) => explorer.series[s].map((p) => p.date)))].sort();
  const index = new Map(dates.map((d, i) => [d, i]));
  const column = (slug, read) => {
    const values = new Array(dates.length).fill(null);
    for (const p of explorer.series[slug]) values[index.get(p.date)] = read(p);
    return values;
  };
  const columns = slugs.map((slug) => column(slug, (p) => p.value));
  const table = state.view === 'table';
  $('table').hidden = !table;
  $('chart').hidden = table;
  if (!table) return drawChart(slugs, dates, columns, state.log === 'on', axisLabel(state));
  // The table also shows a breakdown (etf-num-products: spot, futures, leveraged), a column per
  // field after each project's value.
  const fields = extraFieldsOf(state.metric);
  const labels = slugs.flatMap((slug) => [slug, ...fields.map((f) => `${slug} ${f}`)]);
  const cells = slugs.flatMap((slug, i) => [
    columns[i],
    ...fields.map((f) => column(slug, (p) => p.extra?.[f] ?? null)),
  ]);
  drawTable(labels, dates, cells);
  return '';
}

/** The y axis's label: the metric's unit, or what a transform makes of it. */
function axisLabel(state) {
  const unit = explorer.catalog.find((m) => m.name === state.metric)?.unit ?? '';
  return state.transform === 'percent_change' ? `% change (${unit})` : unit;
}

function drawChart(slugs, dates, columns, log, unit) {
  plot?.destroy();
  const positive = columns.every((values) => values.every((v) => v === null || v > 0));
  const xs = dates.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
  const opts = {
    width: Math.max(320, $('chart').clientWidth || document.body.clientWidth - 32),
    height: 420,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    // One day or one bucket: uPlot's own range for it runs a thousand days on (86400 / 1e-3 s);
    // centre it in three days.
    scales: {
      x: { time: true, range: (_u, min, max) => (xs.length === 1 ? [xs[0] - 86_400, xs[0] + 86_400] : [min, max]) },
      y: { distr: log && positive ? 3 : 1 },
    },
    series: [
      { label: 'date (UTC)', value: (_u, ts) => (ts == null ? '' : new Date(ts * 1000).toISOString().slice(0, 10)) },
      // Hover values as the API serves them, unrounded: the legend is read, not glanced at.
      ...slugs.map((slug, i) => ({
        label: slug,
        stroke: colorOf(i),
        width: 1.5,
        spanGaps: false,
        value: (_u, v) => (v == null ? '–' : String(v)),
      })),
    ],
    axes: [{}, { size: yAxisSize, label: unit }],
    legend: { live: true },
  };
  plot = new uPlot(opts, [xs, ...columns], $('chart'));
  explorer.plot = plot;
  return log && !positive ? ' Log scale needs positive values: drawn on a linear scale.' : '';
}

/** uPlot's axis font: the y axis is as wide as its widest label (1,000,000,000 needs more than 70 px). */
const AXIS_FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif';
let measure;

function yAxisSize(u, values, axisIdx, cycleNum) {
  const axis = u.axes[axisIdx];
  if (cycleNum > 1) return axis._size; // uPlot settles the size in a few passes: keep the last
  measure ??= document.createElement('canvas').getContext('2d');
  measure.font = AXIS_FONT;
  const widest = Math.max(0, ...(values ?? []).map((text) => measure.measureText(String(text)).width));
  return Math.max(50, Math.ceil(widest) + axis.ticks.size + axis.gap + 8);
}

function drawTable(labels, dates, columns) {
  const limit = Math.max(100, Math.floor(TABLE_CELL_LIMIT / Math.max(1, labels.length)));
  const shown = dates.slice(-limit); // the latest days: what a reader looks for first
  const head = `<thead><tr><th>date</th>${labels.map((s) => `<th>${escapeHtml(s)}</th>`).join('')}</tr></thead>`;
  const offset = dates.length - shown.length;
  const rows = shown
    .map((d, i) => `<tr><td>${d}</td>${columns.map((c) => `<td>${c[offset + i] ?? ''}</td>`).join('')}</tr>`)
    .join('');
  const more = offset > 0 ? `<p>The last ${shown.length} of ${dates.length} days; Download CSV has them all.</p>` : '';
  $('table').innerHTML = `<table>${head}<tbody>${rows}</tbody></table>${more}`;
}

function escapeHtml(text) {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
}

// Across projects: a total of the chosen projects, or their ranking over the range

/** The query of a total or a ranking view; a ranking asks for every row (top 1000). */
function acrossQuery(state) {
  if (state.mode === 'total')
    return (
      `query Total($name: MetricName!, $projects: [Project!], $from: Date, $to: Date, $interval: Interval, ` +
      `$aggregation: Aggregation, $fill: Fill, $transform: Transform, $window: Int, $op: TotalOp) {
  total(name: $name, projects: $projects, from: $from, to: $to, interval: $interval, aggregation: $aggregation, ` +
      `fill: $fill, transform: $transform, window: $window, op: $op) {
    op expected points { date value contributors missing }
  }
}`
    );
  return (
    `query Rank($name: MetricName!, $projects: [Project!], $from: Date!, $to: Date!, $aggregation: Aggregation, ` +
    `$by: RankBy) {
  rank(name: $name, projects: $projects, from: $from, to: $to, aggregation: $aggregation, by: $by, top: 1000) {
    from to previousFrom previousTo
    rows { rank slug value previousValue previousRank change changePercent shareOfTotal }
    unranked
  }
}`
  );
}

function acrossVariables(state) {
  const v = seriesVariables(state);
  if (state.mode === 'total') {
    if (state.op) v.op = state.op.toUpperCase();
    return v;
  }
  const rank = { name: v.name, projects: v.projects, from: v.from, to: v.to };
  if (v.aggregation) rank.aggregation = v.aggregation;
  if (state.by) rank.by = state.by.toUpperCase();
  return rank;
}

/** The REST parameters of a total or ranking view, as /v1/totals/<name> and /v1/rank/<name> take them. */
function acrossParams(state) {
  const q = new URLSearchParams();
  q.set('project', state.project);
  if (state.start_date) q.set('start_date', state.start_date);
  if (state.end_date) q.set('end_date', state.end_date);
  const options = state.mode === 'total' ? [...OPTION_PARAMS, 'op'] : ['aggregation', 'by'];
  for (const p of options) if (state[p]) q.set(p, state[p]);
  return q.toString().replaceAll('%2C', ',');
}

/** Project enum names (`-` as `_`) back to the metric's slugs. */
function slugsOf(metricName, names) {
  const metric = explorer.catalog.find((m) => m.name === metricName);
  const bySlug = new Map(metric.coverage.map((c) => [gqlName(c.slug), c.slug]));
  return names.map((n) => bySlug.get(n) ?? n);
}

async function loadAcross(state, request) {
  if (state.mode === 'rank' && (!state.start_date || !state.end_date)) {
    setStatus('A ranking needs a range: choose From and To.', 'error');
    return;
  }
  const started = performance.now();
  setStatus(`Loading the ${state.mode} of ${state.project.split(',').length} projects of ${state.metric}…`, 'loading');
  explorer.ready = false;
  let data;
  try {
    data = await graphql(acrossQuery(state), acrossVariables(state));
  } catch (error) {
    if (request !== seriesRequests) return;
    clearDrawing();
    throw error;
  }
  if (request !== seriesRequests) return;
  explorer.series = {};
  explorer.total = undefined;
  explorer.ranking = undefined;
  const ms = Math.round(performance.now() - started);
  if (state.mode === 'total') {
    const points = data.total.points.map((p) => ({ ...p, missing: slugsOf(state.metric, p.missing) }));
    explorer.total = { op: data.total.op.toLowerCase(), expected: slugsOf(state.metric, data.total.expected), points };
    const incomplete = points.filter((p) => p.missing.length > 0).length;
    explorer.summary =
      `The ${explorer.total.op} of ${explorer.total.expected.length} projects: ${points.length} points in ${ms} ms` +
      `${incomplete ? `; ${incomplete} miss a project (marked; hover for the names).` : '.'}`;
  } else {
    const r = data.rank;
    explorer.ranking = { ...r, unranked: slugsOf(state.metric, r.unranked) };
    explorer.summary =
      `${r.rows.length} ranked from ${r.from} to ${r.to}, against ${r.previousFrom} to ${r.previousTo}, in ${ms} ms` +
      `${r.unranked.length ? `; no data: ${explorer.ranking.unranked.join(', ')}.` : '.'}`;
  }
  if (explorer.linkNotes.length) explorer.summary += ` ${explorer.linkNotes.join(' ')}`;
  explorer.linkNotes = [];
  const note = draw(state);
  explorer.ready = true;
  explorer.loads += 1;
  setStatus(explorer.summary + note);
}

/** The total as a line, each bucket that misses a project marked, the missing names in the legend on hover. */
function drawTotal(state) {
  const { points, op } = explorer.total;
  const table = state.view === 'table';
  $('table').hidden = !table;
  $('chart').hidden = table;
  if (table) {
    const columns = [
      points.map((p) => p.value),
      points.map((p) => p.contributors),
      points.map((p) => p.missing.join(', ')),
    ];
    drawTable(
      [op, 'contributors', 'missing'],
      points.map((p) => p.date),
      columns,
    );
    return '';
  }
  plot?.destroy();
  const xs = points.map((p) => Date.parse(`${p.date}T00:00:00Z`) / 1000);
  const values = points.map((p) => p.value);
  const positive = values.every((v) => v === null || v > 0);
  const log = state.log === 'on';
  const opts = {
    width: Math.max(320, $('chart').clientWidth || document.body.clientWidth - 32),
    height: 420,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    scales: {
      x: { time: true, range: (_u, min, max) => (xs.length === 1 ? [xs[0] - 86_400, xs[0] + 86_400] : [min, max]) },
      y: { distr: log && positive ? 3 : 1 },
    },
    series: [
      { label: 'date (UTC)', value: (_u, ts) => (ts == null ? '' : new Date(ts * 1000).toISOString().slice(0, 10)) },
      { label: op, stroke: COLORS[0], width: 1.5, spanGaps: false, value: (_u, v) => (v == null ? '–' : String(v)) },
      {
        label: 'missing',
        stroke: COLORS[1],
        fill: COLORS[1],
        width: 0,
        paths: () => null,
        points: { show: true, size: 9, stroke: COLORS[1], fill: COLORS[1] },
        value: (_u, _v, _s, idx) => (idx == null ? '' : points[idx].missing.join(', ') || '–'),
      },
    ],
    axes: [{}, { size: yAxisSize }],
    legend: { live: true },
  };
  // A marker sits on the line (or, where the total is null, on the axis's lowest value).
  const floor = Math.min(...values.filter((v) => v !== null));
  const marks = points.map((p) => (p.missing.length ? (p.value ?? (Number.isFinite(floor) ? floor : 0)) : null));
  plot = new uPlot(opts, [xs, values, marks], $('chart'));
  explorer.plot = plot;
  return log && !positive ? ' Log scale needs positive values: drawn on a linear scale.' : '';
}

/** The ranking as a table: rank, project, value, previous rank, change and share. */
function drawRanking() {
  plot?.destroy();
  plot = undefined;
  $('chart').hidden = true;
  $('table').hidden = false;
  const r = explorer.ranking;
  const cell = (v) => `<td>${v ?? ''}</td>`;
  const head =
    '<thead><tr><th>rank</th><th>project</th><th>value</th><th>previous rank</th><th>previous value</th>' +
    '<th>change</th><th>change %</th><th>share %</th></tr></thead>';
  const rows = r.rows
    .map(
      (row) =>
        `<tr>${cell(row.rank)}<td>${escapeHtml(row.slug)}</td>${cell(row.value)}${cell(row.previousRank)}` +
        `${cell(row.previousValue)}${cell(row.change)}${cell(row.changePercent)}${cell(row.shareOfTotal)}</tr>`,
    )
    .join('');
  const unranked = r.unranked.length ? `<p>No data in the range: ${r.unranked.map(escapeHtml).join(', ')}.</p>` : '';
  $('table').innerHTML =
    `<p>${r.from} to ${r.to} against ${r.previousFrom} to ${r.previousTo}.</p>` +
    `<table id="ranking">${head}<tbody>${rows}</tbody></table>${unranked}`;
  return '';
}

// Copy and download

function show(text) {
  $('copied').hidden = false;
  $('copied').textContent = text;
  navigator.clipboard?.writeText(text).then(
    () => setStatus('Copied to the clipboard (shown below).'),
    () => setStatus('Shown below: copy it from there.'),
  );
}

function graphqlText(state) {
  if (state.mode === 'total' || state.mode === 'rank')
    return `${acrossQuery(state)}\n\n# variables\n${JSON.stringify(acrossVariables(state), null, 2)}`;
  return `${seriesQuery(state)}\n\n# variables\n${JSON.stringify(seriesVariables(state), null, 2)}`;
}

function curlText(state) {
  if (state.mode === 'total' || state.mode === 'rank') {
    const path = state.mode === 'total' ? 'totals' : 'rank';
    return `curl -H "x-api-key: $KEY" "${location.origin}/v1/${path}/${state.metric}?${acrossParams(state)}"`;
  }
  return `curl -H "x-api-key: $KEY" "${location.origin}/v1/metrics/${state.metric}?${restParams(state)}"`;
}

/**
 * The CSV of /v1/export for the view: the same rows as the API serves them, with a
 * metric's breakdown (extra_json) when it has one, so the file imports back whole.
 */
async function downloadCsv(state) {
  const key = sessionStorage.getItem(KEY_STORAGE);
  if (!key) throw new UserError('Enter an API key first.', 'key');
  setStatus('Preparing the CSV…', 'loading');
  let res;
  try {
    const extra = extraFieldsOf(state.metric).length ? '&extra=include' : '';
    res = await fetch(`/v1/export?metric=${state.metric}&${restParams(state)}&format=csv${extra}`, {
      headers: { 'x-api-key': key },
    });
  } catch (error) {
    throw unreachable(error);
  }
  await refuseHttpFailure(res);
  const blob = await res.blob();
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = `${state.metric}_${state.start_date || 'start'}_${state.end_date || 'end'}.csv`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  setStatus(`Downloaded ${link.download} (${blob.size} bytes).`);
}

// Status and errors

function setStatus(text, kind = '') {
  $('status').textContent = text;
  $('status').className = kind;
  if (kind === 'error') explorer.error = text;
}

function fail(error) {
  const message = error instanceof UserError ? error.message : `Something went wrong: ${error.message}`;
  setStatus(message, 'error');
  if (error.needs === 'key') {
    sessionStorage.removeItem(KEY_STORAGE); // a refused key would only be refused again on reload
    $('key').focus();
  }
}

async function guarded(work) {
  try {
    explorer.error = null;
    await work();
  } catch (error) {
    fail(error);
  }
}

// Start

async function start() {
  const state = readUrlState();
  if (!explorer.catalog.length) await loadCatalog();
  explorer.linkNotes = applyState(state);
  await loadSeries();
}

$('key-form').addEventListener('submit', (event) => {
  event.preventDefault();
  sessionStorage.setItem(KEY_STORAGE, $('key').value.trim());
  $('key').value = '';
  guarded(start);
});
$('forget-key').addEventListener('click', () => {
  sessionStorage.removeItem(KEY_STORAGE);
  setStatus('Key forgotten. Enter one to load data.');
});
$('controls').addEventListener('submit', (event) => {
  event.preventDefault();
  guarded(() => loadSeries({ push: true }));
});
$('metric').addEventListener('change', () => {
  const metric = explorer.catalog.find((m) => m.name === $('metric').value);
  fillProjects(metric, defaultProjects(metric));
  $('log').checked = isPrice(metric);
  guarded(() => loadSeries({ push: true }));
});
for (const button of document.querySelectorAll('.presets button')) {
  button.addEventListener('click', () => {
    applyPreset(button.dataset.days === 'all' ? 'all' : Number(button.dataset.days));
    guarded(() => loadSeries({ push: true }));
  });
}
for (const id of ['log', 'table-view']) {
  $(id).addEventListener('change', () => {
    // Only these two toggles: other controls changed but not yet shown stay out of the
    // URL, so a shared link is the view on screen.
    // Before the first view is asked for, the controls hold the URL's view.
    const shown = Object.keys(explorer.state).length > 0 ? explorer.state : controlsState();
    const { log, view } = controlsState();
    explorer.state = { ...shown, log, view };
    writeUrlState(explorer.state);
    const note = draw(explorer.state);
    // Said once, and only while it holds: toggling Log or Table again must not repeat the note.
    if ($('status').className === '' && explorer.summary) setStatus(explorer.summary + note);
  });
}
$('copy-graphql').addEventListener('click', () => show(graphqlText(controlsState())));
$('copy-curl').addEventListener('click', () => show(curlText(controlsState())));
$('download-csv').addEventListener('click', () => guarded(() => downloadCsv(controlsState())));
// Back and Forward go through the views asked for, as they do through pages: each is opened as its link would be.
window.addEventListener('popstate', () => {
  if (explorer.catalog.length) guarded(start);
});
window.addEventListener('resize', () => plot?.setSize({ width: $('chart').clientWidth, height: 420 }));

if (sessionStorage.getItem(KEY_STORAGE)) guarded(start);
else setStatus('Enter your API key above to explore the data.');
