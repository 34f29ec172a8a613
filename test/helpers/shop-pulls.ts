/** Starting a shop's pull by hand and reading its result, for tests of the shop import. */
import type { Client } from '@temporalio/client';
import { triggerPull } from '../../shop-import/schedule';
import { shopPullScheduleId, type ShopPullResult } from '../../workflow-definitions/shop-pull';
import { waitFor } from './wait';

/** Triggers the shop's schedule and waits for that pull's result (a failed pull rejects with WorkflowFailedError). */
export async function pullNow(client: Client, shop: string): Promise<ShopPullResult> {
  const since = Date.now();
  await triggerPull(client, shop);
  return waitForPull(client, shop, since);
}

/** The result of the shop's first pull taken at `since` or later (same host: one clock). */
export async function waitForPull(client: Client, shop: string, since: number): Promise<ShopPullResult> {
  const schedule = client.schedule.getHandle(shopPullScheduleId(shop));
  const run = await waitFor(
    async () => (await schedule.describe()).info.recentActions.find((a) => a.takenAt.getTime() >= since)?.action.workflow,
    { what: `a new pull of ${shop}`, timeoutMs: 30_000, intervalMs: 100 },
  );
  return (await client.workflow.getHandle(run.workflowId, run.firstExecutionRunId).result()) as ShopPullResult;
}
