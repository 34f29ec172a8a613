/**
 * vitest globalSetup of `npm test` (not of test:fast, whose few workflow tests bundle in their
 * two forks alongside the unit tests): bundles the workflow code once, as `npm run build` does,
 * for every fork and worker process of the run (test/helpers/workflow-bundle.ts). A bundle costs
 * about ten seconds of CPU; the files and worker processes that each built their own spent
 * minutes of a two-core CI run on the same bytes. In watch mode the code changes under the run,
 * so each fork bundles what it sees.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { TEST_WORKFLOW_BUNDLE_ENV } from './helpers/workflow-bundle';

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (project.vitest.config.watch) return undefined;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'test-workflow-bundle-'));
  const file = path.join(dir, 'workflow-bundle.js');
  await promisify(execFile)(process.execPath, ['--import', 'tsx', 'worker/build-bundle.ts', file], { cwd: path.resolve(__dirname, '..') });
  process.env[TEST_WORKFLOW_BUNDLE_ENV] = file;
  return () => rm(dir, { recursive: true, force: true });
}
