import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Fast tests with mocked activities live beside the code they test.
    include: ['test/**/*.test.ts', 'workflows/**/*.test.ts'],
    // The Temporal SDK's native module crashes under worker threads: one child process per fork.
    pool: 'forks',
    poolOptions: {
      // 2-core machines: each fork may run a Temporal dev server and a worker.
      forks: { minForks: 1, maxForks: 2 },
    },
    // Finds/builds the Temporal CLI once and exports TEMPORAL_CLI_PATH for the forks; bundles the
    // workflow code once for every fork and worker process (TEST_WORKFLOW_BUNDLE_PATH) and compiles
    // the sources the CLI and worker processes run from (TEST_DIST_DIR).
    globalSetup: ['test/global-setup.ts', 'test/global-setup-builds.ts'],
    testTimeout: 60_000,
    // beforeAll hooks start dev servers and bundle workflows.
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
  },
});
