/**
 * A worker without a prebuilt bundle (WORKFLOW_BUNDLE_PATH unset, the default) bundles its
 * workflow code in a process of its own: webpack's heap and buffers leave with that process
 * instead of staying in the worker's RSS (docs/configuration.md, "Worker memory and concurrency").
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { expect, it } from 'vitest';
import { defaultBuildId } from '../config/deployment';
import { workflowCodeAndVersion } from '../worker/deployment-version';
import { bundleFromSource } from '../worker-deployment/workflow-bundle';

/** webpack's compiler modules this process has loaded (the SDK loads only webpack's entry until it bundles). */
const webpackModulesLoaded = () =>
  Object.keys(createRequire(__filename).cache).filter((m) => m.includes(`${path.sep}webpack${path.sep}lib${path.sep}`)).length;

it('bundles the workflow code apart: the worker never runs webpack, and the code (so the build id) is the one built in process', async () => {
  const before = webpackModulesLoaded();
  const { code, version } = await workflowCodeAndVersion({ versioning: false }, undefined);
  expect(version).toBeUndefined();
  expect(webpackModulesLoaded()).toBe(before);
  // `npm run cli -- deployment build-id` bundles in its own process: the same code, the same id.
  expect(defaultBuildId(code)).toBe(defaultBuildId((await bundleFromSource()).code));
}, 120_000);
