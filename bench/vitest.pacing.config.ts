import { defineConfig } from 'vitest/config';

/** `npm run bench:pacing`: the pacer's simulated bench (bench/pacing-sim.ts), on its own. */
export default defineConfig({
  test: { include: ['bench/pacing-sim.ts'], pool: 'forks', testTimeout: 3_600_000 },
});
