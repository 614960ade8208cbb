import {
  getArgumentValues,
  getDirectiveValues,
  getOperationAST,
  getVariableValues,
  GraphQLError,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ERROR_KINDS } from '../api/api-error.js';
import { SMALL_ANSWER_BYTES } from '../limits/answer-budget.js';
import type { SeriesRequest } from '../series/series-request.js';
import type { GraphqlContext } from './builder.js';
import { priceSeries } from './charge-series.js';
import type { GraphqlServices } from './graphql-services.js';
import { metricArgsSchema, type MetricArgs } from './metric.js';
import { formulaArgsSchema, type FormulaArgs } from './formula.js';

/**
 * Reserves a query's answer from the answer budget once, before it runs, for the points
 * its document selects ({@link estimateAnswerBytes}). A request never waits while it holds
 * bytes, so it cannot wait on itself, and one that asks for more than the whole budget is
 * refused at once with `PAYLOAD_TOO_LARGE` instead of taking the queue. Like every refusal
 * of a document (GraphQL over HTTP), that is a 200 to an `application/json` client and its
 * status (413) to an `application/graphql-response+json` one.
 */
export function useAnswerBudget(services: GraphqlServices): Plugin<GraphqlContext> {
  const metricArgs = metricArgsSchema(services.catalog);
  const formulaArgs = formulaArgsSchema(services.catalog);
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue as GraphqlContext;
      const bytes = estimateAnswerBytes(services, metricArgs, args, formulaArgs);
      if (bytes < SMALL_ANSWER_BYTES) return;
      const limit = services.answerBudget.totalBytes;
      if (bytes > limit) return setResultAndStopExecution({ errors: [answerTooLarge(bytes, limit)] });
      await ctx.reserveAnswer(bytes);
    },
  };
}

/**
 * The bytes of points a query's answer will hold, estimated from its document as the
 * resolvers price what they read (charge-series.ts): each distinct response path of a
 * `points` field reads all its series, so `metric` counts once per `series { points }`
 * path under it (aliases and fragments included, @skip/@include honoured). Arguments that
 * do not validate add nothing: such a field reads no points. The catalog's `coverage`
 * prices each series alone, each too small to reserve, so it is not counted. A `formula`
 * field counts as `metric` does, sized by the widest of its inputs.
 */
export function estimateAnswerBytes(
  services: GraphqlServices,
  metricArgs: ReturnType<typeof metricArgsSchema>,
  args: ExecutionInput,
  formulaArgs?: ReturnType<typeof formulaArgsSchema>,
): number {
  const operation = getOperationAST(args.document, args.operationName);
  if (operation?.operation !== 'query') return 0;
  const coerced = getVariableValues(args.schema, operation.variableDefinitions ?? [], args.variableValues ?? {});
  if (coerced.errors !== undefined) return 0;
  const walk: Walk = { variables: coerced.coerced, fragments: fragmentsOf(args.document) };
  const metricField = args.schema.getQueryType()?.getFields().metric;
  const formulaField = args.schema.getQueryType()?.getFields().formula;
  let bytes = 0;
  for (const nodes of collect(walk, [operation.selectionSet]).values()) {
    const name = nodes[0]!.name.value;
    if (name === 'metric' && metricField !== undefined) {
      const reads = pathsTo(walk, nodes, ['series', 'points']);
      if (reads === 0) continue;
      const args = () => getArgumentValues(metricField, nodes[0]!, walk.variables) as MetricArgs;
      const request = metricRequest(metricArgs, args);
      if (request !== undefined) bytes += reads * priceSeries(services, request).bytes;
    } else if (name === 'formula' && formulaField !== undefined && formulaArgs !== undefined) {
      const reads = pathsTo(walk, nodes, ['series', 'points']);
      if (reads === 0) continue;
      const args = () => getArgumentValues(formulaField, nodes[0]!, walk.variables) as unknown as FormulaArgs;
      const request = metricRequest(formulaArgs, args);
      if (request !== undefined) bytes += reads * priceSeries(services, request).bytes;
    }
  }
  return bytes;
}

// Private

/** What execution is given, as far as sizing its answer needs. */
export interface ExecutionInput {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null;
  variableValues?: { readonly [name: string]: unknown } | null;
}

/** A document's variables (coerced) and fragments, for walking its selections. */
export interface Walk {
  variables: { [name: string]: unknown };
  fragments: ReadonlyMap<string, FragmentDefinitionNode>;
}

export function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  return fragments;
}

/**
 * The fields of selection sets by response key, as execution merges them: through inline
 * fragments and fragment spreads (each fragment once), leaving out what @skip/@include drop.
 */
export function collect(
  walk: Walk,
  sets: readonly SelectionSetNode[],
  visited = new Set<string>(),
): Map<string, FieldNode[]> {
  const fields = new Map<string, FieldNode[]>();
  const add = (set: SelectionSetNode) => {
    for (const selection of set.selections) {
      if (!included(walk, selection)) continue;
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        fields.set(key, [...(fields.get(key) ?? []), selection]);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        add(selection.selectionSet);
      } else if (!visited.has(selection.name.value)) {
        visited.add(selection.name.value);
        const fragment = walk.fragments.get(selection.name.value);
        if (fragment !== undefined) add(fragment.selectionSet);
      }
    }
  };
  for (const set of sets) add(set);
  return fields;
}

function included(walk: Walk, node: Parameters<typeof getDirectiveValues>[1]): boolean {
  if (getDirectiveValues(GraphQLSkipDirective, node, walk.variables)?.if === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, node, walk.variables)?.if !== false;
}

/** The series request of a `metric` field's arguments; undefined when they do not coerce or validate. */
function metricRequest<A>(
  schema: { safeParse(args: A): { success: true; data: { request: SeriesRequest } } | { success: false } },
  args: () => A,
): SeriesRequest | undefined {
  try {
    const parsed = schema.safeParse(args());
    return parsed.success ? parsed.data.request : undefined;
  } catch {
    return undefined; // a scalar that does not parse: execution reports it
  }
}

/** How many distinct response paths below `nodes` follow the field names of `path`. */
export function pathsTo(walk: Walk, nodes: readonly FieldNode[], path: readonly string[]): number {
  if (path.length === 0) return 1;
  const sets = nodes.flatMap((node) => (node.selectionSet === undefined ? [] : [node.selectionSet]));
  let count = 0;
  for (const children of collect(walk, sets).values()) {
    if (children[0]!.name.value === path[0]) count += pathsTo(walk, children, path.slice(1));
  }
  return count;
}

/** The refusal of a query whose answer could never fit the budget, naming the limit. */
function answerTooLarge(bytes: number, limit: number): GraphQLError {
  const mb = (n: number) => `${Math.ceil(n / 2 ** 20)} MB`;
  const kind = ERROR_KINDS['payload-too-large'];
  return new GraphQLError(
    `the answer's points are estimated at ${mb(bytes)}, over the limit of ${mb(limit)} for one GraphQL answer; ` +
      'ask for fewer projects, a shorter range or fewer aliases, or read it through REST, which streams',
    { extensions: { code: kind.graphqlCode, http: { status: kind.status, spec: true } } },
  );
}
