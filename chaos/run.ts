/**
 * A bounded chaos run: our path (the real import, two real worker processes, a real Temporal dev
 * server on a SQLite file) and a plain script side by side, each against its own in-process fake
 * shipping API with the same faults, while workers and script are SIGKILLed every few seconds
 * and the server is restarted once. Then the checks of ./checks.ts on what the fakes saw.
 * The steps are ChaosRun's (./chaos-run.ts).
 */
import { ChaosRun } from './chaos-run';
import type { ChaosReport } from './report';

export { CHAOS_FAULTS } from './faults';
export { chaosOrders } from './orders';
export type { ChaosReport } from './report';

export interface ChaosOptions {
  orders: number;
  seed: number;
  /** How long the faults and kills last. */
  durationMs: number;
  /** Hard limit of the whole run, start-up and checks included. */
  deadlineMs: number;
  /** Kill a worker (and, separately, the plain script) every minKillMs..maxKillMs. */
  minKillMs: number;
  maxKillMs: number;
  /** Length of one tracking stage of the fakes: a label is delivered after 4 of them. */
  trackingStepMs: number;
  /** The random 429s go on after the fault phase (429s no pace causes), while the shipments settle. */
  keep429s?: boolean;
  /** Progress lines (stderr in the CLI). */
  log: (line: string) => void;
  /** Aborts the run early (signals): it still checks what it has and stops everything. */
  signal?: AbortSignal;
}

export const DEFAULT_OPTIONS: Omit<ChaosOptions, 'log'> = {
  orders: 300,
  seed: 1,
  durationMs: 240_000,
  deadlineMs: 570_000,
  minKillMs: 5_000,
  maxKillMs: 10_000,
  trackingStepMs: 2_000,
};

export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const run = new ChaosRun(o);
  try {
    await run.startFakes();
    await run.startTemporal();
    run.startProcesses();
    const importing = run.importUntilDone();
    await run.injectChaos();
    run.stopFaults();
    await importing;
    const counts = await run.settle();
    return await run.report(counts);
  } finally {
    await run.close();
  }
}
