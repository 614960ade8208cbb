import type { GraphQLSchema } from 'graphql';
import type { Catalog } from '../catalog/load-catalog.js';
import { createBuilder } from './builder.js';
import { addChangesQuery } from './changes.js';
import { addDataPoint } from './data-point.js';
import { addEnums } from './enums.js';
import { addFreshness } from './freshness.js';
import { addMetricQuery } from './metric.js';
import { addMetricsQuery } from './metric-info.js';
import { addScalars } from './scalars.js';
import { addSeriesUpdatedSubscription } from './series-updated.js';
import { addSeries } from './series.js';

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
  addMetricsQuery(builder, { enums, Series });
  addChangesQuery(builder, { enums });
  addSeriesUpdatedSubscription(builder, { enums });
  return builder.toSchema({ sortSchema: false });
}
