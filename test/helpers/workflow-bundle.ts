/**
 * The workflow code every test of one run shares: bundled once by test/global-setup.ts (as
 * `npm run build` does) and named by TEST_WORKFLOW_BUNDLE_PATH; without it (watch mode, or a
 * file run outside vitest's global setup) each caller bundles its own, as before.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const TEST_WORKFLOW_BUNDLE_ENV = 'TEST_WORKFLOW_BUNDLE_PATH';

/** The run's shared bundle file, if global setup built one. */
export function sharedBundlePath(): string | undefined {
  const file = process.env[TEST_WORKFLOW_BUNDLE_ENV];
  return file ? file : undefined;
}

/** A prebuilt bundle file for a worker process (`WORKFLOW_BUNDLE_PATH`): the shared one, or one built now. */
export function prebuiltBundlePath(): string {
  const shared = sharedBundlePath();
  if (shared) return shared;
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'workflow-bundle-')), 'workflow-bundle.js');
  execFileSync(process.execPath, ['--import', 'tsx', 'worker/build-bundle.ts', file], {
    cwd: path.resolve(__dirname, '../..'),
    stdio: 'ignore',
  });
  return file;
}
