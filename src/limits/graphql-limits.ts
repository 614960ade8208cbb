/**
 * Document-level bounds every GraphQL request must stay within. They are checked while
 * the document is parsed (tokens) and validated (the rest), so a refused document never
 * reaches a resolver or the database (graphql/armor.ts).
 */
export const GRAPHQL_LIMITS = Object.freeze({
  /** Nesting of selections in the response shape; fragments are notation and add none. `__schema` is exempt. */
  maxDepth: 6,
  maxAliases: 15,
  /** Lexical tokens in the whole document; GraphiQL's introspection query has under 200. */
  maxTokens: 1000,
  maxDirectives: 10,
  /** armor's cost: 1 per scalar, 2 per object, each level of nesting weighing 1.5 times more. */
  maxCost: 5000,
});
