import type { MetricDefinition } from '../catalog/load-catalog.js';
import { builder } from './builder.js';
import { ProjectEnum, ValueKindEnum } from './enums.js';
import { SeriesRef } from './series.js';

export const MetricInfoRef = builder.objectRef<MetricDefinition>('MetricInfo').implement({
  description: 'A metric of the catalog and what may be asked of it.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'The REST name, e.g. token-price-usd.' }),
    valueKind: t.field({ type: ValueKindEnum, description: 'Whole numbers or decimals.', resolve: (m) => m.valueKind }),
    projectRequired: t.exposeBoolean('projectRequired', {
      description: 'True when `projects` must be given; otherwise omitting it means every project.',
    }),
    projects: t.field({
      type: [ProjectEnum],
      description: 'The projects this metric accepts, in catalog order.',
      resolve: (m) => [...m.projects],
    }),
    coverage: t.field({
      type: [SeriesRef],
      description: 'Every project\'s whole series (no range), so `firstDate`/`lastDate` tell what data exists.',
      resolve: (m) => m.projects.map((slug) => ({ metric: m.name, slug, from: null, to: null })),
    }),
  }),
});

builder.queryField('metrics', (t) =>
  t.field({
    type: [MetricInfoRef],
    description: 'The catalog: every metric, its value kind, and the projects it accepts.',
    resolve: (_root, _args, ctx) => [...ctx.services.catalog.metrics],
  }),
);
