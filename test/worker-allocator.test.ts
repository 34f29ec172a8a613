/**
 * The worker tells which C allocator serves it ("worker started": `allocator`), because most of a
 * busy worker's memory is outside the V8 heaps and jemalloc, which the Dockerfile, `npm start` and
 * `npm run worker` preload where it is installed, holds far less of it after an import's peak (docs/configuration.md).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { allocatorInMaps, allocatorWarning, JEMALLOC_PATHS, jemallocPreload } from '../worker/allocator';

const ROOT = path.resolve(__dirname, '..');
const jemalloc = JEMALLOC_PATHS.find((p) => existsSync(p));

const LIBC = '7f1c2a000000-7f1c2a028000 r--p 00000000 08:01 1234 /usr/lib/x86_64-linux-gnu/libc.so.6\n';

describe('allocatorInMaps', () => {
  it('names the allocator a memory map shows loaded, and the system one otherwise', () => {
    expect(allocatorInMaps(LIBC)).toBe('system');
    expect(allocatorInMaps(`${LIBC}7f1c2b000000-7f1c2b100000 r-xp 00000000 08:01 99 /usr/lib/x86_64-linux-gnu/libjemalloc.so.2\n`)).toBe(
      'jemalloc',
    );
    expect(allocatorInMaps(`${LIBC}7f00-7f01 r-xp 0 08:01 7 /usr/local/lib/libtcmalloc_minimal.so.4\n`)).toBe('tcmalloc');
    // A file that only mentions the name is not the library.
    expect(allocatorInMaps(`${LIBC}7f00-7f01 r--p 0 08:01 7 /srv/notes/jemalloc-howto.txt\n`)).toBe('system');
  });
});

/** What a fresh Node process with `env` reports as its allocator. */
async function allocatorOfProcess(env: Record<string, string>): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', '-e', "import('./worker/allocator.ts').then((m) => console.log(m.default.currentAllocator()))"],
    { cwd: ROOT, env: { PATH: process.env.PATH, ...env } },
  );
  return stdout.trim();
}

it('a process without a preloaded allocator reports the system one', async () => {
  expect(await allocatorOfProcess({})).toBe('system');
}, 30_000);

// .ci/run installs Debian's libjemalloc2 when it is missing, as the Dockerfile does.
it.runIf(jemalloc)(
  'a process started with jemalloc preloaded (as the Dockerfile starts the worker) reports it',
  async () => {
    expect(await allocatorOfProcess({ LD_PRELOAD: jemalloc! })).toBe('jemalloc');
  },
  30_000,
);

// The README's `npm run worker` and production's `npm start` both: a worker started either way
// must not hold the import's churn that glibc's allocator keeps.
it.runIf(jemalloc).each(['start', 'worker'])(
  'npm run %s preloads jemalloc where installed, and keeps a preload the environment names',
  async (script) => {
    const scripts = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const preload = /^(LD_PRELOAD=\$\{LD_PRELOAD-\$\([^)]*\)\}) /.exec(scripts[script]!)?.[1];
    expect(preload, `package.json scripts.${script}: ${scripts[script]}`).toBeDefined();
    const ld = async (env: Record<string, string>) =>
      (
        await promisify(execFile)('sh', ['-c', `${preload} sh -c 'echo "$LD_PRELOAD"'`], { env: { PATH: process.env.PATH, ...env } })
      ).stdout.trim();
    expect(await ld({})).toBe(jemalloc);
    expect(await ld({ LD_PRELOAD: '/opt/other.so' })).toBe('/opt/other.so');
    expect(await ld({ LD_PRELOAD: '' })).toBe('');
  },
);

it('npm run dev and the bench preload jemalloc where installed, never over a preload the environment names', () => {
  expect(jemallocPreload({ LD_PRELOAD: '/opt/other.so' })).toEqual({});
  expect(jemallocPreload({ LD_PRELOAD: '' })).toEqual({});
  expect(jemallocPreload({})).toEqual(jemalloc ? { LD_PRELOAD: jemalloc } : {});
});

it("a worker on glibc's allocator is told how to get jemalloc; on any other, or off Linux, nothing", () => {
  expect(allocatorWarning('system', 'linux')).toMatch(/apt-get install libjemalloc2.*npm start and npm run worker preload it/);
  expect(allocatorWarning('jemalloc', 'linux')).toBeUndefined();
  expect(allocatorWarning('tcmalloc', 'linux')).toBeUndefined();
  expect(allocatorWarning('system', 'darwin')).toBeUndefined();
});
