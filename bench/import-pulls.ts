/** Driving a shop's pull schedule from the bench: wait for the worker to apply it, and read a triggered pull's result. */
import { ScheduleNotFoundError, type Client } from '@temporalio/client';
import { shopPullScheduleId, type ShopPullResult } from '../workflow-definitions/shop-pull';
import { sleep } from './stack';

/** The worker applies the schedules at start. */
export async function schedulesReady(client: Client, shops: string[]): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (const shop of shops) {
    for (;;) {
      try {
        await client.schedule.getHandle(shopPullScheduleId(shop)).describe();
        break;
      } catch (err) {
        if (!(err instanceof ScheduleNotFoundError) || Date.now() > deadline) throw err;
        await sleep(250);
      }
    }
  }
}

/** The result of the shop's first pull taken at `since` or later; null when it failed. */
export async function pullResult(client: Client, shop: string, since: number): Promise<ShopPullResult | null> {
  const schedule = client.schedule.getHandle(shopPullScheduleId(shop));
  for (;;) {
    const action = (await schedule.describe()).info.recentActions.find((a) => a.takenAt.getTime() >= since)?.action.workflow;
    if (action) {
      try {
        return (await client.workflow.getHandle(action.workflowId, action.firstExecutionRunId).result()) as ShopPullResult;
      } catch {
        return null;
      }
    }
    await sleep(250);
  }
}
