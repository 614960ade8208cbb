import { getOperationAST, getVariableValues, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** graphql's own cap on variable errors; past it one more error says coercion was abandoned. */
const MAX_VARIABLE_ERRORS = 50;

/**
 * Checks an operation's variables with graphql's `getVariableValues` before anything
 * executes, stopping after {@link MAX_VARIABLE_ERRORS} errors and suggesting no names:
 * graphql-jit's own check reports every bad list item, so a body under 1 MB of bad enum
 * values made an answer of megabytes. Refusals are the client's: `BAD_USER_INPUT` and
 * HTTP 400, as for any variable graphql cannot coerce.
 */
export function useVariableCheck(): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document, args.operationName);
      if (operation === null || operation === undefined) return;
      const coerced = getVariableValues(args.schema, operation.variableDefinitions ?? [], args.variableValues ?? {}, {
        maxErrors: MAX_VARIABLE_ERRORS,
        hideSuggestions: true,
      });
      if (coerced.errors === undefined) return;
      setResultAndStopExecution({
        errors: coerced.errors.map(
          (error) =>
            new GraphQLError(error.message, {
              nodes: error.nodes,
              extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } },
            }),
        ),
      });
    },
  };
}
