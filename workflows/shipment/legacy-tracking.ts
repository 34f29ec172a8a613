/**
 * Patch CHANGE_DRIVEN_TRACKING: the timer loop of workflows recorded before change-driven
 * tracking, one poll activity and one timer per poll. A run recorded with it replays its polls
 * here, then switches to change-driven tracking at its next poll (`ShipmentRun.ship` checks the
 * patch every time round).
 *
 * Fixtures that exercise it: terminal-delivered, terminal-exception, terminal-cancelled,
 * rate-limited, server-errors, courier-rejection-resubmit, label-abandoned, cancelled-by-operator,
 * continued-as-new, delivered-with-queries, and migrated-timer-loop-to-change-driven.
 *
 * Retiring it, as the SDK's patching sample goes from v3 to vFinal: once no workflow started
 * before the patch is open (list them with `WorkflowType="shipmentWorkflow" AND
 * ExecutionStatus="Running"` and a start time before the release that added it), replace
 * `patched(CHANGE_DRIVEN_TRACKING)` with `deprecatePatch(CHANGE_DRIVEN_TRACKING)` and remove this
 * file and the fixtures above; once no open workflow carries the patch marker, remove the
 * `deprecatePatch` call too.
 */
import { condition } from '@temporalio/workflow';
import { type ShipmentOutcome } from '../../workflow-definitions/shipment';
import { outcomeOfTag } from '../../domain/shipment';
import { recordError, shippingErrorOf } from './failures';
import { shippingApi } from './proxies';
import type { ShipmentRun } from './run';
import { applyTracking } from './state';

/** One poll and the wait for the next; returns the outcome once tracking is over. */
export async function pollOnTimer(run: ShipmentRun, labelId: string, deadline: number): Promise<ShipmentOutcome | undefined> {
  const { state, policy } = run;
  state.attempts.trackingPolls++;
  try {
    const record = await shippingApi(`Poll tracking #${state.attempts.trackingPolls}`).getTracking(labelId);
    if (record) applyTracking(state, record);
  } catch (err) {
    // A poll that failed after its retries is recorded; the next poll may succeed.
    const failure = shippingErrorOf(err);
    if (!failure) throw err;
    state.lastError = recordError(failure);
  }
  if (state.tag !== null && policy.terminalTags.includes(state.tag)) return run.finish(outcomeOfTag(state.tag));
  const remaining = deadline - Date.now();
  if (remaining <= 0) return run.trackingTimedOut();
  run.publish();
  await run.continueAsNewIfDue();
  await condition(() => run.cancelRequest !== null, Math.min(policy.pollIntervalMs, remaining));
  return undefined;
}
