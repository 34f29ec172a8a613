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
import { type TrackingPolicy } from '../../domain/shipment';
import {
  rejoinTrackingSignal,
  trackingNewsSignal,
  type PollerCadence,
  type TrackingNews,
} from '../../workflow-definitions/tracking-poller';
import { recordError } from './failures';
import { trackingPoller } from './proxies';
import type { Machine, ShipmentShell } from './shell';
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
  let clock = startClock(deadline, run.machine.wait);
  try {
    for (;;) {
      // An operator's relabel (relabel.ts) moved the shipment to a new label and shard: its own deadline, only its news.
      if (state.labelId !== labelId && state.labelId !== null) {
        labelId = state.labelId;
        clock.cancel();
        until = Date.parse(state.trackingStartedAt!) + policy.maxTrackingMs;
        clock = startClock(until, run.machine.wait);
        inbox.splice(0, inbox.length, ...inbox.filter((news) => news.labelId === labelId));
      }
      // What the machine decided meanwhile: an operator's stop, or what a relabel held back.
      let ended = await carryOut(run, labelId, until);
      if (ended) return ended;
      if (clock.outOfTime && !clock.told) {
        clock.told = true;
        run.decide({ type: 'deadlinePassed', deadline: 'tracking', wait: clock.wait });
        ended = await carryOut(run, labelId, until);
        if (ended) return ended;
        continue;
      }
      if (rejoinAsked && !run.relabelling) {
        rejoinAsked = false;
        run.decide({ type: 'trackingLost' });
        ended = await carryOut(run, labelId, until);
        if (ended) return ended;
        continue;
      }
      const news = inbox.shift();
      if (news) {
        ended = await takeNews(run, news, labelId, until);
        if (ended) return ended;
        continue;
      }
      run.publish();
      await run.continueAsNewIfDue();
      // While a relabel is being made, the old label's news and the clock wait: the new label settles first.
      await condition(
        () =>
          !run.relabelling &&
          (inbox.length > 0 || run.commandsWaiting || (clock.outOfTime && !clock.told) || state.labelId !== labelId || rejoinAsked),
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

/**
 * What a shard told, decided by the machine: news of the label followed is applied once (a
 * terminal answer whatever its checkpoint count), and a terminal tag ends the shipment. A failed
 * poll is recorded.
 */
async function takeNews(run: ShipmentShell, news: TrackingNews, labelId: string, until: number): Promise<ShipmentOutcome | undefined> {
  const { state } = run;
  if (news.failure) state.lastError = recordError(news.failure);
  const change = news.change ?? null;
  const before = run.machine.tracking;
  run.decide({
    type: 'trackingNews',
    labelId: news.labelId ?? labelId,
    change: change && {
      tag: change.tag,
      subtag: change.subtag,
      subtagMessage: change.subtagMessage,
      trackingNumber: change.trackingNumber,
      checkpoints: change.checkpoints,
      lastCheckpointTime: change.lastCheckpointTime,
    },
    failed: news.failure !== undefined && news.failure !== null,
  });
  // Taken: the machine's tracking moved on, and the workflow's follows (polls, checkpoint, time).
  if (change && !sameTracking(before, run.machine.tracking)) applyTrackingChange(state, change);
  return carryOut(run, labelId, until, change ?? undefined);
}

const sameTracking = (a: Machine['tracking'], b: Machine['tracking']): boolean =>
  a.tag === b.tag &&
  a.subtag === b.subtag &&
  a.subtagMessage === b.subtagMessage &&
  a.trackingNumber === b.trackingNumber &&
  a.checkpoints === b.checkpoints &&
  a.lastCheckpointTime === b.lastCheckpointTime;

/**
 * Carries out the machine's tracking commands in their order: leave or join the shard, tell the
 * shop, finish (returns the outcome). A relabel's own commands are carried out by relabel.ts, and
 * the deadline is this loop's clock.
 */
async function carryOut(run: ShipmentShell, labelId: string, until: number, change?: TrackingChange): Promise<ShipmentOutcome | undefined> {
  for (const c of run.takeCommands()) {
    switch (c.type) {
      case 'unwatchTracking':
        await unwatch(run);
        break;
      case 'watchTracking':
        await rejoin(run, labelId, until);
        break;
      case 'tellShop':
        // `shipment.completed` is told by the finish that follows it.
        if (c.event.type === 'tracking.updated') tellTracking(run, change);
        break;
      case 'finish':
        if (c.outcome === 'cancelled_by_operator') return run.cancelledByOperator();
        if (c.outcome === 'tracking_timed_out') return run.trackingTimedOut();
        // The shard leaves a terminal label by itself.
        return run.finish(c.outcome, undefined, change && toldAt(run, change));
      default:
        break;
    }
  }
  return undefined;
}

interface Clock {
  /** The machine's wait it ends (a deadline of an older wait is stale). */
  wait: number;
  outOfTime: boolean;
  /** Its end was fed to the machine. */
  told: boolean;
  cancel(): void;
}

/** The tracking deadline as one timer of the run; `outOfTime` once it fired. */
function startClock(deadline: number, wait: number): Clock {
  const scope = new CancellationScope();
  const clock: Clock = { wait, outOfTime: false, told: false, cancel: () => scope.cancel() };
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

/** The shop hears of a new tag, subtag or a first tracking number (the machine decides when). */
function tellTracking(run: ShipmentShell, change: TrackingChange | undefined): void {
  const { state } = run;
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
    change && toldAt(run, change),
  );
}
