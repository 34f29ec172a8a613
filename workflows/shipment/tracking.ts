/**
 * Step 3, tracking, driven by changes: one activity waits for the next change of tag, subtag,
 * tracking number or checkpoints, polling at the interval of the current stage; its retries are
 * the polls, so an unchanged poll adds no workflow task and no history event.
 */
import { CancellationScope, condition, isCancellation, patched } from '@temporalio/workflow';
import type { TrackingChange } from '../../activities/shipping-api';
import { type ShipmentOutcome } from '../../workflow-definitions/shipment';
import { NOT_REGISTERED_STAGE, outcomeOfTag } from '../../domain/shipment';
import { isChange } from '../../domain/tracking';
import { formatDuration } from '../../domain/duration';
import { followFleetTracking } from './fleet-tracking';
import { FLEET_TRACKING, TRACKING_TOLD_IN_ITS_TASK } from './patches';
import { recordError, shippingErrorOf, windowEnded } from './failures';
import { trackingApi } from './proxies';
import type { ShipmentRun } from './run';
import { applyTrackingChange, lastCheckpointOf, pollIntervalOf, snapshotOf } from './state';

/** Step 3 after change-driven tracking; `pollOnTimer` (legacy-tracking.ts) before it, `followFleetTracking` (fleet-tracking.ts) after it. */
export async function followTrackingChanges(run: ShipmentRun, labelId: string, deadline: number): Promise<ShipmentOutcome> {
  const { state, policy } = run;
  for (;;) {
    // Checked before each wait: a shipment waiting here when the fleet's pollers came moves over after its wait.
    if (patched(FLEET_TRACKING)) return await followFleetTracking(run, labelId, deadline);
    if (run.cancelRequest) return run.cancelledByOperator();
    const remaining = deadline - Date.now();
    if (remaining <= 0) return run.trackingTimedOut();
    run.publish();
    await run.continueAsNewIfDue();

    const stage = state.tag === null ? NOT_REGISTERED_STAGE : state.tag;
    const pollIntervalMs = pollIntervalOf(policy, state);
    // Awaited here, not in a helper: a command issued after it keeps its place beside the delivery coroutine's.
    const scope = new CancellationScope();
    run.trackingScope = scope;
    let change: TrackingChange;
    try {
      change = await scope.run(() =>
        trackingApi(`Await tracking change (${stage}, poll every ${formatDuration(pollIntervalMs)})`, remaining).awaitTrackingChange({
          labelId,
          known: snapshotOf(state),
          pollIntervalMs,
          pollsBefore: state.attempts.trackingPolls,
          ...run.accountField(),
        }),
      );
    } catch (err) {
      if (isCancellation(err)) return run.cancelledByOperator();
      if (windowEnded(err)) return run.trackingTimedOut();
      // A failure retrying cannot fix (e.g. 401): recorded, and tried again after one interval.
      const failure = shippingErrorOf(err);
      if (!failure) throw err;
      state.lastError = recordError(failure);
      run.publish();
      await condition(() => run.cancelRequest !== null, Math.max(1, Math.min(pollIntervalMs, deadline - Date.now())));
      continue;
    } finally {
      run.trackingScope = null;
    }
    // A wait handed over to the fleet's pollers may return no news (every other return is a change).
    if (isChange(snapshotOf(state), change)) applyChange(run, change);
    else state.attempts.trackingPolls += change.polls;
    if (state.tag !== null && policy.terminalTags.includes(state.tag))
      return run.finish(outcomeOfTag(state.tag), undefined, toldAt(run, change));
  }
}

/**
 * The time a change's shop event carries: the poll that saw it, so the event is built only from
 * recorded inputs and may be sent inside this task (patch TRACKING_TOLD_IN_ITS_TASK); undefined
 * (the task's clock, sent once the task is recorded) without a shop to tell or before the patch.
 */
export function toldAt(run: ShipmentRun, change: TrackingChange): string | undefined {
  if (!run.delivery.sync) return undefined;
  return patched(TRACKING_TOLD_IN_ITS_TASK) ? change.polledAt : undefined;
}

/** Applies a change; the shop hears of a new tag, subtag or a first tracking number. */
export function applyChange(run: ShipmentRun, change: TrackingChange): void {
  const { state } = run;
  const before = { tag: state.tag, subtag: state.subtag, trackingNumber: state.trackingNumber };
  applyTrackingChange(state, change);
  if (state.tag === before.tag && state.subtag === before.subtag && !(before.trackingNumber === null && state.trackingNumber !== null))
    return;
  run.emit(
    {
      type: 'tracking.updated',
      data: {
        tag: state.tag ?? 'Pending',
        subtag: state.subtag,
        subtagMessage: state.subtagMessage,
        trackingNumber: state.trackingNumber,
        lastCheckpoint: lastCheckpointOf(state),
      },
    },
    toldAt(run, change),
  );
}
