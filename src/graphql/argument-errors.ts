import {
  getNamedType,
  GraphQLError,
  isEnumType,
  print,
  specifiedRules,
  ValuesOfCorrectTypeRule,
  type ASTVisitor,
  type GraphQLInputType,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { clipped } from '../clipped.js';

/**
 * A literal argument of the wrong type (`from: 123`, `name: "token_price_usd"`, `window: "7"`)
 * refused as the client's input: `BAD_USER_INPUT`, as a variable graphql cannot coerce is
 * (variable-check.ts), with a message that names the argument, what it expects and what the
 * document wrote. graphql's own rule said `Enum "MetricName" cannot represent non-enum
 * value: "token_price_usd".` under `GRAPHQL_VALIDATION_FAILED`, which names neither the
 * argument nor how to write an enum value. The check itself is still graphql's
 * ValuesOfCorrectTypeRule; only what it reports is reworded.
 */
export function useArgumentErrors(): Plugin {
  return {
    onValidate({ validateFn, setValidationFn }) {
      setValidationFn((schema, document, rules, typeInfo, options) => {
        const reworded = (rules ?? specifiedRules).map((rule: ValidationRule) => (rule === ValuesOfCorrectTypeRule ? argumentValuesRule : rule));
        return validateFn(schema, document, reworded, typeInfo, options);
      });
    },
  };
}

// Private

/** graphql's ValuesOfCorrectTypeRule, its errors passed through {@link argumentError}. */
function argumentValuesRule(context: ValidationContext): ASTVisitor {
  // The rule reads the context's type information as it reports, so it gets the context itself with only reportError replaced.
  const reporting = Object.create(context) as ValidationContext;
  reporting.reportError = (error) => context.reportError(argumentError(context, error));
  return ValuesOfCorrectTypeRule(reporting);
}

/**
 * The error for a value the rule refused, read while the rule stands on that value. Errors
 * our own scalars throw (Date, DateTime) already say what they expect and what they got.
 */
function argumentError(context: ValidationContext, error: GraphQLError): GraphQLError {
  const value = error.nodes?.[0];
  const type = context.getInputType();
  const own = error.extensions.code !== undefined;
  const message = own || value === undefined || type === null || type === undefined
    ? `${placeOf(context)}: ${error.message.replace(/\s*Did you mean [^?]*\?$/, '')}`
    : `${placeOf(context)} expects ${expectation(type)}, got ${clipped(print(value))}.`;
  return new GraphQLError(message, { nodes: error.nodes, extensions: { code: 'BAD_USER_INPUT' } });
}

/** `Argument "from" of "metric"`, `Argument "if" of @include`, or a variable's default value. */
function placeOf(context: ValidationContext): string {
  const argument = context.getArgument();
  if (!argument) return 'A default value';
  const directive = context.getDirective();
  const owner = directive ? `@${directive.name}` : `"${context.getFieldDef()?.name ?? '?'}"`;
  return `Argument "${argument.name}" of ${owner}`;
}

/** What a value of `type` is, in words a client can act on. */
function expectation(type: GraphQLInputType): string {
  const named = getNamedType(type);
  if (isEnumType(named)) return `a value of the enum ${named.name}, written as a name without quotes`;
  return BUILT_IN[named.name] ?? `a ${named.name}`;
}

const BUILT_IN: Readonly<Record<string, string>> = {
  Int: 'an Int (a whole number from -2147483648 to 2147483647)',
  Float: 'a number',
  String: 'a string in double quotes',
  Boolean: 'true or false',
  ID: 'an ID (a string or a whole number)',
};
