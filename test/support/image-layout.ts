import { execFile, type ExecFileOptions, type SpawnOptions } from 'node:child_process';
import { chmod, cp, mkdir, readFile, stat, symlink } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { promisify } from 'node:util';
import {
  dockerignored,
  envPairs,
  execForm,
  parseDockerfile,
  splitOptions,
  words,
  type Instruction,
} from './dockerfile.js';

/** A user named in the Dockerfile and the account of this machine that stands in for it. */
export interface ImageUser {
  name: string;
  uid: number;
  gid: number;
}

/** The last stage of a Dockerfile laid out in a folder, and what a container of it runs. */
export interface ImageLayout {
  /** The folder standing for the image's `/`. */
  root: string;
  /** The image's `WORKDIR`, as a folder of this machine. */
  workdir: string;
  user: ImageUser;
  /** Its `ENV`, in order. */
  env: Record<string, string>;
  cmd: string[];
  healthcheck: { command: string[]; options: ReadonlyMap<string, string> } | undefined;
  exposed: string[];
  volumes: string[];
  /** Where a path of the image is in this layout. */
  path(imagePath: string): string;
}

/**
 * Builds every stage of the Dockerfile `dockerfile` from the build context `context` in
 * folders under `into`, as `docker build` would, and returns the last. Files belong to the
 * stand-in accounts as they would to the image's users when this runs as root. An
 * instruction or `RUN` command it does not know is an error naming the line, never skipped.
 */
export async function layOutImage(dockerfile: string, context: string, into: string): Promise<ImageLayout> {
  const ignore = existsSync(join(context, '.dockerignore')) ? readFileSync(join(context, '.dockerignore'), 'utf8') : '';
  const built = new Map<string, StageState>();
  let last: StageState | undefined;
  await chmod(into, 0o755); // the stand-in users must reach the layout
  for (const [index, stage] of parseDockerfile(readFileSync(dockerfile, 'utf8')).entries()) {
    if (!/^node:[\w.-]+$/.test(stage.base))
      throw new Error(`FROM ${stage.base}: only a node image is stood in for (by this machine's node)`);
    const root = join(into, `stage-${index}`);
    await mkdir(root);
    const state: StageState = {
      root,
      context,
      ignore,
      built,
      workdir: '/',
      user: imageUser('root'),
      env: {},
      cmd: [],
      healthcheck: undefined,
      exposed: [],
      volumes: [],
    };
    for (const instruction of stage.instructions) await step(state, instruction);
    built.set(stage.name ?? String(index), state);
    last = state;
  }
  if (last === undefined) throw new Error(`${dockerfile} has no FROM`);
  const { root, workdir, user, env, cmd, healthcheck, exposed, volumes } = last;
  return {
    root,
    workdir: join(root, workdir),
    user,
    env,
    cmd,
    healthcheck,
    exposed,
    volumes,
    path: (p) => join(root, posix.resolve(workdir, p)),
  };
}

/**
 * How to start a process in the container: its working folder, its user and the image's environment with `env` over
 * it.
 */
export function inContainer(layout: ImageLayout, env: Record<string, string>): SpawnOptions {
  return {
    cwd: layout.workdir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...layout.env, ...env },
    ...asUser(layout.user),
  };
}

// Private

interface StageState {
  root: string;
  context: string;
  ignore: string;
  built: Map<string, StageState>;
  workdir: string;
  user: ImageUser;
  env: Record<string, string>;
  cmd: string[];
  healthcheck: ImageLayout['healthcheck'];
  exposed: string[];
  volumes: string[];
}

/** Runs a program to its end; its failure says what it printed. */
async function run(file: string, args: string[], options: ExecFileOptions = {}): Promise<void> {
  try {
    await execFileAsync(file, args, options);
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(' ')} failed: ${`${stderr}${stdout}`.trim().slice(-4000)}`, { cause: error });
  }
}

const execFileAsync = promisify(execFile);
const AS_ROOT = process.getuid?.() === 0;
const at = (s: StageState, imagePath: string) => join(s.root, posix.resolve(s.workdir, imagePath));

async function step(s: StageState, { keyword, args, line }: Instruction): Promise<void> {
  const does = STEPS[keyword];
  if (does === undefined)
    throw new Error(
      `Dockerfile line ${line}: ${keyword} is not reproduced by test/support/image-layout.ts; ` +
        `teach it what ${keyword} does`,
    );
  try {
    await does(s, args);
  } catch (error) {
    throw new Error(`Dockerfile line ${line} (${keyword} ${args}): ${(error as Error).message}`, { cause: error });
  }
}

const STEPS: Record<string, (s: StageState, args: string) => Promise<void> | void> = {
  WORKDIR: async (s, args) => {
    s.workdir = posix.resolve(s.workdir, args);
    await mkdir(at(s, '.'), { recursive: true });
  },
  ENV: (s, args) => void Object.assign(s.env, Object.fromEntries(envPairs(args))),
  USER: (s, args) => {
    const [user, ...rest] = words(args);
    if (user === undefined || rest.length > 0) throw new Error('expected USER <name>');
    s.user = imageUser(user.split(':')[0]!);
  },
  VOLUME: (s, args) => void s.volumes.push(...(execForm(args) ?? words(args)).map((v) => posix.resolve(s.workdir, v))),
  EXPOSE: (s, args) => void s.exposed.push(...words(args)),
  CMD: (s, args) => {
    const cmd = execForm(args);
    if (cmd === undefined)
      throw new Error(
        'the shell form runs the server under /bin/sh, which does not pass SIGTERM on; expected the exec form',
      );
    s.cmd = cmd;
  },
  HEALTHCHECK: (s, args) => {
    const { options, rest } = splitOptions(args, ['interval', 'timeout', 'start-period', 'start-interval', 'retries']);
    if (!/^CMD\s/.test(rest)) throw new Error('expected HEALTHCHECK [options] CMD <command>');
    const command = rest.replace(/^CMD\s+/, '');
    s.healthcheck = { command: execForm(command) ?? ['/bin/sh', '-c', command], options };
  },
  COPY: async (s, args) => {
    const { options, rest } = splitOptions(args, ['chown', 'from']);
    const sources = execForm(rest) ?? words(rest);
    const dest = sources.pop();
    if (dest === undefined || sources.length === 0) throw new Error('expected COPY <source>... <destination>');
    const from = options.get('from');
    const stage = from === undefined ? undefined : s.built.get(from);
    if (from !== undefined && stage === undefined) throw new Error(`no earlier stage is named ${from}`);
    const owner = options.has('chown') ? imageUser(options.get('chown')!.split(':')[0]!) : imageUser('root');
    for (const source of sources) {
      if (/[*?[]/.test(source)) throw new Error(`wildcards (${source}) are not reproduced`);
      const rel = posix.normalize(source).replace(/^\/+/, '');
      if (stage === undefined && dockerignored(s.ignore, rel))
        throw new Error(
          `${source} is left out of the build context by .dockerignore, so docker build fails: not found`,
        );
      const origin =
        stage === undefined ? join(s.context, rel) : join(stage.root, posix.resolve(stage.workdir, source));
      const isFolder = (await stat(origin).catch(() => undefined))?.isDirectory();
      if (isFolder === undefined)
        throw new Error(
          `${source} does not exist` +
            `${stage === undefined ? ' in the build context' : ` in stage ${options.get('from')}`}`,
        );
      const target = posix.resolve(
        s.workdir,
        dest,
        isFolder || !(sources.length > 1 || dest.endsWith('/') || dest === '.') ? '' : posix.basename(rel),
      );
      notInVolume(s, target);
      await mkdir(dirname(join(s.root, target)), { recursive: true });
      const kept = (path: string) =>
        stage !== undefined || path === s.context || !dockerignored(s.ignore, relative(s.context, path));
      await cp(origin, join(s.root, target), { recursive: true, filter: kept });
      await chownTree(join(s.root, target), owner);
    }
  },
  RUN: async (s, args) => {
    if (execForm(args) !== undefined || /[|;<>()&]/.test(args.replace(/&&/g, '')))
      throw new Error('expected commands joined by && in shell form');
    for (const command of args.split(/\s*&&\s*/)) {
      const [program, sub, ...rest] = words(command);
      const bySub = RUN_COMMANDS[`${program} ${sub}`];
      const [does, argv] =
        bySub !== undefined ? [bySub, rest] : [RUN_COMMANDS[program!], sub === undefined ? rest : [sub, ...rest]];
      if (does === undefined)
        throw new Error(
          `the command \`${command}\` is not reproduced by test/support/image-layout.ts; teach it what it does`,
        );
      await does(s, argv);
    }
  },
};

/** The commands a `RUN` may chain, by program and first argument, or by program alone. */
const RUN_COMMANDS: Record<string, (s: StageState, args: string[]) => Promise<void>> = {
  'npm ci': async (s, args) => {
    const unknown = args.filter((a) => !['--omit=dev', '--no-audit', '--no-fund'].includes(a));
    if (unknown.length > 0) throw new Error(`npm ci ${unknown.join(' ')} is not reproduced`);
    if (!existsSync(at(s, 'package-lock.json'))) throw new Error(`npm ci needs package-lock.json in ${s.workdir}`);
    notInVolume(s, posix.resolve(s.workdir, 'node_modules'));
    if (!args.includes('--omit=dev')) {
      // Everything, for the build: what the repository's own npm ci installed from the same lockfile.
      if (
        (await readFile(at(s, 'package-lock.json'), 'utf8')) !==
        (await readFile(join(s.context, 'package-lock.json'), 'utf8'))
      )
        throw new Error("its package-lock.json is not the repository's");
      await symlink(join(s.context, 'node_modules'), at(s, 'node_modules'));
      return;
    }
    // Run as root, since npm's warm cache is root's; the image's user must be able to do it there.
    await run('sh', ['-c', 'test -w .'], { cwd: at(s, '.'), ...asUser(s.user) }).catch(() => {
      throw new Error(`${s.user.name} may not write in ${s.workdir}, so npm ci fails there`);
    });
    await run('npm', ['ci', ...args, '--prefer-offline'], { cwd: at(s, '.'), env: { ...process.env, ...s.env } });
    await chownTree(at(s, 'node_modules'), s.user);
  },
  // The image's cache is its own; here it is this machine's, which other work uses: kept.
  'npm cache': async (_s, args) => {
    if (args.join(' ') !== 'clean --force') throw new Error(`npm cache ${args.join(' ')} is not reproduced`);
  },
  'npm run': async (s, [script, ...rest]) => {
    if (script === undefined || rest.length > 0) throw new Error('expected npm run <script>');
    await run('npm', ['run', script], { cwd: at(s, '.'), env: { ...process.env, ...s.env }, ...asUser(s.user) });
  },
  'mkdir -p': async (s, paths) => {
    for (const path of paths) notInVolume(s, posix.resolve(s.workdir, path));
    await run('mkdir', ['-p', ...paths.map((p) => at(s, p))], { cwd: at(s, '.'), ...asUser(s.user) });
  },
  chown: async (s, args) => {
    const recursive = args[0] === '-R';
    const [owner, ...paths] = recursive ? args.slice(1) : args;
    if (owner === undefined || paths.length === 0 || paths.some((p) => p.startsWith('-')))
      throw new Error('expected chown [-R] <user>:<group> <path>...');
    if (s.user.name !== 'root') throw new Error(`${s.user.name} may not chown`);
    for (const path of paths) await chownTree(at(s, path), imageUser(owner.split(':')[0]!), recursive);
  },
};

/** Docker drops what a later step writes into a declared volume; that is a mistake here. */
function notInVolume(s: StageState, imagePath: string): void {
  const volume = s.volumes.find((v) => imagePath === v || imagePath.startsWith(`${v}/`));
  if (volume !== undefined)
    throw new Error(
      `${imagePath} is in VOLUME ${volume}, declared earlier: docker build discards what later steps write there`,
    );
}

/** The image's `node` (or any non-root user) is this machine's account of that name, or `nobody`. */
function imageUser(name: string): ImageUser {
  if (name === 'root') return { name, uid: 0, gid: 0 };
  const account = (local: string) =>
    readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .map((l) => l.split(':'))
      .find((f) => f[0] === local);
  const found = account(name) ?? account('nobody');
  if (found === undefined)
    throw new Error(`this machine has neither a ${name} nor a nobody account to stand in for the image's ${name}`);
  return { name, uid: Number(found[2]), gid: Number(found[3]) };
}

/** Spawn options that run as `user`, when this process is root and can. */
function asUser(user: ImageUser): { uid?: number; gid?: number } {
  return AS_ROOT ? { uid: user.uid, gid: user.gid } : {};
}

async function chownTree(path: string, user: ImageUser, recursive = true): Promise<void> {
  if (AS_ROOT) await run('chown', [...(recursive ? ['-R'] : []), `${user.uid}:${user.gid}`, path]);
}
