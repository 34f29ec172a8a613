import { defineConfig } from 'vitest/config';

// `npm run test:cluster`: the suites under test-cluster/ against a real `npm run cluster`
// (PostgreSQL, the Temporal server, workers as processes). Not part of `npm test`.
export default defineConfig({
  test: {
    include: ['test-cluster/**/*.test.ts'],
    pool: 'forks',
    // One cluster at a time: each is a PostgreSQL, a Temporal server and several workers.
    fileParallelism: false,
    testTimeout: 180_000,
    // beforeAll starts the cluster: minutes when the Temporal binaries still have to be built.
    hookTimeout: 900_000,
    teardownTimeout: 60_000,
  },
});
