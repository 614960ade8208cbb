import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { costLimitRule } from '@escape.tech/graphql-armor-cost-limit';
import { GraphQLError, validate, visit, type ASTVisitor, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { GRAPHQL_LIMITS } from '../limits/graphql-limits.js';

/** The `extensions.code` of every refusal by {@link useGraphqlArmor}, like graphql's own validation errors. */
export const LIMIT_ERROR_CODE = 'GRAPHQL_VALIDATION_FAILED';

/**
 * graphql-armor with {@link GRAPHQL_LIMITS}. A document over a limit gets a GraphQL error
 * with `extensions.code` {@link LIMIT_ERROR_CODE} that names the limit and the amount
 * found, and no data. Like graphql's own validation errors (its introspection depth and
 * its 100-error cap among them), it is answered as GraphQL over HTTP asks of a document
 * that fails validation: 400 to `application/graphql-response+json` clients, 200 to
 * `application/json` ones.
 *
 * graphql-armor rather than Pothos' complexity plugin: Pothos measures depth, breadth and
 * field cost from inside the root resolvers, once execution has begun, and knows nothing
 * of tokens, aliases or directives. armor bounds the document itself, before anything
 * executes: a 10,000-deep `{a{a{…` stops at the token limit inside the parser instead of
 * overflowing its stack, and every count follows fragments, cycles included.
 */
export function useGraphqlArmor(): Plugin {
  const report = (context: ValidationContext | null, error: GraphQLError) => context?.reportError(limitError(error));
  const validated = { onReject: [report], propagateOnRejection: false };
  const armor = EnvelopArmorPlugin({
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth, ignoreIntrospection: true, flattenFragments: true, ...validated },
    // armor exempts `__typename` by default (as the field aliased and as the alias): a
    // document of 300 aliased `__typename`s passed a limit of 15. Every alias counts here.
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases, allowList: [], ...validated },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives, ...validated },
    // Checked by useCostLimit instead, on the document without page sizes.
    costLimit: { enabled: false },
    // The parser has no validation context to report to: the limit stops it by throwing.
    maxTokens: {
      n: GRAPHQL_LIMITS.maxTokens,
      onReject: [
        (_context: ValidationContext | null, error: GraphQLError) => {
          throw limitError(error);
        },
      ],
    },
    // Replaced by useNoSuggestions: armor's pattern misses graphql's enum-value suggestions.
    blockFieldSuggestion: { enabled: false },
  }) as Plugin; // an envelop plugin; Yoga's plugin type only adds optional hooks
  const noSuggestions = useNoSuggestions();
  const costLimit = useCostLimit(
    costLimitRule({ maxCost: GRAPHQL_LIMITS.maxCost, ignoreIntrospection: true, flattenFragments: true, ...validated }),
  );
  return {
    onPluginInit({ addPlugin }) {
      addPlugin(armor);
      addPlugin(costLimit);
      addPlugin(noSuggestions);
    },
  };
}

// Private

/**
 * armor's cost limit, with page sizes left out. armor multiplies the cost of a field by its
 * `first` or `last` argument when the document writes it as a number, but not when a
 * variable passes it: `changes(first: 1000)` with every field cost 12,500 and was refused,
 * while the same page asked for with `$first` passed. Here a page size costs nothing
 * either way; the entries a page holds are bounded (10,000) and charged to the caller's
 * rate limit by the resolver, like any series.
 */
function useCostLimit(rule: (context: ValidationContext) => ASTVisitor): Plugin {
  const withoutPageSizes = (context: ValidationContext): ASTVisitor => {
    const document = context.getDocument();
    const stripped = visit(document, {
      Argument: (node) => (node.name.value === 'first' || node.name.value === 'last' ? null : undefined),
    });
    if (stripped === document) return rule(context);
    // The rule reports through its own context: its errors are this document's.
    for (const error of validate(context.getSchema(), stripped, [rule])) context.reportError(error);
    return {};
  };
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(withoutPageSizes);
    },
  };
}

/** graphql ends a validation message with its guesses: `Did you mean "metric" or "metrics"?`. */
const SUGGESTION = /\s*Did you mean [^?]*\?$/;

/** Drops graphql's "did you mean" guesses from validation errors, so they never hint at names. */
function useNoSuggestions(): Plugin {
  return {
    onValidate:
      () =>
      ({ valid, result }) => {
        if (valid) return;
        for (const error of result) error.message = error.message.replace(SUGGESTION, '');
      },
  };
}

/** armor words every refusal as a "Syntax Error: …", which a depth or cost limit is not. */
function limitError(error: GraphQLError): GraphQLError {
  return new GraphQLError(error.message.replace(/^Syntax Error: /, ''), {
    extensions: { code: LIMIT_ERROR_CODE, http: { status: 400, spec: true } },
  });
}
