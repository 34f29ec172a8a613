/**
 * Finds (or builds) the Temporal CLI, whose `temporal server start-dev` powers both the local
 * dev environment (`npm run dev`) and the integration tests (`TestWorkflowEnvironment.createLocal`).
 *
 * Resolution order (first hit wins):
 *   1. env `TEMPORAL_CLI_PATH` — must point at an executable, otherwise this throws;
 *   2. `temporal` on PATH;
 *   3. the project cache `<repo>/.tools/bin/temporal` (gitignored);
 *   4. if `go` is on PATH (and `build` is not false): `go install` the CLI into that cache. This
 *      takes minutes; a lock directory makes concurrent callers wait for one build;
 *   5. undefined — the caller falls back to the SDK's own download (needs internet).
 *
 * Every binary found is checked once per process by running `<path> --version`.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EphemeralServerExecutable } from '@temporalio/testing';

/** The Go module of the CLI. Later tags refuse `go install` (they carry replace directives). */
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
export const TEMPORAL_CLI_ENV = 'TEMPORAL_CLI_PATH';

/** The repository root (this file lives in `<repo>/dev-server/`). */
export const REPO_ROOT = path.resolve(__dirname, '..');

const EXE_SUFFIX = process.platform === 'win32' ? '.exe' : '';
const LOCK_POLL_MS = 1_000;
/** A build lock older than this is considered abandoned even if its owner looks alive. */
const LOCK_STALE_MS = 30 * 60 * 1000;
const BUILD_HEARTBEAT_MS = 30_000;

export interface FindTemporalCliOptions {
  /** Build the CLI with Go when nothing else is found. Default: true. */
  build?: boolean;
  /** Progress messages (lookup decisions, build progress). Default: silent. */
  log?: (msg: string) => void;
  /** Environment to read `TEMPORAL_CLI_PATH` and `PATH` from. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Repository root whose `.tools/bin` is the cache. Default: this checkout. */
  repoRoot?: string;
}

export function cacheBinDir(repoRoot: string = REPO_ROOT): string {
  return path.join(repoRoot, '.tools', 'bin');
}

export function cachedCliPath(repoRoot: string = REPO_ROOT): string {
  return path.join(cacheBinDir(repoRoot), `temporal${EXE_SUFFIX}`);
}

export function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Like `which`: the first executable `name` in the PATH of `env`. */
export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dirs = (env.PATH ?? env.Path ?? '').split(path.delimiter).filter(Boolean);
  for (const dir of dirs) {
    const candidate = path.resolve(dir, name + EXE_SUFFIX);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/** `--version` output per verified path, so each binary is run once per process. */
const verified = new Map<string, string>();

/** Runs `<file> --version`; returns its first output line, or throws. */
export function verifyTemporalCli(file: string): string {
  const known = verified.get(file);
  if (known !== undefined) return known;
  const result = spawnSync(file, ['--version'], { encoding: 'utf8', timeout: 30_000, stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.error) throw new Error(`${file} --version failed: ${result.error.message}`);
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim();
    throw new Error(`${file} --version exited with ${result.status ?? result.signal}${output ? `: ${output}` : ''}`);
  }
  const version = (result.stdout || result.stderr || '').trim().split('\n')[0] ?? '';
  verified.set(file, version);
  return version;
}

/** Candidates that need no build: env var (throws if invalid), PATH, project cache. */
function lookupWithoutBuild(opts: FindTemporalCliOptions): string | undefined {
  const env = opts.env ?? process.env;
  const log = opts.log ?? (() => undefined);

  const fromEnv = env[TEMPORAL_CLI_ENV];
  if (fromEnv) {
    const file = path.resolve(fromEnv);
    if (!isExecutableFile(file)) {
      throw new Error(`${TEMPORAL_CLI_ENV} is set to ${fromEnv}, but that is not an executable file`);
    }
    let version: string;
    try {
      version = verifyTemporalCli(file);
    } catch (err) {
      throw new Error(`${TEMPORAL_CLI_ENV} is set to ${fromEnv}, but it does not run: ${(err as Error).message}`, { cause: err });
    }
    log(`Temporal CLI from ${TEMPORAL_CLI_ENV}: ${file} (${version})`);
    return file;
  }

  const candidates: Array<[string, string | undefined]> = [
    ['PATH', findOnPath('temporal', env)],
    ['project cache', cachedCliPath(opts.repoRoot)],
  ];
  for (const [source, file] of candidates) {
    if (!file || !isExecutableFile(file)) continue;
    try {
      const version = verifyTemporalCli(file);
      log(`Temporal CLI from ${source}: ${file} (${version})`);
      return file;
    } catch (err) {
      log(`Ignoring Temporal CLI at ${file} (${source}): ${(err as Error).message}`);
    }
  }
  return undefined;
}

/**
 * Finds the Temporal CLI, building it with Go into `<repo>/.tools/bin` if needed and allowed.
 * Returns undefined when nothing is found and nothing can be built.
 * Throws when `TEMPORAL_CLI_PATH` is set but unusable, or when a Go build fails.
 */
export async function findTemporalCli(opts: FindTemporalCliOptions = {}): Promise<string | undefined> {
  const found = lookupWithoutBuild(opts);
  if (found) return found;

  const log = opts.log ?? (() => undefined);
  if (opts.build === false) return undefined;
  const env = opts.env ?? process.env;
  const go = findOnPath('go', env);
  if (!go) {
    log('Temporal CLI not found (no TEMPORAL_CLI_PATH, no `temporal` on PATH, no project cache) and no `go` on PATH to build it');
    return undefined;
  }
  return buildTemporalCli({ go, env, log, repoRoot: opts.repoRoot ?? REPO_ROOT });
}

/**
 * The `server.executable` option for `TestWorkflowEnvironment.createLocal`: the CLI found without
 * building (vitest's global setup builds it once and exports TEMPORAL_CLI_PATH), or the SDK's
 * own download when there is none.
 */
export function temporalServerExecutable(opts: Omit<FindTemporalCliOptions, 'build'> = {}): EphemeralServerExecutable {
  const found = lookupWithoutBuild(opts);
  if (found) return { type: 'existing-path', path: found };
  (opts.log ?? console.warn)(
    'Temporal CLI not found; the Temporal SDK will try to download it (needs internet). ' +
      'Set TEMPORAL_CLI_PATH or run `npm run temporal:cli` to build it with Go.',
  );
  return { type: 'cached-download' };
}

// ---------------------------------------------------------------- build with Go

interface LockOwner {
  pid: number;
  host: string;
  startedAt: number;
}

function readLockOwner(lockDir: string): LockOwner | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(lockDir, 'owner.json'), 'utf8')) as LockOwner;
  } catch {
    return undefined;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function lockIsStale(lockDir: string): boolean {
  const owner = readLockOwner(lockDir);
  let ageMs: number;
  try {
    ageMs = Date.now() - fs.statSync(lockDir).mtimeMs;
  } catch {
    return false; // gone already
  }
  if (!owner) return ageMs > 10_000; // owner.json is written right after mkdir
  if (ageMs > LOCK_STALE_MS) return true;
  return owner.host === os.hostname() && !processAlive(owner.pid);
}

/** mkdir is atomic: whoever creates the directory owns the build. */
function tryAcquireLock(lockDir: string): boolean {
  try {
    fs.mkdirSync(lockDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  const owner: LockOwner = { pid: process.pid, host: os.hostname(), startedAt: Date.now() };
  fs.writeFileSync(path.join(lockDir, 'owner.json'), JSON.stringify(owner));
  return true;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A Go program built into the project cache with `go install <pkg>`: the Temporal CLI here, the
 * server, its SQL schema tool and the UI server for `npm run cluster` (cluster/binaries.ts).
 */
export interface GoTool {
  /** `module/path/cmd/x@version`, as `go install` takes it. */
  pkg: string;
  /** The file `go install` writes into GOBIN (the last path element of the package). */
  builtName: string;
  /** Where the binary lives once built (inside `.tools/bin`). */
  target: string;
  /** Runs the binary once and returns its version line; throws if it does not run. */
  verify: (file: string) => string;
  /** For messages, e.g. "the Temporal CLI v1.5.1". */
  what: string;
}

/** In-process dedup: two calls in one process for the same binary share one build (or wait). */
const buildsInFlight = new Map<string, Promise<string>>();

async function buildTemporalCli(args: {
  go: string;
  env: NodeJS.ProcessEnv;
  log: (msg: string) => void;
  repoRoot: string;
}): Promise<string> {
  return buildWithGo(
    {
      pkg: `${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}`,
      builtName: 'temporal',
      target: cachedCliPath(args.repoRoot),
      verify: verifyTemporalCli,
      what: `the Temporal CLI ${TEMPORAL_CLI_VERSION}`,
    },
    args,
  );
}

/**
 * Builds `tool` into its target with `go install`, under a lock directory next to `.tools/bin`
 * so concurrent processes build once; returns the target path.
 */
export async function buildWithGo(tool: GoTool, args: { go: string; env: NodeJS.ProcessEnv; log: (msg: string) => void }): Promise<string> {
  let inFlight = buildsInFlight.get(tool.target);
  if (!inFlight) {
    inFlight = buildOrWait(tool, args).finally(() => buildsInFlight.delete(tool.target));
    buildsInFlight.set(tool.target, inFlight);
  }
  return inFlight;
}

async function buildOrWait(
  tool: GoTool,
  { go, env, log }: { go: string; env: NodeJS.ProcessEnv; log: (msg: string) => void },
): Promise<string> {
  const { target } = tool;
  const binDir = path.dirname(target);
  const toolsDir = path.dirname(binDir);
  const lockDir = path.join(toolsDir, `${path.basename(target, EXE_SUFFIX)}-build.lock`);
  fs.mkdirSync(binDir, { recursive: true });

  let announcedWait = false;
  let waitStarted = 0;
  let lastWaitNote = 0;
  for (;;) {
    if (tryAcquireLock(lockDir)) {
      try {
        // Someone may have finished a build between our lookup and the lock.
        if (isExecutableFile(target)) {
          tool.verify(target);
          return target;
        }
        await runGoInstall({ tool, go, env, log, toolsDir });
        const version = tool.verify(target);
        log(`Built ${tool.what}: ${target} (${version})`);
        return target;
      } finally {
        fs.rmSync(lockDir, { recursive: true, force: true });
      }
    }
    if (lockIsStale(lockDir)) {
      log(`Removing stale build lock ${lockDir}`);
      fs.rmSync(lockDir, { recursive: true, force: true });
      continue;
    }
    if (!announcedWait) {
      const owner = readLockOwner(lockDir);
      log(`Another process${owner ? ` (pid ${owner.pid})` : ''} is building ${tool.what}; waiting for it (${lockDir})`);
      announcedWait = true;
      waitStarted = Date.now();
      lastWaitNote = waitStarted;
    } else if (Date.now() - lastWaitNote >= BUILD_HEARTBEAT_MS) {
      // A wait of minutes is not silent either.
      log(`... still waiting for the other build of ${tool.what} (${Math.round((Date.now() - waitStarted) / 1000)} s)`);
      lastWaitNote = Date.now();
    }
    await sleep(LOCK_POLL_MS);
    if (!fs.existsSync(lockDir) && isExecutableFile(target)) {
      const version = tool.verify(target);
      log(`${tool.what} built by another process: ${target} (${version})`);
      return target;
    }
    // Lock gone but no binary: the other build failed; loop and try ourselves.
  }
}

async function runGoInstall({
  tool,
  go,
  env,
  log,
  toolsDir,
}: {
  tool: GoTool;
  go: string;
  env: NodeJS.ProcessEnv;
  log: (msg: string) => void;
  toolsDir: string;
}): Promise<void> {
  const { pkg, target } = tool;
  // Build into a private directory and rename, so nobody ever sees a half-written binary.
  const gobin = fs.mkdtempSync(path.join(toolsDir, 'build-'));
  log(
    `Building ${tool.what} with Go (${go}) into ${path.dirname(target)}. ` +
      "The first build takes 3 to 6 minutes on a 2-core machine (download + compile; seconds once Go's caches are warm); later runs reuse it.",
  );
  const started = Date.now();
  const heartbeat = setInterval(() => {
    log(`... still building ${tool.what} (${Math.round((Date.now() - started) / 1000)} s)`);
  }, BUILD_HEARTBEAT_MS);
  try {
    const output = await new Promise<string>((resolve, reject) => {
      // Niced: a cold build keeps both cores busy for minutes on a machine others share.
      const nice = findOnPath('nice', env);
      const [command, args] = nice ? [nice, ['-n', '10', go, 'install', pkg]] : [go, ['install', pkg]];
      const child = spawn(command, args, {
        env: { ...env, GOBIN: gobin },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', reject);
      child.on('close', (code, signal) => {
        if (code === 0) resolve(out);
        else reject(new Error(`GOBIN=${gobin} ${go} install ${pkg} failed (${code ?? signal}):\n${out.trim().slice(-4000)}`));
      });
    });
    const lines = output.split('\n').filter((l) => l.trim());
    const downloads = lines.filter((l) => l.startsWith('go: downloading ')).length;
    if (downloads > 0) log(`(go downloaded ${downloads} modules into its module cache)`);
    const rest = lines.filter((l) => !l.startsWith('go: downloading '));
    if (rest.length > 0) log(rest.join('\n'));
    const built = path.join(gobin, `${tool.builtName}${EXE_SUFFIX}`);
    if (!isExecutableFile(built)) throw new Error(`go install ${pkg} succeeded but produced no ${built}`);
    fs.renameSync(built, target);
    log(`Build of ${tool.what} took ${Math.round((Date.now() - started) / 1000)} s`);
  } finally {
    clearInterval(heartbeat);
    fs.rmSync(gobin, { recursive: true, force: true });
  }
}
