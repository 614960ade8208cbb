import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * What tells one process apart from others given the same id, as recorded in an owner file.
 * Each part is absent where it cannot be read (off Linux, or /proc hidden) and in files
 * written before it was recorded.
 */
export interface ProcessIdentity {
  pid: number;
  /** The pid namespace `pid` belongs to (`pid:[inode]`): a container and its host number processes apart. */
  pidNamespace?: string;
  /** The host name, which a container keeps across restarts while its pid namespace is new each time. */
  host?: string;
  /** When the process started, see {@link processStart}. */
  started?: string;
}

/** This process, as an owner file records it. */
export function identifyThisProcess(): ProcessIdentity {
  const namespace = pidNamespace();
  const started = processStart(process.pid);
  return {
    pid: process.pid,
    ...(namespace === undefined ? {} : { pidNamespace: namespace }),
    host: hostname(),
    ...(started === undefined ? {} : { started }),
  };
}

/** True when `identity` was recorded in another pid namespace, where its id names another process than here. */
export function inOtherNamespace(identity: ProcessIdentity): boolean {
  const namespace = pidNamespace();
  return identity.pidNamespace !== undefined && namespace !== undefined && identity.pidNamespace !== namespace;
}

/**
 * When the process with this id started, as `<boot id>/<clock ticks after boot>` (field 22
 * of /proc/<pid>/stat; the boot id tells two boots apart): fixed for the life of a process
 * and different for a later one given its id. Undefined off Linux or when /proc hides it.
 */
export function processStart(pid: number): string | undefined {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const ticks = afterName(readFileSync(`/proc/${pid}/stat`, 'utf8')).split(' ')[22 - 3];
    return ticks !== undefined && /^\d+$/.test(ticks) ? `${boot}/${ticks}` : undefined;
  } catch {
    return undefined;
  }
}

/** True while a process with this id runs; a killed one its parent has not reaped yet (a zombie) counts as gone. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // Field 3 of /proc/<pid>/stat is the state.
    return !afterName(readFileSync(`/proc/${pid}/stat`, 'utf8')).startsWith('Z ');
  } catch {
    return true; // no /proc here: trust the signal
  }
}

// Private

function pidNamespace(): string | undefined {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}

/** /proc/<pid>/stat from field 3 on: the name before it is in parentheses and may itself hold ") ". */
function afterName(stat: string): string {
  return stat.slice(stat.lastIndexOf(') ') + 2);
}
