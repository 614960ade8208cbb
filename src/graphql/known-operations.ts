import { getOperationAST, type DocumentNode, type ExecutionArgs, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { processRegularResult, type Plugin } from 'graphql-yoga';

/**
 * Queries Yoga has already parsed and validated, answered again without Yoga's HTTP
 * layer. Yoga turns each request into a fetch Request, runs it through its request
 * parsers, parameter checks and result processors, and hands back a fetch Response; for
 * the bench's query that plumbing allocated 64 of the 139 KB an answer cost
 * (docs/performance.md, "What one answer allocates"). A repeated document skips it: the same
 * enveloped `execute` runs (every plugin's execution hooks: the variable check, compiled
 * execution, masked errors, splices) on the document Yoga validated, and Yoga's own
 * `processRegularResult` writes the answer's status, headers and body. Anything this does
 * not recognise as such a repeat goes to Yoga as before. The bench's query: about 80 µs
 * less main-thread CPU per answer, 7-23% more answers per second (docs/performance.md,
 * "Repeated GraphQL queries without Yoga's HTTP layer").
 */
export interface KnownOperations {
  /** A POSTed JSON body that repeats a known query for this `accept`; undefined sends the request to Yoga. */
  match(contentType: string | undefined, accept: string | undefined, body: Buffer): KnownOperation | undefined;
  /** Keeps what Yoga's answer to a request showed: the document it executed (when a query) and the media type it chose for `accept`. */
  learn(seen: Required<SeenDocument>, accept: string | undefined, answerContentType: string): void;
}

/** A request's GraphQL parameters, as the body gave them. */
export interface OperationParams {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
  extensions?: Record<string, unknown> | null;
}

export interface KnownOperation {
  params: OperationParams;
  document: DocumentNode;
  /** The media type Yoga answered this `accept` with. */
  mediaType: string;
}

/**
 * Filled by {@link useDocumentRecorder} when Yoga executes a request's document (it parsed
 * and passed validation): the document, and the query and operation name Yoga read it from.
 */
export interface SeenDocument {
  document?: DocumentNode;
  params?: Pick<OperationParams, 'query' | 'operationName'>;
}

/** The answer {@link answerOf} builds: what a Response would have held. */
export interface KnownAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Documents kept at most; the map starts again when full (clients repeat a handful). A
 * document has at most 1,000 tokens (armor.ts), so its tree is at most a few hundred KB,
 * and most are also held by Yoga's own cache of parsed documents.
 */
const MAX_DOCUMENTS = 200;
/** Longer documents are left to Yoga each time. */
const MAX_QUERY_LENGTH = 16 * 1024;
/** `accept` values kept, each with the media type Yoga chose for it. */
const MAX_ACCEPTS = 100;

export function createKnownOperations(): KnownOperations {
  let documents = new Map<string, DocumentNode>();
  let mediaTypes = new Map<string, string>();
  return {
    match(contentType, accept, body) {
      if (documents.size === 0 || !isJsonContentType(contentType)) return undefined;
      const mediaType = mediaTypes.get(accept ?? '');
      if (mediaType === undefined) return undefined;
      const params = paramsOf(body);
      if (params === undefined) return undefined;
      const document = documents.get(documentKey(params));
      return document === undefined ? undefined : { params, document, mediaType };
    },
    learn({ document, params }, accept, answerContentType) {
      if (params.query.length > MAX_QUERY_LENGTH) return;
      if (getOperationAST(document, params.operationName ?? undefined)?.operation !== 'query') return;
      const mediaType = answerContentType.endsWith(CHARSET) ? answerContentType.slice(0, -CHARSET.length) : undefined;
      if (mediaType === undefined || !JSON_MEDIA_TYPES.has(mediaType)) return;
      if (documents.size >= MAX_DOCUMENTS) documents = new Map();
      if (mediaTypes.size >= MAX_ACCEPTS) mediaTypes = new Map();
      documents.set(documentKey(params), document);
      mediaTypes.set(accept ?? '', mediaType);
    },
  };
}

/** Runs a known operation through the enveloped plugins, as Yoga would once it has the request's parameters. */
export async function executeKnown(yoga: { getEnveloped: GetEnveloped }, known: KnownOperation, serverContext: object): Promise<ExecutionResult> {
  const enveloped = yoga.getEnveloped({ ...serverContext, params: known.params });
  const contextValue = await enveloped.contextFactory();
  return (await enveloped.execute({
    schema: enveloped.schema,
    document: known.document,
    contextValue,
    variableValues: known.params.variables,
    operationName: known.params.operationName,
  })) as ExecutionResult;
}

/** Records the document Yoga executes in the request's `seen` (see {@link SeenDocument}). */
export function useDocumentRecorder(seenOf: (context: unknown) => SeenDocument | undefined): Plugin {
  return {
    onExecute({ args }) {
      const seen = seenOf(args.contextValue);
      // Yoga puts the parameters it read in the context: the body is not parsed again to learn them.
      const params = (args.contextValue as { params?: { query?: unknown; operationName?: string | null } }).params;
      if (seen === undefined || typeof params?.query !== 'string') return;
      seen.document = args.document;
      seen.params = { query: params.query, operationName: params.operationName };
    },
  };
}

/** The parameters of a POSTed JSON body, when they are the plain shape Yoga accepts without a word; undefined otherwise. */
export function paramsOf(body: Buffer): OperationParams | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isPlainObject(parsed)) return undefined;
  for (const name in parsed) if (!PARAM_NAMES.has(name) && parsed[name] != null) return undefined;
  const { query, variables, operationName, extensions } = parsed;
  if (typeof query !== 'string') return undefined;
  if (variables != null && !isPlainObject(variables)) return undefined;
  if (operationName != null && typeof operationName !== 'string') return undefined;
  if (extensions != null && !isPlainObject(extensions)) return undefined;
  return parsed as unknown as OperationParams;
}

/** Yoga's own status, headers and serialization for an execution result, without a Response. */
export function answerOf(result: ExecutionResult, mediaType: string): KnownAnswer {
  return processRegularResult(result, ANSWER_ONLY, mediaType) as unknown as KnownAnswer;
}

// Private

/** What `getEnveloped` of Yoga's server gives: the plugins' phases for one request. */
type GetEnveloped = (context: any) => {
  schema: GraphQLSchema;
  contextFactory(): unknown;
  execute(args: ExecutionArgs): unknown;
};

const CHARSET = '; charset=utf-8';
const JSON_MEDIA_TYPES = new Set(['application/json', 'application/graphql-response+json']);
const PARAM_NAMES = new Set(['query', 'variables', 'operationName', 'extensions']);

/** A fetch API whose Response only keeps what it was given: `processRegularResult` builds one. */
const ANSWER_ONLY = {
  Response: class {
    readonly status: number;
    readonly headers: Record<string, string>;
    constructor(readonly body: string, init: { status: number; headers: Record<string, string> }) {
      this.status = init.status;
      this.headers = init.headers;
    }
  },
} as unknown as Parameters<typeof processRegularResult>[1];

/**
 * An operation name left out or null (the document's only operation) is told apart from
 * any name, "" included. A name's length goes first: a name and a query can hold any
 * character, so run together as they are, one pair could spell another: the repeat ran a
 * known document under a name it lacks, which Yoga refuses while parsing (400) and which
 * failed here, past the parse, as an unexpected error (500, logged).
 */
function documentKey(params: OperationParams): string {
  const name = params.operationName;
  return name == null ? `\u0000${params.query}` : `${name.length}\u0000${name}${params.query}`;
}

/** The content types Yoga's JSON request parser takes (its `isContentTypeMatch`). */
function isJsonContentType(contentType: string | undefined): boolean {
  const first = contentType?.split(',')[0];
  if (first === undefined) return false;
  return first === 'application/json' || first.startsWith('application/json;') || first === 'application/graphql+json' || first.startsWith('application/graphql+json;');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
