/**
 * The project compiled as `npm run build` compiles it (tsc -p tsconfig.build.json), once per run
 * of `npm test` by its global setup, for the child processes tests start by the hundred: the CLI
 * and the worker. Run from JavaScript they start on a third of the CPU they take through tsx
 * (`--help`: CLI 1.9 → 0.8 s, worker 3.0 → 1.3 s of user+system), and they are what production
 * runs (`node dist/worker/main.js`). Kept in .tools/cache/dist/<hash of the sources> and named by
 * TEST_DIST_DIR; without it (a file run outside that setup) the sources run through tsx.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { sourcesHash } from './workflow-bundle';

export const TEST_DIST_ENV = 'TEST_DIST_DIR';

const ROOT = path.resolve(__dirname, '../..');
const CACHE = path.join(ROOT, '.tools', 'cache', 'dist');
const KEEP_OLDER_BUILDS = 4;

/** The sources' hash, and what else shapes the output: the compiler's settings and package.json (read by the code). */
function buildHash(): string {
  const hash = createHash('sha256').update(sourcesHash());
  for (const file of ['tsconfig.json', 'tsconfig.build.json', 'package.json']) hash.update(readFileSync(path.join(ROOT, file)));
  return hash.digest('hex').slice(0, 16);
}

/** The compiled sources of today in the cache, compiled now if they are not there. */
export async function cachedDist(): Promise<string> {
  const dir = path.join(CACHE, buildHash());
  if (
    await stat(path.join(dir, 'client', 'cli.js')).then(
      () => true,
      () => false,
    )
  )
    return dir;
  await mkdir(CACHE, { recursive: true });
  const partial = `${dir}.${process.pid}.partial`;
  await rm(partial, { recursive: true, force: true });
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', partial], { cwd: ROOT });
  await rm(dir, { recursive: true, force: true });
  await rename(partial, dir);
  // Older sources' builds go, but for the newest few: a bench's worker (the scale bench runs one
  // for 20 minutes) may still be starting from one while sources change (3.6 MB each).
  const older = await Promise.all(
    (await readdir(CACHE))
      .filter((name) => path.join(CACHE, name) !== dir && !name.endsWith('.partial'))
      .map(async (name) => ({ name, at: (await stat(path.join(CACHE, name))).mtimeMs })),
  );
  older.sort((a, b) => b.at - a.at);
  for (const { name } of older.slice(KEEP_OLDER_BUILDS)) await rm(path.join(CACHE, name), { recursive: true, force: true });
  return dir;
}

/**
 * Node's arguments to run `source` (e.g. `client/cli.ts`) from the repository's root: its
 * compiled file when the run has them, else the source through tsx.
 */
export function nodeArgsFor(source: string): string[] {
  const dist = process.env[TEST_DIST_ENV];
  return dist ? [path.join(dist, source.replace(/\.ts$/, '.js'))] : ['--import', 'tsx', source];
}
