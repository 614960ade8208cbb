import { z } from 'zod';
import raw from './catalog.json' with { type: 'json' };

/** A slug is words of letters and digits joined by `-` or `_`; case is significant. */
const SLUG = /^[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*$/;
/** What GraphQL accepts as an enum value name. */
const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;
/** A UTC time of day, `HH:MM`. */
const EXPECTED_BY = /^(?:[01][0-9]|2[0-3]):[0-5][0-9]$/;

/** How a bucket's days may be summed up; the catalog names each metric's default. */
export const AGGREGATIONS = ['sum', 'avg', 'min', 'max', 'first', 'last'] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];

const sampleSeriesSchema = z
  .object({
    model: z.enum(['walk', 'weekly', 'band']),
    min: z.number(),
    max: z.number(),
    volatility: z.number().positive().optional(),
  })
  .refine((s) => s.min < s.max, 'sampleSeries.min must be below sampleSeries.max');

/** Counts and members the contract states for a list, checked so an edit cannot break them. */
const expectSchema = z
  .object({
    count: z.number().int().positive().optional(),
    upperCaseSlugs: z.number().int().nonnegative().optional(),
    includes: z.array(z.string()).optional(),
  })
  .optional();

const listSchema = z.object({
  sample: z.boolean(),
  expect: expectSchema,
  note: z.string().optional(),
  slugs: z.array(z.string().regex(SLUG)).min(1),
});

const metricSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/),
    valueKind: z.enum(['integer', 'decimal']),
    projectRequired: z.boolean(),
    /** How a bucket of days is summed up when a request names no aggregation. */
    defaultAggregation: z.enum(AGGREGATIONS),
    /** Why: flows and counts add up, stocks take the last day, prices, rates and ratios average. */
    aggregationReason: z.string().min(10),
    /** What a value is measured in, e.g. `USD`, `BTC`, `count`, `percent`, `ratio`, `native token`. */
    unit: z.string().min(1).max(40),
    /** What is counted and when a day closes: a sentence or two. */
    methodology: z.string().min(20).max(600),
    tags: z.array(z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/)).max(12),
    /** The UTC time of day by which day D's value normally lands, on day D + 1. */
    expectedBy: z.string().regex(EXPECTED_BY),
    /** How many days after its first write a day's value may still be revised. */
    stabilizationDays: z.number().int().min(0).max(365),
    list: z.string().optional(),
    projects: z.array(z.string().regex(SLUG)).min(1).optional(),
    sampleList: z.boolean().optional(),
    expect: expectSchema,
    /** Named fields a point may carry beyond date and value (only etf-num-products has them). */
    extraFields: z
      .array(
        z
          .string()
          .regex(/^[a-z][a-z0-9_]*$/)
          .refine((f) => f !== 'date' && f !== 'value'),
      )
      .optional(),
    sampleSeries: sampleSeriesSchema,
  })
  .refine((m) => (m.list === undefined) !== (m.projects === undefined), 'a metric names either "list" or "projects"');

/** A named set of projects that may reach across metrics (src/analytics totals and ranks them). */
const groupSchema = z.object({
  name: z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/),
  description: z.string().min(1),
  projects: z.array(z.string().regex(SLUG)).min(1),
});

/** A metric computed from stored ones by a formula (src/formula/), over the projects all its inputs allow. */
const derivedSchema = z.object({
  name: z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/),
  valueKind: z.enum(['integer', 'decimal']),
  /** How each input's buckets are aggregated unless the input or a request says otherwise. */
  defaultAggregation: z.enum(AGGREGATIONS),
  aggregationReason: z.string().min(10),
  formula: z.string().min(1).max(500),
  inputs: z
    .array(
      z.object({
        name: z.string().regex(/^[a-z_][a-z0-9_]{0,15}$/),
        metric: z.string(),
        aggregation: z.enum(AGGREGATIONS).optional(),
      }),
    )
    .min(1)
    .max(8),
  unit: z.string().min(1).max(40),
  methodology: z.string().min(20).max(600),
  tags: z.array(z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/)).max(12),
});

const fileSchema = z.object({
  lists: z.record(z.string(), listSchema),
  metrics: z.array(metricSchema).min(1),
  groups: z.array(groupSchema).optional(),
  derived: z.array(derivedSchema).optional(),
});

export type ValueKind = 'integer' | 'decimal';
export type SampleSeries = z.infer<typeof sampleSeriesSchema>;

/** One metric as the API serves it, with its allowed slugs resolved and in catalog order. */
export interface MetricDefinition {
  readonly name: string;
  readonly valueKind: ValueKind;
  readonly projectRequired: boolean;
  /** How buckets of days are aggregated unless a request says otherwise. */
  readonly defaultAggregation: Aggregation;
  /** What a value is, and so why it aggregates as it does: the metric's description. */
  readonly description: string;
  readonly projects: readonly string[];
  /** True when the slugs stand in for a list interface-v1.md omits. */
  readonly sampleProjects: boolean;
  /** Fields a point may carry beyond `date` and `value`; empty for most metrics. */
  readonly extraFields: readonly string[];
  readonly sampleSeries: SampleSeries;
  /** For a metric computed from others (a derived metric, or a formula request): how. Undefined for stored ones. */
  readonly formula?: FormulaDefinition;
  /** What a value is measured in, e.g. `USD`, `BTC`, `count`, `percent`, `ratio`, `native token`. */
  readonly unit: string;
  /** What is counted and when a day closes. */
  readonly methodology: string;
  readonly tags: readonly string[];
  /** The UTC time (`HH:MM`) on day D + 1 by which day D's value normally lands. */
  readonly expectedBy: string;
  /** How many days after a day's first write its value is provisional (may still be revised). */
  readonly stabilizationDays: number;
}

/** An expression over named inputs, each a stored metric bucketed with an aggregation. */
export interface FormulaDefinition {
  /** The expression's text, e.g. `100 * p / (p + b)` (src/formula/formula-expression.ts). */
  readonly expr: string;
  readonly inputs: readonly FormulaInputDefinition[];
}

export interface FormulaInputDefinition {
  /** The name the expression uses. */
  readonly name: string;
  readonly metric: MetricDefinition;
  /** How its buckets aggregate; undefined: the request's aggregation (a derived metric's default). */
  readonly aggregation?: Aggregation;
}

/** A named group of projects; for a metric its members are the group's projects the metric allows. */
export interface GroupDefinition {
  readonly name: string;
  readonly description: string;
  readonly projects: readonly string[];
}

export interface Catalog {
  /** The stored metrics: what is imported, synced, seeded and read from points. */
  readonly metrics: readonly MetricDefinition[];
  /** The named groups of projects, in catalog order. */
  readonly groups: readonly GroupDefinition[];
  readonly byName: ReadonlyMap<string, MetricDefinition>;
  /** The derived metrics: computed from stored ones by their formula, served like them. */
  readonly derived: readonly MetricDefinition[];
  /** Every metric served by name, stored and derived. */
  readonly served: ReadonlyMap<string, MetricDefinition>;
  /** The metric (stored or derived) of a name the catalog has (a GraphQL enum value); throws for any other. */
  metric(name: string): MetricDefinition;
  /** Every distinct slug of every metric, in first-seen order. */
  readonly allProjects: readonly string[];
}

/** The GraphQL name of a slug or metric name: `-` becomes `_`, case is kept. */
export function toGraphqlName(slug: string): string {
  return slug.replaceAll('-', '_');
}

/**
 * Parses and checks a catalog document. Throws an Error listing every problem found:
 * schema violations, unknown list references, duplicate names or slugs, and slugs
 * whose GraphQL names collide.
 */
export function parseCatalog(input: unknown): Catalog {
  const parsed = fileSchema.safeParse(input);
  if (!parsed.success) throw new Error(`catalog is invalid: ${z.prettifyError(parsed.error)}`);
  const { lists, metrics: rawMetrics, groups: rawGroups = [] } = parsed.data;
  const problems: string[] = [];

  const metrics = rawMetrics.map((m): MetricDefinition => {
    const list = m.list === undefined ? undefined : lists[m.list];
    if (m.list !== undefined && list === undefined) problems.push(`${m.name}: unknown list "${m.list}"`);
    const projects = list?.slugs ?? m.projects ?? [];
    for (const dup of duplicates(projects)) problems.push(`${m.name}: slug "${dup}" appears twice`);
    problems.push(...unmetExpectations(m.name, projects, list?.expect));
    problems.push(...unmetExpectations(m.name, projects, m.expect));
    return {
      name: m.name,
      valueKind: m.valueKind,
      projectRequired: m.projectRequired,
      defaultAggregation: m.defaultAggregation,
      description: `${m.aggregationReason.charAt(0).toUpperCase()}${m.aggregationReason.slice(1)}`,
      projects: Object.freeze([...projects]),
      sampleProjects: list?.sample ?? m.sampleList ?? false,
      extraFields: Object.freeze([...(m.extraFields ?? [])]),
      sampleSeries: m.sampleSeries,
      unit: m.unit,
      methodology: m.methodology,
      tags: Object.freeze([...m.tags]),
      expectedBy: m.expectedBy,
      stabilizationDays: m.stabilizationDays,
    };
  });

  const stored = new Map(metrics.map((m) => [m.name, m]));
  const derived = (parsed.data.derived ?? []).map((d): MetricDefinition => {
    const inputs = d.inputs.flatMap((input) => {
      const metric = stored.get(input.metric);
      if (metric === undefined) problems.push(`${d.name}: input ${input.name} names unknown metric "${input.metric}"`);
      return metric === undefined ? [] : [{ name: input.name, metric, aggregation: input.aggregation }];
    });
    for (const dup of duplicates(d.inputs.map((i) => i.name))) problems.push(`${d.name}: input "${dup}" twice`);
    const projects = inputs.reduce<readonly string[]>(
      (common, input) => common.filter((slug) => input.metric.projects.includes(slug)),
      inputs[0]?.metric.projects ?? [],
    );
    if (projects.length === 0) problems.push(`${d.name}: its inputs share no project`);
    return {
      name: d.name,
      valueKind: d.valueKind,
      projectRequired: inputs.some((i) => i.metric.projectRequired),
      defaultAggregation: d.defaultAggregation,
      description: `${d.aggregationReason.charAt(0).toUpperCase()}${d.aggregationReason.slice(1)}`,
      projects: Object.freeze([...projects]),
      sampleProjects: false,
      extraFields: Object.freeze([]),
      sampleSeries: { model: 'walk', min: 0, max: 1 },
      formula: Object.freeze({ expr: d.formula, inputs: Object.freeze(inputs) }),
      unit: d.unit,
      methodology: d.methodology,
      tags: Object.freeze([...d.tags]),
      // Known once every input is: the latest schedule, the longest provisional span.
      expectedBy: inputs.map((i) => i.metric.expectedBy).reduce((a, b) => (a > b ? a : b), '00:00'),
      stabilizationDays: Math.max(0, ...inputs.map((i) => i.metric.stabilizationDays)),
    };
  });
  const everyMetric = [...metrics, ...derived];
  for (const dup of duplicates(everyMetric.map((m) => m.name))) problems.push(`metric "${dup}" appears twice`);
  for (const dup of duplicates(everyMetric.map((m) => toGraphqlName(m.name)))) {
    problems.push(`two metric names map to the GraphQL name "${dup}"`);
  }
  const allProjects = [...new Set(metrics.flatMap((m) => m.projects))];
  for (const name of [...everyMetric.map((m) => m.name), ...allProjects]) {
    if (!GRAPHQL_NAME.test(toGraphqlName(name)))
      problems.push(`"${name}" cannot be a GraphQL name (it must not start with a digit)`);
  }
  for (const dup of duplicates(allProjects.map(toGraphqlName))) {
    problems.push(`two slugs map to the GraphQL enum value "${dup}"`);
  }
  problems.push(...groupProblems(rawGroups, allProjects));
  if (problems.length > 0) throw new Error(`catalog is invalid:\n- ${problems.join('\n- ')}`);

  const byName = new Map(metrics.map((m) => [m.name, m]));
  const served = new Map(everyMetric.map((m) => [m.name, m]));
  return Object.freeze({
    metrics: Object.freeze(metrics),
    groups: Object.freeze(
      rawGroups.map((g) =>
        Object.freeze({ name: g.name, description: g.description, projects: Object.freeze([...g.projects]) }),
      ),
    ),
    byName,
    derived: Object.freeze(derived),
    served,
    metric: (name: string) => {
      const metric = served.get(name);
      if (metric === undefined) throw new Error(`the catalog has no metric named ${JSON.stringify(name)}`);
      return metric;
    },
    allProjects: Object.freeze(allProjects),
  });
}

/** The catalog shipped in `catalog.json`, parsed and checked once at start-up. */
export const CATALOG: Catalog = parseCatalog(raw);

// Private

type Expectation = z.infer<typeof expectSchema>;

function unmetExpectations(metric: string, slugs: readonly string[], expect: Expectation): string[] {
  if (expect === undefined) return [];
  const problems: string[] = [];
  if (expect.count !== undefined && slugs.length !== expect.count) {
    problems.push(`${metric}: expected ${expect.count} slugs, found ${slugs.length}`);
  }
  const upper = slugs.filter((s) => s !== s.toLowerCase()).length;
  if (expect.upperCaseSlugs !== undefined && upper !== expect.upperCaseSlugs) {
    problems.push(`${metric}: expected ${expect.upperCaseSlugs} slugs with upper-case letters, found ${upper}`);
  }
  for (const slug of expect.includes ?? []) {
    if (!slugs.includes(slug)) problems.push(`${metric}: expected slug "${slug}" is missing`);
  }
  return problems;
}

/** Groups must have distinct names (also as GraphQL names) and name only slugs some metric has, each once. */
function groupProblems(groups: readonly z.infer<typeof groupSchema>[], allProjects: readonly string[]): string[] {
  const problems: string[] = [];
  for (const dup of duplicates(groups.map((g) => toGraphqlName(g.name)))) problems.push(`group "${dup}" appears twice`);
  const known = new Set(allProjects);
  for (const group of groups) {
    for (const dup of duplicates(group.projects)) problems.push(`group ${group.name}: slug "${dup}" appears twice`);
    for (const slug of group.projects.filter((p) => !known.has(p)))
      problems.push(`group ${group.name}: "${slug}" is not a project of any metric`);
  }
  return problems;
}

function duplicates(values: readonly string[]): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const value of values) (seen.has(value) ? repeated : seen).add(value);
  return [...repeated];
}
