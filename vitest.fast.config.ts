/**
 * `npm run test:fast`: the inner loop — the unit tests (no Temporal server, worker or child
 * process) and the scripted workflow tests beside the workflows (mocked activities on one dev
 * server). Chosen by what a file does, so a new test file lands on the right side by itself;
 * `npm test` runs everything, the replay fixtures, the chaos run and the simulations included.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

/** What makes a test file slow: a Temporal server, a worker, a child process, a replay of every fixture, a simulation. */
const HEAVY =
  /createTestEnv|startHarness|TestWorkflowEnvironment|createLocal|new Worker|Worker\.create|spawn\(|startDevProcess|worker-process|runCli\(|runReplayHistor|runChaos|helpers\/pacer-sim|bundleFromSource/;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.test.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

const fast = [...testFiles('test').filter((file) => !HEAVY.test(readFileSync(file, 'utf8'))), ...testFiles('workflows')];

export default defineConfig({
  test: {
    include: fast,
    pool: 'forks',
    poolOptions: { forks: { minForks: 1, maxForks: 2 } },
    // One module cache per fork instead of one per file: loading the SDK and the contract again for
    // every file was half the run (66 s → 37 s here); the files pass in any order (--sequence.shuffle.files).
    isolate: false,
    // The scripted workflow tests run on a dev server: the same Temporal CLI as npm test, and the
    // same workflow bundle, built once for both suites while the sources stay the same.
    globalSetup: ['test/global-setup.ts', 'test/global-setup-bundle.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
