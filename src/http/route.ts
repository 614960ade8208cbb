import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KeyIdentity } from '../db/api-key-queries.js';
import type { RateLimitMeter } from '../limits/rate-limiter.js';
import type { ClientGone } from './client-gone.js';
import type { ErrorRenderer } from './render-error.js';

/** What a route handler gets for one request; `S` is what the app shares with every handler (its services). */
export interface RouteCall<S> {
  req: IncomingMessage;
  res: ServerResponse;
  services: S;
  /** The `:name` segment of a route's path, percent-decoded; '' for fixed paths. */
  param: string;
  /** The raw query string, without `?`. */
  query: string;
  /** Aborts when the client leaves before its answer is complete: cancel the work. */
  signal: ClientGone;
  /** The caller's rate-limit account; charges nothing on public routes. */
  meter: RateLimitMeter;
  /** The key's owner on keyed routes; undefined on public ones. */
  caller?: KeyIdentity;
}

/** `public` routes need nothing; `keyed` ones need a valid key and pay one unit of its rate limit first. */
export type Access = 'public' | 'keyed';

/** One line of the app's route table, for handlers given `S`. */
export interface Route<S> {
  /** A fixed path, or one with one `:name` segment (`/v1/hooks/:name/replay`) that becomes `param`. */
  path: string;
  /** Who may call; a function decides per request (GraphiQL's page is public, its API is not). */
  access: Access | ((req: IncomingMessage, query: string) => Access);
  /** Keyed routes: whether `Authorization: Bearer <key>` is taken besides `x-api-key` (MCP clients send it). */
  bearer?: boolean;
  /** Methods answered (HEAD with GET); others get 405 with Allow, after the key check. Omitted: the handler decides. */
  methods?: readonly string[];
  /**
   * The route answers dry runs (`dry_run=true`, `x-dry-run: true`: limits/dry-run.ts): a request asking one
   * is not charged the key's unit at the door. Only routes that answer them say so, or a dry run's flag
   * would make any route's answer free of the key's balance.
   */
  dryRun?: boolean;
  /** How failures are written: problem+json for `/v1` and pages, GraphQL errors for `/graphql`. */
  errors: ErrorRenderer;
  handle(call: RouteCall<S>): Promise<void> | void;
}
