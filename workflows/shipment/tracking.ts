/**
 * Step 3, tracking, polled per fleet: the shipment joins a tracking poller shard
 * (workflows/tracking-poller/) with what it knows and its cadence, then waits for news. A poll
 * without news costs this workflow nothing at all; each change arrives as one signal, is applied
 * once (only news: domain/tracking.ts, `isNews`) and told to the shop in order. The shipment
 * keeps its own deadline (one timer for the run) and its own state; an operator's stop or the
 * deadline makes it leave the shard. An operator's relabel (relabel.ts) moves it to the new
 * label's membership; from then on only that label's news counts.
 */
import { CancellationScope, condition, isCancellation, setHandler, sleep } from '@temporalio/workflow';
import type { TrackingChange } from '../../activities/shipping-api';
import { type ShipmentOutcome } from '../../workflow-definitions/shipment';
import { outcomeOfTag, type TrackingPolicy } from '../../domain/shipment';
import { endsTracking, takesNews } from '../../domain/shipment-machine/tracking';
import {
  rejoinTrackingSignal,
  trackingNewsSignal,
  type PollerCadence,
  type TrackingNews,
} from '../../workflow-definitions/tracking-poller';
import { recordError } from './failures';
import { trackingPoller } from './proxies';
import type { ShipmentShell } from './shell';
import { applyTrackingChange, lastCheckpointOf, snapshotOf } from './state';

export async function followTracking(run: ShipmentShell, labelId: string, deadline: number): Promise<ShipmentOutcome> {
  const { state, policy } = run;
  const inbox: TrackingNews[] = [];
  setHandler(trackingNewsSignal, (news) => void inbox.push(news));
  // The reconciler found no live shard watching it (the shard terminated, reset, failed or deleted).
  let rejoinAsked = false;
  setHandler(rejoinTrackingSignal, () => void (rejoinAsked = true));
  // Carried over a continue-as-new: the shard still has it (or the reconciler says otherwise).
  state.trackingPoller ??= (await join(run, labelId, deadline)).poller;

  let until = deadline;
  let clock = startClock(deadline);
  try {
    for (;;) {
      // An operator's relabel (relabel.ts) moved the shipment to a new label and shard: its own deadline, only its news.
      if (state.labelId !== labelId && state.labelId !== null) {
        labelId = state.labelId;
        clock.cancel();
        until = Date.parse(state.trackingStartedAt!) + policy.maxTrackingMs;
        clock = startClock(until);
        inbox.splice(0, inbox.length, ...inbox.filter((news) => news.labelId === labelId));
      }
      if (run.cancelRequest) return await leave(run, () => run.cancelledByOperator());
      if (clock.outOfTime) return await leave(run, () => run.trackingTimedOut());
      if (rejoinAsked && !run.relabelling) {
        rejoinAsked = false;
        await rejoin(run, labelId, until);
        continue;
      }
      const news = inbox.shift();
      if (news) {
        // The shard leaves a terminal label by itself.
        if (applyNews(run, news) && endsTracking(state.tag, policy.terminalTags))
          return run.finish(outcomeOfTag(state.tag), undefined, toldAt(run, news.change!));
        continue;
      }
      run.publish();
      await run.continueAsNewIfDue();
      // While a relabel is being made, the old label's news and the clock wait: the new label settles first.
      await condition(
        () =>
          !run.relabelling &&
          (inbox.length > 0 || run.cancelRequest !== null || clock.outOfTime || state.labelId !== labelId || rejoinAsked),
      );
    }
  } catch (err) {
    // A Temporal cancellation request: the shard is told before the shipment completes.
    if (isCancellation(err)) await CancellationScope.nonCancellable(() => unwatch(run));
    throw err;
  } finally {
    clock.cancel();
  }
}

/** The tracking deadline as one timer of the run; `outOfTime` once it fired. */
function startClock(deadline: number): { outOfTime: boolean; cancel(): void } {
  const scope = new CancellationScope();
  const clock = { outOfTime: false, cancel: () => scope.cancel() };
  scope
    .run(() => sleep(Math.max(1, deadline - Date.now())))
    .then(
      () => (clock.outOfTime = true),
      () => undefined, // cancelled: tracking ended first
    );
  return clock;
}

/** The shipment's label joins its shard (started if it is not running); returns the shard's workflow id. */
export function join(run: ShipmentShell, labelId: string, deadline: number): Promise<{ poller: string }> {
  return trackingPoller('Join the tracking pollers').watchTracking({
    labelId,
    known: snapshotOf(run.state),
    cadence: cadenceOf(run.policy),
    deadline,
    // Its shard is one of its account's, and its label is polled with that account.
    ...run.accountField(),
  });
}

/**
 * Joins again with what it knows now: its own shard if that is running again, or the next one
 * with room. A shard it leaves behind (one still running after all) is told, so it is polled once.
 */
async function rejoin(run: ShipmentShell, labelId: string, deadline: number): Promise<void> {
  const before = run.state.trackingPoller;
  run.state.trackingPoller = (await join(run, labelId, deadline)).poller;
  if (before && before !== run.state.trackingPoller) await trackingPoller('Leave the tracking pollers').unwatchTracking({ poller: before });
}

/** Applies what the poller told, when it is news; true when the tracking changed. */
function applyNews(run: ShipmentShell, news: TrackingNews): boolean {
  if (news.failure) {
    run.state.lastError = recordError(news.failure);
    return false;
  }
  // News of a label the shipment no longer follows (replaced by a relabel) changes nothing.
  if (news.labelId !== undefined && news.labelId !== run.state.labelId) return false;
  if (!news.change) return false;
  const known = snapshotOf(run.state);
  // The shipment machine decides what is taken (a terminal answer whatever its checkpoint count).
  if (!takesNews(known, news.change, run.policy.terminalTags)) return false;
  applyChange(run, news.change);
  return true;
}

async function leave(run: ShipmentShell, finish: () => ShipmentOutcome): Promise<ShipmentOutcome> {
  await unwatch(run);
  return finish();
}

/** Best effort: a shard that misses it drops the label when telling it fails, or at its deadline. */
export async function unwatch(run: ShipmentShell): Promise<void> {
  const poller = run.state.trackingPoller;
  if (poller) await trackingPoller('Leave the tracking pollers').unwatchTracking({ poller });
}

function cadenceOf(policy: TrackingPolicy): PollerCadence {
  return { pollIntervalMs: policy.pollIntervalMs, pollIntervalsMs: policy.pollIntervalsMs ?? {}, terminalTags: policy.terminalTags };
}

/**
 * The time a change's shop event carries: the poll that saw it, so the event is built only from
 * recorded inputs and may be sent inside this task (event-tasks.ts); undefined without a shop to tell.
 */
export function toldAt(run: ShipmentShell, change: TrackingChange): string | undefined {
  return run.delivery.sync ? change.polledAt : undefined;
}

/** Applies a change; the shop hears of a new tag, subtag or a first tracking number. */
export function applyChange(run: ShipmentShell, change: TrackingChange): void {
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
