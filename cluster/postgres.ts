/**
 * A private PostgreSQL instance for the cluster, from Debian's packages: its own data directory
 * (initdb), its own port, loopback TCP only, no Unix socket, password authentication. PostgreSQL
 * refuses to run as root, so a root caller runs it as Debian's `postgres` system user; anyone
 * else runs it as themselves.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findOnPath } from '../dev-server/temporal-cli';

/** The bootstrap superuser initdb creates; Temporal and the schema tool log in as it. */
export const PG_USER = 'temporal';
export const PG_BIN_DIR_ENV = 'PG_BIN_DIR';

export interface PostgresInstall {
  binDir: string;
  /** Major version, e.g. "15". */
  version: string;
}

export interface RunAs {
  uid: number;
  gid: number;
  user: string;
}

function installAt(binDir: string): PostgresInstall | undefined {
  if (!fs.existsSync(path.join(binDir, 'initdb')) || !fs.existsSync(path.join(binDir, 'postgres'))) return undefined;
  const out = spawnSync(path.join(binDir, 'postgres'), ['--version'], { encoding: 'utf8' }).stdout ?? '';
  const major = /(\d+)(?:\.\d+)?/.exec(out)?.[1];
  return major ? { binDir, version: major } : undefined;
}

/** `PG_BIN_DIR`, else the newest /usr/lib/postgresql/<major>/bin (Debian), else initdb on PATH. */
export function findPostgres(env: NodeJS.ProcessEnv = process.env): PostgresInstall | undefined {
  const fromEnv = env[PG_BIN_DIR_ENV];
  if (fromEnv) {
    const found = installAt(fromEnv);
    if (!found) throw new Error(`${PG_BIN_DIR_ENV} is set to ${fromEnv}, but it holds no initdb and postgres`);
    return found;
  }
  const debianRoot = '/usr/lib/postgresql';
  const majors = fs.existsSync(debianRoot)
    ? fs
        .readdirSync(debianRoot)
        .filter((d) => /^\d+$/.test(d))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  for (const major of majors) {
    const found = installAt(path.join(debianRoot, major, 'bin'));
    if (found) return found;
  }
  const initdb = findOnPath('initdb', env);
  return initdb ? installAt(path.dirname(initdb)) : undefined;
}

/**
 * Installs Debian's `postgresql` package (root only). The package's own cluster is not used: it
 * is left as Debian configured it (stopped here, as no init system runs).
 */
export function installPostgres(log: (msg: string) => void): PostgresInstall {
  if (process.getuid?.() !== 0) {
    throw new Error('PostgreSQL is not installed. Install it (sudo apt-get install postgresql) or set PG_BIN_DIR to its bin directory.');
  }
  const apt = (args: string[]) =>
    spawnSync('apt-get', args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  log('PostgreSQL is not installed: apt-get install postgresql');
  let result = apt(['install', '-y', '-q', '--no-install-recommends', 'postgresql']);
  if (result.status !== 0) {
    log('apt-get install failed; apt-get update, then again');
    apt(['update', '-q']);
    result = apt(['install', '-y', '-q', '--no-install-recommends', 'postgresql']);
  }
  if (result.status !== 0) throw new Error(`apt-get install postgresql failed (${result.status ?? result.error?.message})`);
  const found = findPostgres();
  if (!found) throw new Error('apt-get installed postgresql, but no initdb was found under /usr/lib/postgresql');
  return found;
}

/** Root runs PostgreSQL as the `postgres` system user the Debian package creates. */
export function postgresRunAs(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  const uid = id('-u');
  const gid = id('-g');
  if (uid.status !== 0 || gid.status !== 0) {
    throw new Error('Running as root, but there is no `postgres` user to run PostgreSQL as (PostgreSQL refuses root).');
  }
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()), user: 'postgres' };
}

/** The superuser password, made once per data directory and kept in a 0600 file beside it. */
export function postgresPassword(passwordFile: string): string {
  if (fs.existsSync(passwordFile)) return fs.readFileSync(passwordFile, 'utf8').trim();
  const password = randomBytes(24).toString('base64url');
  fs.writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  return password;
}

/** initdb into `pgDir` unless it already holds a cluster. Returns whether it created one. */
export function initPostgres(install: PostgresInstall, pgDir: string, password: string, runAs: RunAs | undefined): boolean {
  if (fs.existsSync(path.join(pgDir, 'PG_VERSION'))) return false;
  fs.mkdirSync(pgDir, { recursive: true, mode: 0o700 });
  if (runAs) fs.chownSync(pgDir, runAs.uid, runAs.gid);
  // The password goes through a private file that exists only while initdb runs (not on a
  // command line; and stdin is a socket that the postgres user cannot reopen as /dev/stdin).
  const pwDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cluster-initdb-'));
  const pwFile = path.join(pwDir, 'password');
  let result: ReturnType<typeof spawnSync>;
  try {
    fs.writeFileSync(pwFile, `${password}\n`, { mode: 0o600 });
    if (runAs) {
      fs.chownSync(pwDir, runAs.uid, runAs.gid);
      fs.chownSync(pwFile, runAs.uid, runAs.gid);
    }
    result = spawnSync(
      path.join(install.binDir, 'initdb'),
      ['-D', pgDir, '-U', PG_USER, `--pwfile=${pwFile}`, '--auth=scram-sha-256', '-E', 'UTF8', '--no-locale'],
      { encoding: 'utf8', cwd: pgDir, ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}) },
    );
  } finally {
    fs.rmSync(pwDir, { recursive: true, force: true });
  }
  if (result.status !== 0) {
    const out = `${String(result.stdout ?? '')}${String(result.stderr ?? '')}${result.error?.message ?? ''}`.trim();
    const hint = runAs
      ? ` (it runs as the ${runAs.user} user, which needs to reach ${pgDir}: every parent directory must be searchable, e.g. chmod o+x)`
      : '';
    fs.rmSync(pgDir, { recursive: true, force: true });
    throw new Error(`initdb failed${hint}:\n${out}`);
  }
  return true;
}

/** The server process: settings on the command line, so the data directory stays as initdb left it. */
export function postgresCommand(install: PostgresInstall, pgDir: string, port: number): { command: string; args: string[] } {
  return {
    command: path.join(install.binDir, 'postgres'),
    args: [
      '-D',
      pgDir,
      '-c',
      `port=${port}`,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=200',
      '-c',
      'logging_collector=off',
    ],
  };
}

/** `pg_isready` until PostgreSQL accepts connections (it answers "starting up" before that). */
export async function waitForPostgres(install: PostgresInstall, port: number, alive: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!alive()) throw new Error('PostgreSQL exited during startup');
    const ready = await new Promise<boolean>((resolve) => {
      const child = spawn(path.join(install.binDir, 'pg_isready'), ['-q', '-h', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
      child.on('exit', (code) => resolve(code === 0));
      child.on('error', () => resolve(false));
    });
    if (ready) return;
    if (Date.now() > deadline) throw new Error(`PostgreSQL did not accept connections on 127.0.0.1:${port} within ${timeoutMs / 1000} s`);
    await sleep(200);
  }
}
