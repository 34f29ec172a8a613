/**
 * The fleet's tracking pollers: what a shipment and its poller tell each other. A shipment in
 * tracking is watched by one poller shard (a long-lived workflow per shard and task queue), whose
 * span activity polls every label of the shard on its stage's cadence and tells a shipment only
 * what changed. Plain types and values (part of the workflow bundle).
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { FailureDetails } from '../../activities/failures';
import type { TrackingChange, TrackingSnapshot } from '../../domain/tracking';
import { DEFAULT_SHIPPING_ACCOUNT } from '../../domain/shipment';

export const TRACKING_POLLER_WORKFLOW_TYPE = 'trackingPollerWorkflow';

/** How a shipment's label is polled: the policy's cadence and where tracking ends. */
export interface PollerCadence {
  pollIntervalMs: number;
  pollIntervalsMs: Record<string, number>;
  terminalTags: string[];
}

/** A shipment asking to be watched (sent by the `watchTracking` local activity with signal-with-start). */
export interface WatchRequest {
  /** The shipment's workflow id: where news goes, and the member's key. */
  workflowId: string;
  labelId: string;
  /** What the shipment knows: a poll that differs from it is news. */
  known: TrackingSnapshot;
  cadence: PollerCadence;
  /** Epoch ms: the shipment's tracking ends then; the poller drops the label. */
  deadline: number;
  /** The shipment's shipping account (its name, never credentials); absent: `default`. */
  account?: string;
  /**
   * This joining, unique within the shipment's run (its run id and the joining call's activity
   * id): with `told`, it makes each news signal's request id
   * unique, so a state the tracking returns to is told again.
   */
  membership?: string;
}

/** A label as its shard keeps it between spans (carried over continue-as-new). */
export interface WatchedLabel {
  workflowId: string;
  labelId: string;
  known: TrackingSnapshot;
  /** Index into the shard's cadences (most shipments share one). */
  cadence: number;
  deadline: number;
  /** The shipping account the label is polled with; absent: `default`. */
  account?: string;
  /** Epoch ms of the next poll. */
  nextPollAt: number;
  /** Polls since the shipment was last told something. */
  polls: number;
  /** API failures in a row (backoff), and the kind of the last failure told (told once). */
  failures: number;
  failureTold: string | null;
  /** The joining this membership came from (`WatchRequest.membership`). */
  membership?: string;
  /** News told in this membership (absent: none): part of each news signal's request id. */
  told?: number;
}

/**
 * What a span did to a label: the fields it moves (the rest the shard keeps as it is). Named by
 * label too: a shipment relabelled meanwhile
 * joined again with its new label, which the old label's progress must not touch.
 */
export type LabelProgress = Pick<WatchedLabel, 'workflowId' | 'known' | 'nextPollAt' | 'polls' | 'failures' | 'failureTold'> & {
  labelId?: string;
  told?: number;
};

export interface PollerInput {
  members: WatchedLabel[];
  cadences: PollerCadence[];
}

/** What one span of polling returns to its shard. */
export interface SpanResult {
  progress: LabelProgress[];
  /** Delivered (terminal), past their deadline, or their shipment is gone. */
  dropped: string[];
  /**
   * The label each of `dropped` was dropped for, in the same order: a shipment that joined again
   * with a new label meanwhile stays.
   */
  droppedLabels?: string[];
  stats: SpanStats;
}

export interface SpanStats {
  polls: number;
  told: number;
  /** Heartbeats the span asked for (the SDK sends at most these; each one sent is a billed action on Temporal Cloud). */
  heartbeats: number;
}

/**
 * What a poller tells a shipment: a change of its tracking, or a failure retrying cannot fix
 * (told once per kind). Applied only when it is news (domain/tracking.ts, `isNews`), so a change
 * told twice or late changes nothing.
 */
export interface TrackingNews {
  /** The label polled: news of a label the shipment replaced is dropped. */
  labelId?: string;
  change?: TrackingChange;
  failure?: FailureDetails;
}

export const watchTrackingSignal = defineSignal<[WatchRequest]>('watchTracking');

/** How many labels, and how many bytes of continue-as-new input, a shard takes before it refuses a new one. */
export interface ShardBound {
  maxLabels: number;
  maxBytes: number;
}

/** A shipment joining with the bound of the worker that joins it: a full shard refuses (its validator), and the next one is tried. */
export type JoinRequest = WatchRequest & { bound: ShardBound };
export const joinTrackingUpdate = defineUpdate<void, [JoinRequest]>('joinTracking');
/** The failure type of a join a full shard refused. */
export const SHARD_FULL = 'TrackingShardFull';

/** Who a shard watches, and the size of its continue-as-new input: for the reconciler and its metrics. */
export interface ShardMembers {
  members: Array<{ workflowId: string; labelId: string }>;
  bytes: number;
}
export const shardMembersQuery = defineQuery<ShardMembers>('trackingMembers');

/**
 * To the shipment: its shard does not have it (terminated, reset, failed or deleted, or it lost
 * the label): join again. Sent by the tracking reconciler (activities/tracking-reconciler.ts).
 */
export const rejoinTrackingSignal = defineSignal<[{ reason: string }]>('rejoinTracking');
export const unwatchTrackingSignal = defineSignal<[{ workflowId: string }]>('unwatchTracking');
/** To the shipment. */
export const trackingNewsSignal = defineSignal<[TrackingNews]>('trackingNews');

/**
 * The shard's workflow id: one set of shards per task queue and shipping account (its span
 * activities run on that queue, beside the shipments, through that account's pacer). The
 * account `default` has the plain ids; a named account's come after a `/`, which the encoded
 * queue never holds.
 */
export function trackingPollerId(taskQueue: string, shard: number, account?: string): string {
  const queue = encodeURIComponent(taskQueue);
  return account === undefined || account === DEFAULT_SHIPPING_ACCOUNT
    ? `tracking-poller-${queue}-${shard}`
    : `tracking-poller-${queue}/${account}-${shard}`;
}

/**
 * The shard a shipment tries at its `attempt`-th try (0 first): its own shard, then the next ones
 * of the set around, then overflow shards past the set (ids `shards`, `shards + 1`, …), so every
 * worker with the same settings tries the same shards in the same order.
 */
export function shardProbe(workflowId: string, shards: number, attempt: number): number {
  const count = Math.max(1, shards);
  return attempt < count ? (shardOf(workflowId, count) + attempt) % count : attempt;
}

/** The shard of a shipment: FNV-1a of its workflow id, so the same shipment always lands on the same shard. */
export function shardOf(workflowId: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < workflowId.length; i++) {
    hash ^= workflowId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % Math.max(1, shards);
}
