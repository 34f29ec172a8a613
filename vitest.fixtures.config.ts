/**
 * `npm run fixtures:record`: the suites that record replay fixtures (every test file that calls
 * saveFixture), run with RECORD_HISTORIES=1 after the old fixtures are removed. Chosen by what a
 * file does, so a new recording suite is picked up by itself. One file at a time: several of them
 * kill workers or time their faults, and a loaded machine makes those flaky.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { defineConfig } from 'vitest/config';
import base from './vitest.config';

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.test.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

const recording = [...testFiles('test'), ...testFiles('workflows')].filter((file) => /\bsaveFixture\(/.test(readFileSync(file, 'utf8')));

export default defineConfig({
  test: {
    ...base.test,
    include: recording,
    fileParallelism: false,
  },
});
