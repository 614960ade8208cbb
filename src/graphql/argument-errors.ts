import {
  getNamedType,
  GraphQLError,
  isEnumType,
  Kind,
  print,
  specifiedRules,
  ValuesOfCorrectTypeRule,
  type ASTNode,
  type ASTVisitor,
  type GraphQLInputType,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import { suggestionList } from 'graphql/jsutils/suggestionList.js';
import type { Plugin } from 'graphql-yoga';
import { clipped } from '../clipped.js';

/**
 * A literal argument of the wrong type (`from: 123`, `name: "token_price_usd"`, `window: "7"`)
 * refused as the client's input: `BAD_USER_INPUT`, as a variable graphql cannot coerce is
 * (variable-check.ts), with a message that names the argument, what it expects and what the
 * document wrote. graphql's own rule said `Enum "MetricName" cannot represent non-enum
 * value: "token_price_usd".` under `GRAPHQL_VALIDATION_FAILED`, which names neither the
 * argument nor how to write an enum value. A value outside an enum is answered with the
 * values it comes closest to, or the enum's first values. The check itself is still
 * graphql's ValuesOfCorrectTypeRule; only what it reports is reworded.
 */
export function useArgumentErrors(): Plugin {
  return {
    onValidate({ validateFn, setValidationFn }) {
      setValidationFn((schema, document, rules, typeInfo, options) => {
        const reworded = (rules ?? specifiedRules).map((rule: ValidationRule) =>
          rule === ValuesOfCorrectTypeRule ? argumentValuesRule : rule,
        );
        return validateFn(schema, document, reworded, typeInfo, options);
      });
    },
  };
}

// Private

/** graphql's ValuesOfCorrectTypeRule, its errors passed through {@link argumentError}. */
function argumentValuesRule(context: ValidationContext): ASTVisitor {
  // The rule reads the context's type information as it reports, so it gets the context itself with only reportError
  // replaced.
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
  const message =
    own || value === undefined || type === null || type === undefined
      ? `${placeOf(context)}: ${error.message.replace(/\s*Did you mean [^?]*\?$/, '')}`
      : `${placeOf(context)} expects ${expectation(type)}, got ${clipped(print(value))}.${enumHint(type, value)}`;
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

/** Enum values named in a refusal when none comes close to what was written. */
const LISTED_VALUES = 8;

/**
 * For an enum: the value a quoted string names (`"blackrock"` is blackrock with quotes), the
 * values closest to a mistyped one (graphql's own measure, as in its "Did you mean"), or the
 * enum's first values and how many there are.
 */
function enumHint(type: GraphQLInputType, value: ASTNode): string {
  const named = getNamedType(type);
  if (!isEnumType(named) || (value.kind !== Kind.STRING && value.kind !== Kind.ENUM)) return '';
  const names = named.getValues().map((v) => v.name);
  if (value.kind === Kind.STRING && names.includes(value.value)) return ` Write it as ${value.value}.`;
  const near = suggestionList(value.value, names).slice(0, 3);
  // Not worded "Did you mean": validation drops that from every message (armor.ts). An enum's
  // values are no secret from whoever gets this far (a key holder, who can introspect them).
  if (near.length > 0) return ` The closest: ${near.join(', ')}.`;
  const more = names.length - LISTED_VALUES;
  return (
    ` Its values: ${names.slice(0, LISTED_VALUES).join(', ')}` +
    `${more > 0 ? `, and ${more} more (the schema lists them all)` : ''}` +
    `.`
  );
}

const BUILT_IN: Readonly<Record<string, string>> = {
  Int: 'an Int (a whole number from -2147483648 to 2147483647)',
  Float: 'a number',
  String: 'a string in double quotes',
  Boolean: 'true or false',
  ID: 'an ID (a string or a whole number)',
};
