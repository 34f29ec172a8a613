/**
 * The workflow code every test of one run shares: bundled once by the global setup (as
 * `npm run build` does), kept in .tools/cache under a hash of the sources it may be made of, and
 * named by TEST_WORKFLOW_BUNDLE_PATH; a later run with the same sources bundles nothing. Without
 * it (a file run outside vitest's global setup) each caller bundles its own, as before.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

export const TEST_WORKFLOW_BUNDLE_ENV = 'TEST_WORKFLOW_BUNDLE_PATH';

const ROOT = path.resolve(__dirname, '../..');
const CACHE = path.join(ROOT, '.tools', 'cache', 'workflow-bundle');
/** Not workflow code, whatever they import: the tests, docs, tools, data and builds. */
const NOT_SOURCES = new Set(['node_modules', 'test', 'docs', 'bench', 'chaos', '.git', '.tools', '.data', 'dist', 'coverage', 'examples']);

/** Every .ts file a bundle could be made of, and the lockfile: a hash that changes with any of them. */
export function sourcesHash(): string {
  const hash = createHash('sha256');
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (dir === ROOT && NOT_SOURCES.has(e.name)) continue;
      const file = path.join(dir, e.name);
      if (e.isDirectory()) walk(file);
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
        hash.update(path.relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
    }
  };
  walk(ROOT);
  hash.update(readFileSync(path.join(ROOT, 'package-lock.json')));
  return hash.digest('hex').slice(0, 16);
}

/** The bundle of today's sources in the cache, built now (in a process of its own) if it is not there. */
export async function cachedBundle(): Promise<string> {
  const file = path.join(CACHE, `${sourcesHash()}.js`);
  if (
    await stat(file).then(
      () => true,
      () => false,
    )
  )
    return file;
  await mkdir(CACHE, { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  await promisify(execFile)(process.execPath, ['--import', 'tsx', 'worker/build-bundle.ts', partial], { cwd: ROOT });
  await rename(partial, file);
  // Older sources' bundles are of no further use.
  for (const old of await readdir(CACHE)) if (path.join(CACHE, old) !== file) await rm(path.join(CACHE, old), { force: true });
  return file;
}

/** The run's shared bundle file, if the global setup made one. */
export function sharedBundlePath(): string | undefined {
  const file = process.env[TEST_WORKFLOW_BUNDLE_ENV];
  return file ? file : undefined;
}

/** A prebuilt bundle file for a worker process (`WORKFLOW_BUNDLE_PATH`): the shared one, or one built now. */
export function prebuiltBundlePath(): string {
  const shared = sharedBundlePath();
  if (shared) return shared;
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'workflow-bundle-')), 'workflow-bundle.js');
  execFileSync(process.execPath, ['--import', 'tsx', 'worker/build-bundle.ts', file], { cwd: ROOT, stdio: 'ignore' });
  return file;
}
