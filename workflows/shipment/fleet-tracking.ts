/**
 * Step 3, tracking polled per fleet (patch FLEET_TRACKING): the shipment joins a tracking poller
 * shard (workflows/tracking-poller/) with what it knows and its cadence, then waits for news. A
 * poll without news costs this workflow nothing at all; each change arrives as one signal, is
 * applied once (only news: domain/tracking.ts, `isNews`) and told to the shop in order. The
 * shipment keeps its own deadline (one timer for the run) and its own state; an operator's stop
 * or the deadline makes it leave the shard.
 */
import { CancellationScope, condition, isCancellation, setHandler, sleep } from '@temporalio/workflow';
import { type ShipmentOutcome } from '../definitions';
import { outcomeOfTag, type TrackingPolicy } from '../../domain/shipment';
import { isNews } from '../../domain/tracking';
import { trackingNewsSignal, type PollerCadence, type TrackingNews } from '../tracking-poller/definitions';
import { recordError } from './failures';
import { trackingPoller } from './proxies';
import type { ShipmentRun } from './run';
import { snapshotOf } from './state';
import { applyChange } from './tracking';

export async function followFleetTracking(run: ShipmentRun, labelId: string, deadline: number): Promise<ShipmentOutcome> {
  const { state, policy } = run;
  const inbox: TrackingNews[] = [];
  setHandler(trackingNewsSignal, (news) => void inbox.push(news));
  // Carried over a continue-as-new: the shard still has it.
  state.trackingPoller ??= (
    await trackingPoller('Join the tracking pollers').watchTracking({
      labelId,
      known: snapshotOf(state),
      cadence: cadenceOf(policy),
      deadline,
      // Its shard is one of its account's, and its label is polled with that account.
      ...run.accountField(),
    })
  ).poller;

  let outOfTime = false;
  const clock = new CancellationScope();
  clock
    .run(() => sleep(Math.max(1, deadline - Date.now())))
    .then(
      () => (outOfTime = true),
      () => undefined, // cancelled: tracking ended first
    );
  try {
    for (;;) {
      if (run.cancelRequest) return await leave(run, () => run.cancelledByOperator());
      if (outOfTime) return await leave(run, () => run.trackingTimedOut());
      const news = inbox.shift();
      if (news) {
        // The shard leaves a terminal label by itself.
        if (applyNews(run, news) && state.tag !== null && policy.terminalTags.includes(state.tag))
          return run.finish(outcomeOfTag(state.tag));
        continue;
      }
      run.publish();
      await run.continueAsNewIfDue();
      await condition(() => inbox.length > 0 || run.cancelRequest !== null || outOfTime);
    }
  } catch (err) {
    // A Temporal cancellation request: the shard is told before the shipment completes.
    if (isCancellation(err)) await CancellationScope.nonCancellable(() => unwatch(run));
    throw err;
  } finally {
    clock.cancel();
  }
}

/** Applies what the poller told, when it is news; true when the tracking changed. */
function applyNews(run: ShipmentRun, news: TrackingNews): boolean {
  if (news.failure) {
    run.state.lastError = recordError(news.failure);
    return false;
  }
  if (!news.change || !isNews(snapshotOf(run.state), news.change)) return false;
  applyChange(run, news.change);
  return true;
}

async function leave(run: ShipmentRun, finish: () => ShipmentOutcome): Promise<ShipmentOutcome> {
  await unwatch(run);
  return finish();
}

/** Best effort: a shard that misses it drops the label when telling it fails, or at its deadline. */
async function unwatch(run: ShipmentRun): Promise<void> {
  const poller = run.state.trackingPoller;
  if (poller) await trackingPoller('Leave the tracking pollers').unwatchTracking({ poller });
}

function cadenceOf(policy: TrackingPolicy): PollerCadence {
  return { pollIntervalMs: policy.pollIntervalMs, pollIntervalsMs: policy.pollIntervalsMs ?? {}, terminalTags: policy.terminalTags };
}
