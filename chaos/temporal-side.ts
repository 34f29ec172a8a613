/** What the chaos run does and asks on our side: the real import CLI, and where each shipment stands. */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import type { Client } from '@temporalio/client';
import { SA, stateQuery } from '../workflow-definitions/shipment';
import { shipmentWorkflowId } from '../domain/shipment';
import type { ShipmentCounts } from './checks';
import { ROOT, SHOP } from './orders';

/**
 * Finished = workflow completed; waiting = running in awaiting_correction (the `state` query);
 * stuck = anything else (still in another phase, failed, terminated, never started).
 */
export async function shipmentCounts(client: Client, orderIds: readonly string[], o: { quick: boolean }): Promise<ShipmentCounts> {
  const counts: ShipmentCounts = { finished: 0, waiting: 0, stuck: 0, stuckOrders: [], lastFinishedAt: null };
  const queue = [...orderIds];
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let orderId = queue.shift(); orderId !== undefined; orderId = queue.shift()) {
        const handle = client.workflow.getHandle(shipmentWorkflowId({ shop: SHOP, orderId }));
        let verdict: 'finished' | 'waiting' | 'stuck' = 'stuck';
        try {
          const description = await handle.describe();
          if (description.status.name === 'COMPLETED') {
            verdict = 'finished';
            const closed = description.closeTime?.getTime() ?? null;
            if (closed !== null && closed > (counts.lastFinishedAt ?? 0)) counts.lastFinishedAt = closed;
          } else if (description.status.name === 'RUNNING') {
            // While settling, the search attribute is enough; the final count asks the workflow itself.
            const phase = o.quick ? description.typedSearchAttributes.get(SA.status) : (await handle.query(stateQuery)).phase;
            if (phase === 'awaiting_correction') verdict = 'waiting';
          }
        } catch {
          verdict = 'stuck'; // not found, or not answering
        }
        if (verdict === 'finished') counts.finished += 1;
        else if (verdict === 'waiting') counts.waiting += 1;
        else {
          counts.stuck += 1;
          counts.stuckOrders.push(orderId);
        }
      }
    }),
  );
  counts.stuckOrders.sort();
  return counts;
}

/** One run of the real import CLI; its output goes to the log file (checked for credentials). */
export async function runImport(
  file: string,
  env: NodeJS.ProcessEnv,
  logFile: string,
): Promise<{ exitCode: number | null; counts: unknown }> {
  const exec = promisify(execFile);
  let stdout: string;
  let stderr: string;
  let exitCode: number | null = 0;
  try {
    ({ stdout, stderr } = await exec(process.execPath, ['--import', 'tsx', 'client/import/main.ts', file, '--json', '--skip-preflight'], {
      cwd: ROOT,
      env: { PAYLOAD_ENCRYPTION: 'off', ...env }, // the chaos run's workers have no keys
      maxBuffer: 64 * 1024 * 1024,
      timeout: 120_000,
    }));
  } catch (e) {
    const failed = e as { code?: number | string; stdout?: string; stderr?: string };
    exitCode = typeof failed.code === 'number' ? failed.code : null;
    stdout = failed.stdout ?? '';
    stderr = failed.stderr ?? '';
  }
  writeFileSync(logFile, `--- import at ${new Date().toISOString()} exit ${exitCode}\n${stdout}\n${stderr}\n`, { flag: 'a' });
  let counts: unknown = null;
  try {
    counts = (JSON.parse(stdout) as { counts: unknown }).counts;
  } catch {
    // not JSON: counts stay null
  }
  return { exitCode, counts };
}
