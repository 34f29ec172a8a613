/**
 * vitest globalSetup: bundles the workflow code once, as `npm run build` does, for every fork and
 * worker process of the run (test/helpers/workflow-bundle.ts), or finds it bundled by an earlier
 * run of the same sources. A bundle costs about ten seconds of CPU; the files and worker processes
 * that each built their own spent minutes of a two-core CI run on the same bytes. In watch mode
 * the code changes under the run, so each fork bundles what it sees.
 */
import type { TestProject } from 'vitest/node';
import { cachedBundle, TEST_WORKFLOW_BUNDLE_ENV } from './helpers/workflow-bundle';

export default async function setup(project: TestProject): Promise<void> {
  if (project.vitest.config.watch) return;
  process.env[TEST_WORKFLOW_BUNDLE_ENV] = await cachedBundle();
}
