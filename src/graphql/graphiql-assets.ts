import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ApiError } from '../api/api-error.js';
import { renderGraphqlError } from '../http/render-error.js';
import type { Route } from '../http/route.js';
import { keepBody, sendKept, type KeptBody } from '../http/send-json.js';
import { clipped } from '../clipped.js';
import type { GraphqlServices } from './graphql-services.js';

/** Where GraphiQL's page finds its files. */
export const GRAPHIQL_ASSETS_PATH = '/graphql/assets/';

/** GraphiQL's files as the page names them: each URL holds a hash of its content, so a browser may keep it for good. */
export interface GraphiqlAssets {
  /** The editor (a UMD bundle that defines the global `YogaGraphiQL`). */
  script: string;
  style: string;
  icon: string;
  /** Monaco's workers by the label Monaco asks for. */
  workers: { editorWorkerService: string; json: string; graphql: string };
  /** The file at a name under {@link GRAPHIQL_ASSETS_PATH}. */
  get(name: string): GraphiqlAsset | undefined;
}

export interface GraphiqlAsset extends KeptBody {
  type: string;
}

/**
 * GraphiQL's files, from the package Yoga renders its page with (about 9 MB of scripts and
 * styles, read the first time someone opens the page), served by their own URLs, so the page
 * stays small and a browser downloads them once.
 */
export function loadGraphiqlAssets(): Promise<GraphiqlAssets> {
  loaded ??= import('@graphql-yoga/render-graphiql/graphiql').then(collect);
  return loaded;
}

/** `GET /graphql/assets/<name>`: public, each load counted against its address's allowance. */
export function createGraphiqlAssetRoute(services: Pick<GraphqlServices, 'graphiqlLoads'>): Route<unknown> {
  return {
    path: `${GRAPHIQL_ASSETS_PATH}:name`,
    access: 'public',
    methods: ['GET', 'HEAD'],
    errors: renderGraphqlError,
    handle: async ({ req, res, param }) => {
      await services.graphiqlLoads.take(addressOf(req));
      const asset = (await loadGraphiqlAssets()).get(param);
      if (asset === undefined) {
        throw new ApiError('not-found', `nothing is served at ${GRAPHIQL_ASSETS_PATH}${clipped(param)}`);
      }
      res.setHeader('content-type', asset.type);
      res.setHeader('cache-control', 'public, max-age=31536000, immutable');
      await sendKept(req, res, asset);
    },
  };
}

/** Where a request came from; a socket already closed has no address, and such requests share one allowance. */
export function addressOf(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? 'unknown';
}

// Private

let loaded: Promise<GraphiqlAssets> | undefined;

type GraphiqlFiles = typeof import('@graphql-yoga/render-graphiql/graphiql');

const JAVASCRIPT = 'text/javascript; charset=utf-8';

/** The bytes of a base64 `data:` URL (how the package holds its icon). */
function fromDataUrl(url: string): Buffer {
  return Buffer.from(url.slice(url.indexOf(',') + 1), 'base64');
}

function collect(files: GraphiqlFiles): GraphiqlAssets {
  const byName = new Map<string, GraphiqlAsset>();
  const add = (stem: string, extension: string, type: string, plain: Buffer) => {
    const hash = createHash('sha256').update(plain).digest('hex').slice(0, 16);
    const name = `${stem}-${hash}.${extension}`;
    byName.set(name, { ...keepBody(plain, `W/"${hash}"`), type });
    return `${GRAPHIQL_ASSETS_PATH}${name}`;
  };
  const text = (value: string) => Buffer.from(value, 'utf8');
  return {
    script: add('graphiql', 'js', JAVASCRIPT, text(files.js)),
    style: add('graphiql', 'css', 'text/css; charset=utf-8', text(files.css)),
    icon: add('favicon', 'ico', 'image/x-icon', fromDataUrl(files.favicon)),
    workers: {
      editorWorkerService: add('editor-worker', 'js', JAVASCRIPT, text(files.editorWorkerService)),
      json: add('json-worker', 'js', JAVASCRIPT, text(files.jsonWorker)),
      graphql: add('graphql-worker', 'js', JAVASCRIPT, text(files.graphqlWorker)),
    },
    get: (name) => byName.get(name),
  };
}
