import type { FormulaInputDefinition, MetricDefinition } from '../catalog/load-catalog.js';
import { wholeSeries } from '../series/series-plan.js';
import { planMetric } from '../formula/formula-plan.js';
import type { Builder } from './builder.js';
import type { Enums } from './enums.js';
import type { SeriesRef } from './series.js';

/** The `MetricInfo` type and the `metrics` catalog field; returns `MetricInfo` for fields added beside it. */
export function addMetricsQuery(builder: Builder, refs: { enums: Enums; Series: SeriesRef }) {
  const MetricInput = builder.objectRef<FormulaInputDefinition>('MetricInput').implement({
    description: 'An input of a derived metric: a name its formula uses and the stored metric behind it.',
    fields: (t) => ({
      name: t.exposeString('name', { description: 'The name in the formula.' }),
      metric: t.field({
        type: refs.enums.MetricName,
        description: 'The stored metric read.',
        resolve: (i) => i.metric.name,
      }),
      aggregation: t.field({
        type: refs.enums.Aggregation,
        nullable: true,
        description: "How its buckets aggregate; null: the derived metric's (or the request's) aggregation.",
        resolve: (i) => i.aggregation ?? null,
      }),
    }),
  });

  const MetricInfo = builder.objectRef<MetricDefinition>('MetricInfo').implement({
    description: 'A metric of the catalog and what may be asked of it.',
    fields: (t) => ({
      name: t.exposeString('name', { description: 'The REST name, e.g. token-price-usd.' }),
      valueKind: t.field({
        type: refs.enums.ValueKind,
        description: 'Whole numbers or decimals.',
        resolve: (m) => m.valueKind,
      }),
      description: t.string({
        description:
          'What a value of the metric is, and so how its buckets aggregate, e.g. ' +
          '"fees paid per day: a flow, so a bucket adds its days up".',
        resolve: (m) => m.description,
      }),
      defaultAggregation: t.field({
        type: refs.enums.Aggregation,
        description:
          'How buckets aggregate this metric unless `aggregation` says otherwise: ' +
          'flows and counts add up (SUM), stocks take the last day (LAST), prices, ' +
          'rates, yields and ratios average (AVG).',
        resolve: (m) => m.defaultAggregation,
      }),
      extraFields: t.stringList({
        description:
          'The names of the extra fields its points carry in `extra` (etf-num-products ' +
          'breaks its count down); empty for most metrics.',
        resolve: (m) => [...m.extraFields],
      }),
      unit: t.exposeString('unit', {
        description: 'What a value is measured in: USD, BTC, count, percent, ratio, native token.',
      }),
      methodology: t.exposeString('methodology', { description: 'What is counted, and when a day closes.' }),
      tags: t.stringList({ description: 'Topics, for grouping metrics.', resolve: (m) => [...m.tags] }),
      expectedBy: t.exposeString('expectedBy', {
        description: "The UTC time (HH:MM) on day D + 1 by which day D's value normally lands.",
      }),
      stabilizationDays: t.exposeInt('stabilizationDays', {
        description: "How many days after a day's first write its value is provisional (may still be revised).",
      }),
      projectRequired: t.exposeBoolean('projectRequired', {
        description: 'True when `projects` must be given; otherwise omitting it means every project.',
      }),
      projects: t.field({
        type: [refs.enums.Project],
        description: 'The projects this metric accepts, in catalog order.',
        resolve: (m) => [...m.projects],
      }),
      formula: t.string({
        nullable: true,
        description:
          'For a derived metric, the expression computing it from its `inputs` (e.g. `100 * p / (p + b)`); ' +
          'null for a stored metric.',
        resolve: (m) => m.formula?.expr ?? null,
      }),
      inputs: t.field({
        type: [MetricInput],
        nullable: true,
        description: 'For a derived metric, the stored metrics its formula reads; null for a stored metric.',
        resolve: (m) => (m.formula === undefined ? null : [...m.formula.inputs]),
      }),
      coverage: t.field({
        type: [refs.Series],
        description:
          "Every project's whole series (no range), so `firstDate`/`lastDate` tell " +
          'what data exists. Reading `points` here costs what the whole history of ' +
          'each project costs through `metric`.',
        resolve: (m, _args, ctx) => {
          const plan = planMetric(wholeSeries(m, m.projects), ctx.directory);
          return plan.projects.map((project) => ({ plan, project, unpriced: true as const }));
        },
      }),
    }),
  });

  builder.queryField('metrics', (t) =>
    t.field({
      type: [MetricInfo],
      description:
        'The catalog: every metric, its value kind, and the projects it accepts; the stored metrics, ' +
        'then the derived ones (with their `formula`).',
      resolve: (_root, _args, ctx) => [...ctx.services.catalog.metrics, ...ctx.services.catalog.derived],
    }),
  );
  return MetricInfo;
}

export type MetricInfoRef = ReturnType<typeof addMetricsQuery>;
