/**
 * What a tracking poll is compared by, and what counts as a change: the one rule the shipment's
 * own wait (activities/shipping-api.ts), the fleet's pollers (activities/tracking-poller.ts) and the
 * shipment applying what a poller tells it (workflows/shipment/tracking.ts) share. Plain
 * values and pure functions only: the workflow bundle imports it.
 */
import type { Checkpoint, TrackingRecord } from '../shipping-api/contract';
import { NOT_REGISTERED_STAGE, type TrackingPolicy } from './shipment';

/** What the workflow last saw of tracking; a poll that differs from it is a change. */
export interface TrackingSnapshot {
  tag: string | null;
  subtag: string | null;
  trackingNumber: string | null;
  checkpoints: number;
  lastCheckpointTime: string | null;
}

/** A change, as small as the workflow needs it (not the whole checkpoint list). */
export interface TrackingChange extends TrackingSnapshot {
  subtagMessage: string | null;
  lastCheckpoint: Checkpoint | null;
  /** Polls it took to see it (the one that saw the change included). */
  polls: number;
  polledAt: string;
}

/** A poll's answer as a snapshot; null is a 404 (the courier has not registered the parcel). */
export function snapshotOfRecord(record: TrackingRecord | null): TrackingSnapshot {
  return {
    tag: record?.tag ?? null,
    subtag: record?.subtag ?? null,
    trackingNumber: record?.trackingNumber ?? null,
    checkpoints: record?.checkpoints.length ?? 0,
    lastCheckpointTime: record?.checkpoints.at(-1)?.checkpointTime ?? null,
  };
}

/**
 * A change is a new tag or subtag, a tracking number that appears or changes, or new
 * checkpoints. A number that disappears again (some couriers omit it on later answers) is not.
 */
export function isChange(known: TrackingSnapshot, seen: TrackingSnapshot): boolean {
  if (seen.tag === null) return false; // not registered (404): nothing new, even if it was before
  return (
    seen.tag !== known.tag ||
    seen.subtag !== known.subtag ||
    (seen.trackingNumber !== null && seen.trackingNumber !== known.trackingNumber) ||
    seen.checkpoints !== known.checkpoints ||
    seen.lastCheckpointTime !== known.lastCheckpointTime
  );
}

/**
 * Whether a change told by a poller is news to a shipment that knows `known`: a change, and not
 * older than what it knows (a courier's checkpoint list only grows, so an answer with fewer
 * checkpoints was seen before the one the shipment has). Applying only such news makes a change
 * told twice, or a late one, harmless.
 */
export function isNews(known: TrackingSnapshot, seen: TrackingSnapshot): boolean {
  return isChange(known, seen) && seen.checkpoints >= known.checkpoints;
}

/**
 * A terminal answer that `isNews` refuses for its checkpoint count (a courier that collapses the
 * list on delivery, a list fetched again shorter): it still ends tracking, since nothing follows
 * a terminal tag and the poller has already dropped the label. Only from a shipment not already
 * ended.
 */
export function isTerminalEnd(known: TrackingSnapshot, seen: TrackingSnapshot, terminalTags: readonly string[]): boolean {
  return (
    isChange(known, seen) &&
    seen.tag !== null &&
    terminalTags.includes(seen.tag) &&
    !(known.tag !== null && terminalTags.includes(known.tag))
  );
}

/** The interval of a stage: subtag, then tag, then the default. */
export function pollIntervalOf(
  policy: Pick<TrackingPolicy, 'pollIntervalMs' | 'pollIntervalsMs'>,
  stage: Pick<TrackingSnapshot, 'tag' | 'subtag'>,
): number {
  const byStage = policy.pollIntervalsMs ?? {};
  if (stage.tag === null) return byStage[NOT_REGISTERED_STAGE] ?? policy.pollIntervalMs;
  return (stage.subtag !== null ? byStage[stage.subtag] : undefined) ?? byStage[stage.tag] ?? policy.pollIntervalMs;
}

/**
 * When a label's next poll is due: an interval after this one was due, not after its answer, so a
 * turn the account's pace made late does not stretch the label's cadence (its polls keep one an
 * interval on average, and a worker with one label polling uses the share of the pace it is
 * given); but never sooner than half an interval after the answer, so a label that fell behind
 * (a hold, a worker down) is not polled twice at once, and no more than half an interval of
 * lateness is made up. A due time that is no time (progress carried from elsewhere) counts
 * from the answer: the label is never left with a next poll that never comes.
 */
export function nextPollDue(dueAt: number, answeredAt: number, intervalMs: number): number {
  const fromAnswer = answeredAt + intervalMs / 2;
  return Number.isFinite(dueAt) ? Math.max(dueAt + intervalMs, fromAnswer) : fromAnswer;
}

/** One line for a snapshot, as the Web UI and logs show a poll's result. */
export function describeTracking(seen: TrackingSnapshot): string {
  if (seen.tag === null) return 'not registered by the courier yet (404)';
  const subtag = seen.subtag ? ` (${seen.subtag})` : '';
  return `${seen.tag}${subtag}, ${seen.checkpoints} checkpoint(s), tracking number ${seen.trackingNumber ?? 'not assigned yet'}`;
}
