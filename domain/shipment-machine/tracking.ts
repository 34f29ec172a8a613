/**
 * Tracking told by a shard: news of the label followed is applied once; a terminal tag ends the
 * shipment whatever its checkpoint count (the shard has dropped the label); a lost membership
 * joins again; the deadline ends it. While a relabel is made, all of it waits (relabel.ts).
 */
import { outcomeOfTag } from '../shipment';
import { isNews, isTerminalEnd, type TrackingSnapshot } from '../tracking';
import type { ShipmentEvent } from './events';
import type { TrackingChangeIn } from './state';
import { finish, leaveAndFinish, startDeadline, tell, type Step } from './step';
import { tracks } from './transitions';

type Ev<R, T extends ShipmentEvent<R>['type']> = Extract<ShipmentEvent<R>, { type: T }>;

/** Tracking starts: the shop hears of the label (and which it replaces), the shipment joins a shard, its clock runs. */
export function trackingBegins<R>(step: Step<R>, labelId: string, replaces?: string): void {
  const { s } = step;
  tracks(s);
  tell(step, { type: 'label.created', ...(replaces ? { replaces } : {}) });
  s.watching = labelId;
  step.out.push({ type: 'watchTracking', labelId });
  startDeadline(step, 'tracking');
}

export function trackingNews<R>(step: Step<R>, e: Ev<R, 'trackingNews'>): void {
  const { s } = step;
  if (s.relabel) {
    s.deferred.news.push({ labelId: e.labelId, change: e.change, failed: e.failed });
    return;
  }
  if (s.phase !== 'tracking') return;
  applyNews(step, e.labelId, e.change, e.failed);
}

/** Applies what a shard told, when it is news of the label followed; ends the shipment on a terminal tag. */
export function applyNews<R>(step: Step<R>, labelId: string, change: TrackingChangeIn | null, failed: boolean): void {
  const { s } = step;
  // News of a label the shipment no longer follows (replaced by a relabel) changes nothing.
  if (labelId !== s.labelId) return;
  if (failed) {
    s.lastError = 'tracking_failed';
    return;
  }
  if (!change) return;
  const known = s.tracking;
  const terminalTags = s.config.terminalTags;
  if (!takesNews(known, change, terminalTags)) return;
  const before = { tag: known.tag, subtag: known.subtag, trackingNumber: known.trackingNumber };
  s.tracking = {
    tag: change.tag,
    subtag: change.subtag,
    subtagMessage: change.subtagMessage ?? null,
    trackingNumber: change.trackingNumber ?? known.trackingNumber,
    checkpoints: change.checkpoints,
    lastCheckpointTime: change.lastCheckpointTime ?? known.lastCheckpointTime,
  };
  s.lastError = null;
  const now = s.tracking;
  if (now.tag !== before.tag || now.subtag !== before.subtag || (before.trackingNumber === null && now.trackingNumber !== null))
    tell(step, { type: 'tracking.updated' });
  // The shard leaves a terminal label by itself.
  if (endsTracking(now.tag, terminalTags)) {
    s.watching = null;
    finish(step, outcomeOfTag(now.tag), `tracking reached ${now.tag}`);
  }
}

/**
 * Whether a shard's change is taken: news by checkpoint count (domain/tracking.ts, `isNews`), or a
 * terminal answer whatever its count (the shard has dropped the label: nothing would come again).
 */
export function takesNews(known: TrackingSnapshot, change: TrackingSnapshot, terminalTags: readonly string[]): boolean {
  return isNews(known, change) || isTerminalEnd(known, change, terminalTags);
}

/** A terminal tag ends tracking. */
export function endsTracking(tag: string | null, terminalTags: readonly string[]): tag is string {
  return tag !== null && terminalTags.includes(tag);
}

export function trackingLost<R>(step: Step<R>): void {
  const { s } = step;
  if (s.relabel) {
    s.deferred.lost = true;
    return;
  }
  if (s.phase === 'tracking') rejoin(step);
}

/** Joins again with what it knows now (the workflow leaves a shard it had, if the new one differs). */
export function rejoin<R>(step: Step<R>): void {
  const labelId = step.s.labelId!;
  step.s.watching = labelId;
  step.out.push({ type: 'watchTracking', labelId });
}

export function trackingTimedOut<R>(step: Step<R>, wait: number): void {
  const { s } = step;
  if (s.relabel) {
    s.deferred.deadline = wait;
    return;
  }
  if (s.phase === 'tracking') leaveAndFinish(step, 'tracking_timed_out', 'no terminal tag within the tracking time');
}
