import type { FormulaNode } from './formula-expression.js';

/** An expression as SQL over numeric columns: the text, and its literals as parameters in order. */
export interface CompiledExpression {
  /** SQL whose literals are written `{{lit0}}`, `{{lit1}}`, … for the statement to number. */
  text: string;
  /** Each literal's digits, sent as a parameter and cast to numeric in SQL. */
  literals: readonly string[];
}

/**
 * Compiles a checked tree to SQL over `numeric`. Input names become the columns
 * `column(name)` gives (identifiers the caller makes, never user text), literals become
 * parameters. No expression ever fails in PostgreSQL or answers ∞ or NaN: a division by
 * zero, the logarithm of a number not above zero, the square root of a negative number,
 * `0 ^ negative`, a negative number to a fractional power and a result beyond about
 * 1e300 (`exp`, `^`) are null; null in, null out (`coalesce` picks the first non-null).
 * Each argument's text appears once, so the SQL grows with the tree, never faster.
 */
export function compileExpression(node: FormulaNode, column: (name: string) => string): CompiledExpression {
  const literals: string[] = [];
  const sql = (n: FormulaNode): string => {
    switch (n.kind) {
      case 'number':
        literals.push(n.text);
        return `{{lit${literals.length - 1}}}::numeric`;
      case 'input':
        return column(n.name);
      case 'negate':
        return `(- ${sql(n.argument)})`;
      case 'binary': {
        const [left, right] = [sql(n.left), sql(n.right)];
        if (n.operator === '/') return `(${left} / nullif(${right}, 0))`;
        if (n.operator === '^') return using([left, right], POWER);
        return `(${left} ${n.operator} ${right})`;
      }
      case 'call': {
        const args = n.arguments.map(sql);
        switch (n.name) {
          case 'abs':
            return `abs(${args[0]})`;
          case 'coalesce':
            return `coalesce(${args.join(', ')})`;
          case 'ln':
            return using(args, 'case when a0 > 0 then ln(a0) end');
          case 'sqrt':
            return using(args, 'case when a0 >= 0 then sqrt(a0) end');
          case 'exp':
            return using(args, `case when a0 <= ${LARGEST_EXPONENT} then exp(greatest(a0, -${LARGEST_EXPONENT})) end`);
          case 'min':
          case 'max':
            // PostgreSQL's least and greatest skip nulls; a formula's min and max do not.
            return using(
              args,
              `case when ${args.map((_, i) => `a${i} is not null`).join(' and ')} then ` +
                `${n.name === 'min' ? 'least' : 'greatest'}(${args.map((_, i) => `a${i}`).join(', ')}) end`,
            );
        }
      }
    }
  };
  return { text: sql(node), literals };
}

// Private

/** Natural-log magnitude of the largest result `exp` and `^` give (e^690 ≈ 1e300); beyond it, null. */
const LARGEST_EXPONENT = 690;

/**
 * `a0 ^ a1` without an error: zero to a negative power and a negative number to a
 * fractional one are null, results beyond about 1e±300 are null (or 0 for a vanishing one).
 */
const POWER =
  'case when a0 is null or a1 is null then null ' +
  'when a0 = 0 then case when a1 > 0 then 0 when a1 = 0 then 1 end ' +
  'when a0 < 0 and a1 <> trunc(a1) then null ' +
  `when a1 * ln(abs(a0)) > ${LARGEST_EXPONENT} then null ` +
  `when a1 * ln(abs(a0)) < -${LARGEST_EXPONENT} then 0 ` +
  'else power(a0, a1) end';

/** `body` over the arguments named a0, a1, …, each argument's text written once. */
function using(args: readonly string[], body: string): string {
  return `(select ${body} from (select ${args.map((a, i) => `${a} as a${i}`).join(', ')}) a)`;
}
