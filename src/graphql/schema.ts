import type { GraphQLSchema } from 'graphql';
import type { Catalog } from '../catalog/load-catalog.js';
import { createBuilder } from './builder.js';
import { addChangesQuery } from './changes.js';
import { addDataPoint } from './data-point.js';
import { addEnums } from './enums.js';
import { addHooks } from './hooks.js';
import { addFormulaQuery } from './formula.js';
import { addFreshness } from './freshness.js';
import { addMetricQuery } from './metric.js';
import { addMetricsQuery } from './metric-info.js';
import { addRevisionProfileField } from './revision-profile.js';
import { addRevisionsQuery } from './revisions.js';
import { addScalars } from './scalars.js';
import { addSeriesUpdatedSubscription } from './series-updated.js';
import { addSeries } from './series.js';
import { addUsageQuery } from './usage.js';
import { addGroups } from './groups.js';
import { addRankQuery } from './rank.js';
import { addTotalQuery } from './total.js';

/** The GraphQL schema of a catalog: its metrics and slugs become enums. */
export function createGraphqlSchema(catalog: Catalog): GraphQLSchema {
  const builder = createBuilder();
  builder.queryType({ description: 'Daily metric time series.' });
  addScalars(builder);
  const enums = addEnums(builder, catalog);
  const DataPoint = addDataPoint(builder);
  const Series = addSeries(builder, { DataPoint, enums });
  addFreshness(builder, Series);
  addMetricQuery(builder, { catalog, enums, Series });
  const MetricInfo = addMetricsQuery(builder, { enums, Series });
  addRevisionProfileField(builder, { MetricInfo });
  addRevisionsQuery(builder, { catalog, enums });
  addChangesQuery(builder, { enums });
  addUsageQuery(builder);
  const Group = addGroups(builder, { catalog, enums });
  addFormulaQuery(builder, { catalog, enums, Series, Group });
  addTotalQuery(builder, { catalog, enums, Group });
  addRankQuery(builder, { catalog, enums, Group });
  addSeriesUpdatedSubscription(builder, { enums });
  builder.mutationType({ description: 'Changes to what the caller owns: its webhooks.' });
  addHooks(builder);
  return builder.toSchema({ sortSchema: false });
}
