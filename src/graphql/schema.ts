import { builder } from './builder.js';
import './scalars.js';
import './enums.js';
import './data-point.js';
import './series.js';
import './metric.js';
import './metric-info.js';

/** The GraphQL schema, built once from the catalog. */
export const schema = builder.toSchema({ sortSchema: false });
