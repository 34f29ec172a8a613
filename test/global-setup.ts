/**
 * vitest globalSetup: runs once in the main vitest process before any test file. Finds the
 * Temporal CLI (building it with Go into .tools/bin if needed) and exports its path as
 * TEMPORAL_CLI_PATH, which the test forks inherit, so no fork looks for it or races to build it.
 */
import type { TestProject } from 'vitest/node';
import { findTemporalCli, TEMPORAL_CLI_ENV } from '../dev-server/temporal-cli';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The CLI global setup found, or null (then tests fall back to the SDK's download). */
    temporalCliPath: string | null;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const log = (msg: string) => process.stderr.write(`[temporal-cli] ${msg}\n`);
  const cli = await findTemporalCli({ build: true, log });
  if (cli) {
    process.env[TEMPORAL_CLI_ENV] = cli;
  } else {
    log('No Temporal CLI found or built; tests that start a dev server will try the SDK download (needs internet).');
  }
  project.provide('temporalCliPath', cli ?? null);
}
