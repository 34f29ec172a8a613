/**
 * A bounded chaos run: our path (the real import, two real worker processes, a real Temporal dev
 * server on a SQLite file) and a plain script side by side, each against its own in-process fake
 * shipping API with the same faults, while workers and script are SIGKILLed every few seconds
 * and the server is restarted once. Then the checks of ./checks.ts on what the fakes saw.
 * The steps are ChaosRun's (./chaos-run.ts).
 */
import { ChaosRun } from './chaos-run';
import type { ChaosOptions } from './options';
import type { ChaosReport } from './report';

export { CHAOS_FAULTS } from './faults';
export { chaosOrders } from './orders';
export type { ChaosReport } from './report';

export { DEFAULT_OPTIONS, type ChaosOptions } from './options';

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
