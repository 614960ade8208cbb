import type { Catalog } from '../catalog/load-catalog.js';
import type { Config } from '../config.js';
import type { Store } from '../db/store.js';

/**
 * Where a command writes: the terminal of the person who ran it, whether the command runs
 * in their own process or in the server it was handed to.
 */
export interface CommandOutput {
  /** Standard output: what a script may capture (a new key, a table). */
  out(text: string): void;
  /** Standard error: messages for the person. */
  err(text: string): void;
  /** A progress line, rewritten in place on a terminal and throttled elsewhere. */
  progress(text: string): void;
}

/** What a command runs with. */
export interface CommandContext {
  store: Store;
  catalog: Catalog;
  config: Config;
  output: CommandOutput;
  /**
   * The migrations this process applied when it opened the store, so `db:migrate` can say
   * what it did; absent in a server, which applied them at its own start-up.
   */
  migrationsApplied?: readonly string[];
  /** Aborts when the person gives up (Ctrl-C, or the handing-off process went away). */
  signal: AbortSignal;
  /**
   * Present when the command runs in a server (handed over to it): called after the
   * stored keys changed, so that server stops accepting a revoked key at once instead of
   * after its key cache expires.
   */
  keysChanged?: () => void;
}

/**
 * One CLI command: its command line, parsed once where it was typed, and its work, which
 * runs against the store wherever it is held: in the CLI's own process, or in the server
 * that holds the embedded store (see run-command.ts), where the parsed `args` arrive as JSON.
 */
export interface Command<Args> {
  name: string;
  /**
   * The arguments of the command line, or the exit code once the help (0) or a usage
   * error (2) has been printed; found before any store is opened.
   */
  parse(argv: string[]): Args | number | Promise<Args | number>;
  /**
   * What a server does with this command when the process that handed it over goes away
   * part-way (Ctrl-C, or the connection breaks): it aborts `signal`, which the command may
   * or may not heed. One clause, told to the person whose command was interrupted.
   */
  whenLeft: string;
  /** Resolves to the exit code: 0 done, 1 not done (the output says why). */
  run(context: CommandContext, args: Args): Promise<number>;
}
