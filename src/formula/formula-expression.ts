import jsep from 'jsep';

/**
 * A formula's expression as a checked tree: numbers, input names, `+ - * / ^`, unary minus
 * and the functions of {@link FUNCTIONS}, nothing else. jsep parses the text (with its
 * operators narrowed to these, `^` the tightest and right-associative, and unary minus
 * tighter still, as spreadsheets have it); every node is then checked against this list,
 * so what reaches the SQL compiler is one of these shapes only.
 */
export type FormulaNode =
  | { kind: 'number'; text: string }
  | { kind: 'input'; name: string }
  | { kind: 'negate'; argument: FormulaNode }
  | { kind: 'binary'; operator: BinaryOperator; left: FormulaNode; right: FormulaNode }
  | { kind: 'call'; name: FunctionName; arguments: FormulaNode[] };

export type BinaryOperator = '+' | '-' | '*' | '/' | '^';

/** The functions a formula may call, with how many arguments each takes. */
export const FUNCTIONS = {
  abs: { min: 1, max: 1 },
  ln: { min: 1, max: 1 },
  exp: { min: 1, max: 1 },
  sqrt: { min: 1, max: 1 },
  min: { min: 2, max: 8 },
  max: { min: 2, max: 8 },
  coalesce: { min: 2, max: 8 },
} as const;

export type FunctionName = keyof typeof FUNCTIONS;

/** Limits on one expression: its text, its tree and its inputs. */
export const MAX_EXPRESSION_LENGTH = 500;
export const MAX_EXPRESSION_NODES = 64;
export const MAX_INPUTS = 8;
/** An input's name: a lower-case identifier of up to 16 characters. */
export const INPUT_NAME = /^[a-z_][a-z0-9_]{0,15}$/;

/** An expression refused, with the 1-based character position it is refused at (when one applies). */
export class FormulaError extends Error {
  constructor(
    message: string,
    readonly position?: number,
  ) {
    super(position === undefined ? message : `at character ${position}: ${message}`);
  }
}

/**
 * Parses and checks an expression over the given input names. Throws a {@link FormulaError}
 * naming the position and what was expected: a syntax error, an operator or construct that
 * is not allowed, an unknown input or function, a wrong number of arguments, a literal out
 * of range, or an expression over the limits.
 */
export function parseFormula(text: string, inputs: readonly string[]): FormulaNode {
  if (text.length > MAX_EXPRESSION_LENGTH)
    throw new FormulaError(`an expression has at most ${MAX_EXPRESSION_LENGTH} characters, got ${text.length}`);
  if (text.trim() === '') throw new FormulaError('expected an expression, got nothing', 1);
  let parsed: jsep.Expression;
  try {
    parsed = parse(text);
  } catch (error) {
    const { description, index } = error as { description?: string; index?: number };
    if (description === undefined || index === undefined) throw error;
    throw new FormulaError(`${description.replace(/ at character \d+$/, '')}; ${EXPECTED}`, index + 1);
  }
  const counter = { nodes: 0 };
  return check(parsed, new Set(inputs), counter);
}

/** The input names an expression uses, each once, in order of first use. */
export function inputsUsed(node: FormulaNode): string[] {
  const names: string[] = [];
  const visit = (n: FormulaNode): void => {
    if (n.kind === 'input') {
      if (!names.includes(n.name)) names.push(n.name);
    } else if (n.kind === 'negate') visit(n.argument);
    else if (n.kind === 'binary') {
      visit(n.left);
      visit(n.right);
    } else if (n.kind === 'call') n.arguments.forEach(visit);
  };
  visit(node);
  return names;
}

// Private

const EXPECTED =
  'expected numbers, input names, + - * / ^, unary -, parentheses and abs, min, max, coalesce, ln, exp, sqrt';

/** Where each token starts (1-based), recorded while jsep reads it. */
const START = Symbol('start');
type Located = jsep.Expression & { [START]?: number };

let starts: number[] = [];

/**
 * jsep is configured once, for this module only (nothing else in the service uses it): the
 * formula operators and nothing more, no literals beyond numbers, and a record of where
 * every token starts so a check can name its position.
 */
jsep.removeAllBinaryOps();
jsep.removeAllUnaryOps();
jsep.removeAllLiterals();
jsep.addBinaryOp('+', 9);
jsep.addBinaryOp('-', 9);
jsep.addBinaryOp('*', 10);
jsep.addBinaryOp('/', 10);
jsep.addBinaryOp('^', 11, true);
jsep.addUnaryOp('-');
jsep.hooks.add('gobble-token', function (this: jsep.HookScope, env) {
  starts.push(this.index + 1);
  // Numbers are read here so that they, like every other token, pass through `after-token`.
  if (this.code === 46 || (this.code >= 48 && this.code <= 57)) env.node = this.gobbleNumericLiteral();
});
jsep.hooks.add('after-token', (env) => {
  const start = starts.pop();
  if (env.node) (env.node as Located)[START] = start;
});

function parse(text: string): jsep.Expression {
  starts = [];
  try {
    return jsep(text);
  } finally {
    starts = [];
  }
}

function check(node: Located, inputs: ReadonlySet<string>, counter: { nodes: number }): FormulaNode {
  counter.nodes += 1;
  const at = node[START];
  if (counter.nodes > MAX_EXPRESSION_NODES)
    throw new FormulaError(`an expression has at most ${MAX_EXPRESSION_NODES} nodes (numbers, names, operators)`, at);
  switch (node.type) {
    case 'Literal': {
      const { value, raw } = node as jsep.Literal;
      if (typeof value !== 'number' || !/^(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(raw))
        throw new FormulaError(`expected a number, got ${JSON.stringify(raw)}`, at);
      if (!Number.isFinite(value) || (value !== 0 && Math.abs(Math.log10(Math.abs(value))) > 300))
        throw new FormulaError(`a number must lie within 1e-300 and 1e300, got ${raw}`, at);
      return { kind: 'number', text: raw };
    }
    case 'Identifier': {
      const { name } = node as jsep.Identifier;
      if (!inputs.has(name))
        throw new FormulaError(
          `unknown input ${JSON.stringify(name)}; expected one of the inputs (${[...inputs].join(', ') || 'none'})` +
            `${name in FUNCTIONS ? ` or a call ${name}(…)` : ''}`,
          at,
        );
      return { kind: 'input', name };
    }
    case 'UnaryExpression': {
      const { operator, argument } = node as jsep.UnaryExpression;
      if (operator !== '-') throw new FormulaError(`unary ${operator} is not allowed; ${EXPECTED}`, at);
      return { kind: 'negate', argument: check(argument, inputs, counter) };
    }
    case 'BinaryExpression': {
      const { operator, left, right } = node as jsep.BinaryExpression;
      if (!['+', '-', '*', '/', '^'].includes(operator))
        throw new FormulaError(`operator ${operator} is not allowed; ${EXPECTED}`, at);
      return {
        kind: 'binary',
        operator: operator as BinaryOperator,
        left: check(left, inputs, counter),
        right: check(right, inputs, counter),
      };
    }
    case 'CallExpression': {
      const { callee, arguments: args } = node as jsep.CallExpression;
      const name = callee.type === 'Identifier' ? (callee as jsep.Identifier).name : undefined;
      if (name === undefined || !Object.hasOwn(FUNCTIONS, name))
        throw new FormulaError(
          `unknown function ${JSON.stringify(name ?? callee.type)}; expected one of ${Object.keys(FUNCTIONS).join(', ')}`,
          at,
        );
      const arity = FUNCTIONS[name as FunctionName];
      if (args.length < arity.min || args.length > arity.max) {
        const expected = arity.min === arity.max ? `${arity.min}` : `${arity.min} to ${arity.max}`;
        throw new FormulaError(`${name} takes ${expected} arguments, got ${args.length}`, at);
      }
      return {
        kind: 'call',
        name: name as FunctionName,
        arguments: args.map((a) => check(a, inputs, counter)),
      };
    }
    case 'Compound':
    case 'SequenceExpression':
      throw new FormulaError(`expected one expression, got several (separated by , or ;); ${EXPECTED}`, at);
    default:
      throw new FormulaError(`${describe(node.type)} is not allowed; ${EXPECTED}`, at);
  }
}

function describe(type: string): string {
  switch (type) {
    case 'MemberExpression':
      return 'a member access (. or [])';
    case 'ArrayExpression':
      return 'an array';
    case 'ConditionalExpression':
      return 'a conditional (? :)';
    case 'ThisExpression':
      return '"this"';
    default:
      return `a ${type}`;
  }
}
