import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, resolve } from 'node:path';
import {
  identifyThisProcess,
  inOtherNamespace,
  isAlive,
  processStart,
  type ProcessIdentity,
} from './process-identity.js';

/**
 * Who holds an embedded store. PGlite keeps the whole database in one process's memory and
 * writes it back to its folder: a second process opening the same folder works on its own
 * copy, and its writes are lost or corrupt the folder. So one process at a time holds a
 * folder, recorded in a file beside it (`<folder>.owner.json`, readable by its user only):
 * a server, which also names the loopback port where it takes commands handed to it and
 * the secret that authenticates them, or a command run on its own.
 */
export interface StoreHolder extends ProcessIdentity {
  role: 'server' | 'command';
  /** What the holder is, for messages: e.g. "npm start" or "npm run import". */
  label: string;
  /** A server's command port on 127.0.0.1, once it listens. */
  controlPort?: number;
  /** A server's secret for handed-off commands; never an API key. */
  secret?: string;
}

/** A claim this process holds until `release()`. */
export interface StoreClaim {
  readonly path: string;
  readonly holder: StoreHolder;
  /** Records the server's command port once it listens. */
  announce(controlPort: number): void;
  /** Gives the folder up; safe to call twice. */
  release(): void;
}

/** Thrown when another live process holds the folder. */
export class StoreHeldError extends Error {
  constructor(
    readonly folder: string,
    readonly holder: StoreHolder,
  ) {
    super(
      `the embedded store ${folder} is held by process ${holder.pid}` +
        ` (${holder.label})${fromAnotherHost(folder, holder)}`,
    );
    this.name = 'StoreHeldError';
  }
}

/**
 * Claims `folder` for this process, at once or never: a claim left by a process that no
 * longer runs is taken over (see {@link holderRuns}); one held by a live process throws
 * {@link StoreHeldError} naming it. The file is created exclusively, so of two processes
 * starting together only one wins.
 */
export function claimEmbeddedStore(folder: string, role: StoreHolder['role'], label: string): StoreClaim {
  const path = ownerFile(folder);
  const holder: StoreHolder = {
    ...identifyThisProcess(),
    role,
    label,
    ...(role === 'server' ? { secret: randomBytes(32).toString('base64url') } : {}),
  };
  // The owner file sits beside the folder, so its parent must exist first (on a fresh
  // clone `.data/` does not).
  mkdirSync(dirname(path), { recursive: true });
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeFileSync(fd, JSON.stringify(holder));
      closeSync(fd);
      claimedHere.add(path);
      return createClaim(path, holder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const current = readHolder(folder);
    if (current !== undefined && holderRuns(folder, current)) throw new StoreHeldError(folder, current);
    // Left behind by a process that ended without releasing it (killed, crashed), or by an
    // earlier process with our id.
    try {
      unlinkSync(path);
    } catch {
      // another process took it over first; try again
    }
  }
  throw new Error(`could not claim the embedded store ${folder}: its owner file ${path} keeps changing`);
}

/** The current holder of `folder`, if any (whether or not it still runs). */
export function readHolder(folder: string): StoreHolder | undefined {
  try {
    return JSON.parse(readFileSync(ownerFile(folder), 'utf8')) as StoreHolder;
  } catch {
    return undefined;
  }
}

/**
 * True while the process that wrote `holder` into the owner file of `folder` still runs.
 * A claim naming this process's own id that this process did not make was left by an
 * earlier process with that id: a container's server is PID 1 again after `docker kill`,
 * an OOM kill or a power loss, and would otherwise find its folder held for good. Another
 * id counts while a process with it runs and, where both are known, started when the
 * claim says, so an id the system has given to a new process does not hold the folder.
 *
 * A claim from another pid namespace names a process this one cannot see: it is judged by
 * liveness alone, since taking over a folder a live
 * server holds corrupts it (a command on the host, a second container on the same volume).
 * The one exception is our own id on our own host name: the same container restarted,
 * which gets a new pid namespace each time.
 */
export function holderRuns(folder: string, holder: StoreHolder): boolean {
  if (inOtherNamespace(holder)) {
    if (holder.pid === process.pid && holder.host === hostname()) return false;
    return isAlive(holder.pid);
  }
  if (holder.pid === process.pid) return claimedHere.has(ownerFile(folder));
  if (!isAlive(holder.pid)) return false;
  const started = holder.started === undefined ? undefined : processStart(holder.pid);
  return started === undefined || started === holder.started;
}

// Private

/**
 * A claim naming our own id from another host name is most likely an earlier container's
 * on the same volume, recreated rather than restarted. From in here it cannot be told from
 * a live second container, so the message says how to decide.
 */
function fromAnotherHost(folder: string, holder: StoreHolder): string {
  if (holder.pid !== process.pid || holder.host === undefined || holder.host === hostname()) return '';
  return (
    ` on host ${holder.host}; if nothing there serves this folder any more ` +
    `(a container recreated after a hard stop), delete ${ownerFile(folder)}`
  );
}

/** Owner files this process created and has not released: the claims naming our id that are live. */
const claimedHere = new Set<string>();

function ownerFile(folder: string): string {
  return `${resolve(folder)}.owner.json`;
}

function createClaim(path: string, holder: StoreHolder): StoreClaim {
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    claimedHere.delete(path);
    process.off('exit', release);
    try {
      const current = JSON.parse(readFileSync(path, 'utf8')) as StoreHolder;
      if (current.pid === process.pid) unlinkSync(path);
    } catch {
      // already gone
    }
  };
  // An exit without close (an uncaught error, process.exit) still gives the folder up.
  process.on('exit', release);
  return {
    path,
    holder,
    announce(controlPort) {
      holder.controlPort = controlPort;
      // Written whole to a side file and renamed, so a reader never sees half of it.
      // Made new ('wx'): a file planted under that name beforehand (a folder others can
      // write to) is neither written through nor left readable by its planter.
      const next = `${path}.${process.pid}`;
      try {
        unlinkSync(next);
      } catch {
        // none left over
      }
      writeFileSync(next, JSON.stringify(holder), { mode: 0o600, flag: 'wx' });
      renameSync(next, path);
    },
    release,
  };
}
