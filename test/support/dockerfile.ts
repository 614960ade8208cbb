/**
 * Just enough of the Dockerfile syntax to read this repository's Dockerfile: instructions
 * with their continuation lines joined, its comments, the exec (JSON) form, `--flag=value`
 * options, `ENV` pairs and `.dockerignore` patterns. What it cannot read it refuses, naming
 * the line, so a test built on it cannot pass by misreading.
 */

/** One instruction: its keyword in upper case, the rest as written, and the line it starts on. */
export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

/** The instructions from one `FROM` up to the next. */
export interface Stage {
  base: string;
  name: string | undefined;
  instructions: Instruction[];
}

/** The stages of `text`, in order; the last is the image that runs. */
export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  for (const instruction of instructions(text)) {
    if (instruction.keyword === 'FROM') {
      const [base, as, name, ...rest] = words(instruction.args);
      if (
        base === undefined ||
        (as !== undefined && (as.toUpperCase() !== 'AS' || name === undefined)) ||
        rest.length > 0
      ) {
        throw new Error(
          `Dockerfile line ${instruction.line}: expected FROM <image> [AS <name>], got FROM ${instruction.args}`,
        );
      }
      stages.push({ base, name, instructions: [] });
    } else if (stages.length === 0) {
      throw new Error(`Dockerfile line ${instruction.line}: expected FROM first, got ${instruction.keyword}`);
    } else {
      stages.at(-1)!.instructions.push(instruction);
    }
  }
  return stages;
}

/** The text of every comment line (parser directives included), without the `#`. */
export function dockerfileComments(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => /^\s*#/.test(l))
    .map((l) => l.replace(/^\s*#\s?/, ''));
}

/** The words of a shell-form argument list; quotes are refused rather than misread. */
export function words(args: string): string[] {
  if (/["'$`\\]/.test(args))
    throw new Error(
      `expected plain words, got ${JSON.stringify(args)} (quotes, variables and escapes are not read here)`,
    );
  return args.split(/\s+/).filter((w) => w !== '');
}

/** The exec form `["a", "b"]` as its array, or undefined when `args` is in shell form. */
export function execForm(args: string): string[] | undefined {
  if (!args.trimStart().startsWith('[')) return undefined;
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || parsed.length === 0 || !parsed.every((w) => typeof w === 'string')) {
    throw new Error(`expected a JSON array of strings, got ${args}`);
  }
  return parsed as string[];
}

/** Leading `--name=value` options, each checked against `known`, and the arguments after them. */
export function splitOptions(args: string, known: readonly string[]): { options: Map<string, string>; rest: string } {
  const options = new Map<string, string>();
  let rest = args.trim();
  for (let m = /^--([\w-]+)=(\S+)\s*/.exec(rest); m !== null; m = /^--([\w-]+)=(\S+)\s*/.exec(rest)) {
    if (!known.includes(m[1]!))
      throw new Error(`option --${m[1]} is not read here (known: ${known.map((k) => `--${k}`).join(', ')})`);
    options.set(m[1]!, m[2]!);
    rest = rest.slice(m[0].length);
  }
  if (rest.startsWith('--')) throw new Error(`expected --name=value options, got ${rest.split(/\s/)[0]}`);
  return { options, rest };
}

/** The pairs of `ENV a=1 b="two words"`; the old `ENV a 1` form is refused. */
export function envPairs(args: string): [string, string][] {
  const pairs: [string, string][] = [];
  const pair = /\s*([A-Za-z_]\w*)=("(?:[^"\\$]|\\.)*"|[^\s"'\\$]*)\s*/y;
  let at = 0;
  for (let m = pair.exec(args); m !== null && m[0] !== ''; m = pair.exec(args)) {
    pairs.push([m[1]!, m[2]!.startsWith('"') ? (JSON.parse(m[2]!) as string) : m[2]!]);
    at = pair.lastIndex;
  }
  if (at !== args.length || pairs.length === 0) throw new Error(`expected ENV name=value pairs, got ENV ${args}`);
  return pairs;
}

/**
 * Whether `.dockerignore`'s `patterns` keep `path` (relative to the context, `/`-separated)
 * out of the build context: the last pattern matching it or a folder above it decides.
 */
export function dockerignored(patterns: string, path: string): boolean {
  const ancestors = path.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'));
  let ignored = false;
  for (const raw of patterns
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))) {
    const negated = raw.startsWith('!');
    const pattern = patternRegExp(raw.replace(/^!/, '').replace(/^\/+|\/+$/g, ''));
    if (ancestors.some((a) => pattern.test(a))) ignored = !negated;
  }
  return ignored;
}

// Private

function* instructions(text: string): Generator<Instruction> {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    if (/^\s*(#|$)/.test(lines[i]!)) continue;
    const line = i + 1;
    let joined = lines[i]!;
    // A line ending in a backslash continues on the next one that is not a comment or empty.
    while (/\\\s*$/.test(joined) && i + 1 < lines.length) {
      joined = joined.replace(/\\\s*$/, ' ');
      do i += 1;
      while (i < lines.length && /^\s*(#|$)/.test(lines[i]!));
      joined += lines[i] ?? '';
    }
    const m = /^\s*([A-Za-z]+)\s+(.*\S)\s*$/.exec(joined);
    if (m === null) throw new Error(`Dockerfile line ${line}: expected an instruction, got ${JSON.stringify(joined)}`);
    yield { keyword: m[1]!.toUpperCase(), args: m[2]!, line };
  }
}

function patternRegExp(pattern: string): RegExp {
  if (/[[\]\\]/.test(pattern))
    throw new Error(`.dockerignore pattern ${pattern} uses a character class or escape, not read here`);
  const source = pattern
    .split(/(\*\*\/|\*\*|\*|\?)/)
    .map((part) =>
      part === '**/'
        ? '(?:.*/)?'
        : part === '**'
          ? '.*'
          : part === '*'
            ? '[^/]*'
            : part === '?'
              ? '[^/]'
              : part.replace(/[.+^${}()|]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${source}$`);
}
