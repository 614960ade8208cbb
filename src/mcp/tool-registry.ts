import type { Catalog } from '../catalog/load-catalog.js';
import type { Tool } from './tool.js';
import { createExplainMetricTool } from './tools/explain-metric.js';
import { createGetSeriesTool } from './tools/get-series.js';
import { createFormulaTool } from './tools/formula.js';
import { createListMetricsTool } from './tools/list-metrics.js';
import { createRankTool } from './tools/rank.js';
import { createTotalTool } from './tools/total.js';

/** The tools `/mcp` offers, in the order `tools/list` gives them. A new tool is its module and a line here. */
export function createTools(catalog: Catalog): readonly Tool[] {
  return [
    createListMetricsTool(catalog),
    createExplainMetricTool(catalog),
    createGetSeriesTool(catalog),
    createTotalTool(catalog),
    createRankTool(catalog),
    createFormulaTool(catalog),
  ];
}
