import { randomBytes } from 'node:crypto';
import { Kind, type FieldNode, type GraphQLResolveInfo } from 'graphql';
import { processRegularResult, type Plugin } from 'graphql-yoga';
import { POINT_FIELDS, type PointField } from '../series/series-sql.js';
import { columnBytes, columnText, type ColumnText } from '../db/store.js';

/**
 * Raw JSON spliced into a GraphQL response. A series' points arrive from PostgreSQL as the
 * JSON text of an array of DataPoint objects holding exactly the fields the query selected,
 * in its order; turning that text into objects, resolving each field of each point and
 * serializing them again was most of a GraphQL request's time. So when a `points`
 * selection is plain fields, its resolver records the text here and returns an empty
 * list, execution runs as usual for everything else, and the text goes where that empty
 * list stands: as bytes, after serialization, when the route asks for it. The answer is
 * the same JSON a full execution gives, the same fields in the same order.
 */
export interface Splices {
  /**
   * Records `json` as the value at the response path of the field being resolved: a points
   * list (left empty), or a number (or an extra object holding one) whose exact text a
   * double cannot hold (exact-numbers.ts).
   */
  add(info: GraphQLResolveInfo, json: ColumnText): void;
  readonly size: number;
  /**
   * Serializes `result` with `stringify`: with the recorded values in place, or, for
   * splices made `asBytes`, with a marker where each goes, for {@link Splices.toParts}.
   */
  serialize(result: { data?: unknown }, stringify: (result: unknown) => string): string;
  /** From now on {@link serialize} puts the recorded values in place, as if not made `asBytes`. */
  serializeInPlace(): void;
  /**
   * A serialized response's bytes with the recorded values, as bytes, where its markers
   * stand: in parts, the recorded ones as the store gave them, to be written without a
   * copy. A small answer comes in one part: one write is cheaper than several.
   */
  toParts(serialized: string): Buffer[];
}

/**
 * Splices for one response. `asBytes`: serialization leaves markers and the route puts the
 * points' bytes in with {@link Splices.toParts}, so points read as bytes are never decoded to
 * a string and encoded again; without it (Yoga used on its own), the text goes into the string.
 */
export function createSplices(options: { asBytes?: boolean } = {}): Splices {
  const recorded: { path: (string | number)[]; json: ColumnText }[] = [];
  let asBytes = options.asBytes === true;
  return {
    add(info, json) {
      const path: (string | number)[] = [];
      for (let p: GraphQLResolveInfo['path'] | undefined = info.path; p !== undefined; p = p.prev) path.unshift(p.key);
      recorded.push({ path, json });
    },
    get size() {
      return recorded.length;
    },
    serialize(result, stringify) {
      for (const [i, { path }] of recorded.entries()) replaceAt(result.data, path, `\u0000${NONCE}:${i}`);
      if (asBytes) return stringify(result);
      return stringify(result).replace(MARKER, (_, i: string) => columnText(recorded[Number(i)]!.json));
    },
    serializeInPlace() {
      asBytes = false;
    },
    toParts(serialized) {
      const parts: Buffer[] = [];
      let from = 0;
      for (const match of serialized.matchAll(MARKER)) {
        parts.push(
          Buffer.from(serialized.slice(from, match.index), 'utf8'),
          columnBytes(recorded[Number(match[1])]!.json),
        );
        from = match.index + match[0].length;
      }
      parts.push(Buffer.from(serialized.slice(from), 'utf8'));
      const length = parts.reduce((n, part) => n + part.length, 0);
      return parts.length > 1 && length < JOIN_BELOW_BYTES ? [Buffer.concat(parts, length)] : parts;
    },
  };
}

/**
 * The DataPoint fields a `points` selection asks for, in its order, when it is plain
 * fields PostgreSQL can write (no aliases, directives, fragments, repeats or
 * `__typename`); undefined otherwise, and the points are resolved one by one.
 */
export function plainPointFields(info: GraphQLResolveInfo): readonly PointField[] | undefined {
  if (info.fieldNodes.length !== 1) return undefined;
  const node = info.fieldNodes[0]!;
  let fields = PLAIN_FIELDS.get(node);
  if (fields === undefined) {
    fields = plainFieldsOf(node);
    PLAIN_FIELDS.set(node, fields);
  }
  return fields ?? undefined;
}

/**
 * Serializes every response whose execution recorded splices with them in place. An answer
 * sent in another transport than plain JSON (an event stream, multipart) gets their text in
 * its string: only the route's whole JSON answers are assembled from parts.
 */
export function useSplices(): Plugin<{ splices: Splices }, { splices?: Splices }> {
  return {
    onExecute({ args }) {
      return {
        onExecuteDone({ result }) {
          const { splices } = args.contextValue;
          if (splices.size === 0 || Symbol.asyncIterator in result) return;
          // graphql-jit leaves a `stringify` of its own on results; Yoga serializes with it when present.
          const inner = (result as { stringify?: (r: unknown) => string }).stringify ?? JSON.stringify;
          Object.assign(result, { stringify: (r: { data?: unknown }) => splices.serialize(r, inner) });
        },
      };
    },
    onResultProcess({ resultProcessor, serverContext }) {
      if (resultProcessor !== processRegularResult) serverContext.splices?.serializeInPlace();
    },
  };
}

// Private

/** Answers smaller than this are joined into one buffer, larger ones written in their parts. */
const JOIN_BELOW_BYTES = 64 * 1024;

/**
 * What marks a spliced value in a serialized response: no response can hold it by chance
 * or by design, since the nonce is random, made once per process and never sent (every
 * marker is replaced). Once per process rather than per response: drawing random bytes
 * and compiling the pattern for each response cost about 20 µs of a GraphQL request.
 */
const NONCE = randomBytes(12).toString('hex');
const MARKER = new RegExp(`"\\\\u0000${NONCE}:(\\d+)"`, 'g');

function isPointField(name: string): name is PointField {
  return (POINT_FIELDS as readonly string[]).includes(name);
}

/** Documents are parsed once and cached, so their nodes repeat: each is looked at once. */
const PLAIN_FIELDS = new WeakMap<FieldNode, readonly PointField[] | null>();

function plainFieldsOf(node: FieldNode): readonly PointField[] | null {
  const fields: PointField[] = [];
  for (const selection of node.selectionSet?.selections ?? []) {
    if (selection.kind !== Kind.FIELD || selection.alias !== undefined || (selection.directives?.length ?? 0) > 0)
      return null;
    const name = selection.name.value;
    if (!isPointField(name) || fields.includes(name)) return null;
    fields.push(name);
  }
  return fields.length > 0 ? fields : null;
}

/**
 * Puts `value` at `path` in `data` when the path leads to what the resolver left there (a
 * list, a number, an extra object); a path cut short by a null, or a value nulled by an
 * error, is left alone.
 */
function replaceAt(data: unknown, path: readonly (string | number)[], value: string): void {
  let node = data;
  for (const key of path.slice(0, -1)) {
    if (node === null || typeof node !== 'object') return;
    node = (node as Record<string | number, unknown>)[key];
  }
  const last = path.at(-1)!;
  if (node === null || typeof node !== 'object') return;
  const left = (node as Record<string | number, unknown>)[last];
  if (left !== null && left !== undefined) (node as Record<string | number, unknown>)[last] = value;
}
