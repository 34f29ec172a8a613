/**
 * vitest globalSetup of `npm test`: the workflow bundle (global-setup-bundle.ts) and the compiled
 * sources the CLI and worker processes run from (helpers/compiled.ts), made side by side (two
 * cores, nothing else running yet), or found made by an earlier run of the same sources.
 */
import type { TestProject } from 'vitest/node';
import { cachedDist, TEST_DIST_ENV } from './helpers/compiled';
import bundleSetup from './global-setup-bundle';

export default async function setup(project: TestProject): Promise<void> {
  if (project.vitest.config.watch) return;
  const [, dist] = await Promise.all([bundleSetup(project), cachedDist()]);
  process.env[TEST_DIST_ENV] = dist;
}
