/**
 * The fleet's tracking pollers, worker side: a shipment joins its shard (`watchTracking`) and
 * leaves it (`unwatchTracking`), both signals sent from a local activity; a shard's span
 * (`pollTrackingSpan`, tracking-poller/span.ts) polls its labels and tells the shipments what changed.
 * The shard count and the span length are the worker's settings (TRACKING_POLLERS,
 * TRACKING_POLLER_SPAN); the clients and the credentials stay here, one per shipping account
 * (shipping-accounts/directory.ts): a shipment joins a shard of its own account, and each label is
 * polled with its own account's client and pacer.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import {
  WithStartWorkflowOperation,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import {
  joinTrackingUpdate,
  SHARD_FULL,
  shardProbe,
  TRACKING_POLLER_WORKFLOW_TYPE,
  trackingPollerId,
  unwatchTrackingSignal,
  watchTrackingSignal,
  type JoinRequest,
  type ShardBound,
  type SpanResult,
  type WatchRequest,
} from '../workflow-definitions/tracking-poller';
import { TrackingSpan, TRACKING_SHARD_BOUND, type TrackingPollerDeps, type TrackingPollerSettings } from '../tracking-poller/span';
import { DEFAULT_SHIPPING_ACCOUNT } from '../domain/shipment';

export type { TrackingPollerDeps, TrackingPollerSettings } from '../tracking-poller/span';

export function createTrackingPollerActivities(deps: TrackingPollerDeps) {
  return {
    /**
     * The calling shipment joins its shard, one of its account's (started if it is not running);
     * returns the shard's workflow id.
     */
    async watchTracking(request: Omit<WatchRequest, 'workflowId'>): Promise<{ poller: string }> {
      const { info } = Context.current();
      const workflowId = callerOf(info);
      const taskQueue = deps.taskQueue ?? info.taskQueue;
      const membership = `${info.workflowExecution?.runId ?? ''}:${info.activityId}`;
      const join: JoinRequest = { ...request, workflowId, membership, bound: boundOf(deps.settings) };
      // Its own shard first; a full one refuses (the shard's validator) and the next is tried.
      for (let attempt = 0; attempt < deps.settings.shards + MAX_OVERFLOW_SHARDS; attempt++) {
        const shard = shardProbe(workflowId, deps.settings.shards, attempt);
        const poller = trackingPollerId(taskQueue, shard, request.account);
        if (await joinShard(deps, { poller, taskQueue, join, summary: summaryOf(shard, deps.settings.shards, taskQueue, request.account) }))
          return { poller };
      }
      throw ApplicationFailure.retryable(
        `every tracking shard is full (${deps.settings.shards} shards and ${MAX_OVERFLOW_SHARDS} overflow shards of ${join.bound.maxLabels} labels): raise TRACKING_POLLERS`,
        SHARD_FULL,
      );
    },

    /** The calling shipment leaves its shard (stopped by an operator, or out of time). A shard already gone is fine. */
    async unwatchTracking({ poller }: { poller: string }): Promise<void> {
      const workflowId = callerOf(Context.current().info);
      try {
        await deps.client.workflow.getHandle(poller).signal(unwatchTrackingSignal, { workflowId });
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    },

    /** One span of the calling shard: see tracking-poller/span.ts. */
    async pollTrackingSpan(): Promise<SpanResult> {
      return new TrackingSpan(deps, Context.current()).run();
    },
  };
}

/** Shards past TRACKING_POLLERS a join may overflow to before it fails (and is retried). */
const MAX_OVERFLOW_SHARDS = 64;

function boundOf(settings: TrackingPollerSettings): ShardBound {
  return {
    maxLabels: settings.maxLabels ?? TRACKING_SHARD_BOUND.maxLabels,
    maxBytes: settings.maxBytes ?? TRACKING_SHARD_BOUND.maxBytes,
  };
}

function summaryOf(shard: number, shards: number, taskQueue: string, account: string | undefined): string {
  const overflow = shard >= shards ? ' (overflow)' : '';
  return `Tracking poller: shard ${shard} of ${shards}${overflow} on task queue ${taskQueue}, account ${account ?? DEFAULT_SHIPPING_ACCOUNT}`;
}

/**
 * Joins one shard (started if it is not running): false when it is full. A shard whose worker
 * runs code from before the bound (no such update) is joined by signal, as before.
 */
async function joinShard(
  deps: TrackingPollerDeps,
  { poller, taskQueue, join, summary }: { poller: string; taskQueue: string; join: JoinRequest; summary: string },
): Promise<boolean> {
  const start = { workflowId: poller, taskQueue, args: [] as [], staticSummary: summary };
  try {
    // The update waits for the shard's workflow task: a shard whose task does not run soon (its
    // workers draining or saturated) is joined by signal instead, so a shipment's task never waits on it.
    await deps.client.withDeadline(Date.now() + JOIN_UPDATE_TIMEOUT_MS, () =>
      deps.client.workflow.executeUpdateWithStart(joinTrackingUpdate, {
        args: [join],
        // The same joining asks each shard under one id: a retried attempt is not applied twice.
        updateId: `${join.membership}@${poller}`,
        startWorkflowOperation: new WithStartWorkflowOperation(TRACKING_POLLER_WORKFLOW_TYPE, {
          ...start,
          workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      }),
    );
    return true;
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      if (err.cause instanceof ApplicationFailure && err.cause.type === SHARD_FULL) return false;
      if (!isUnknownUpdate(err.cause)) throw err;
    } else if (!(err instanceof WorkflowUpdateRPCTimeoutOrCancelledError || isDeadlineExceeded(err))) throw err;
  }
  const { bound: _bound, ...watch } = join;
  await deps.client.workflow.signalWithStart(TRACKING_POLLER_WORKFLOW_TYPE, {
    ...start,
    signal: watchTrackingSignal,
    signalArgs: [watch],
  });
  return true;
}

/** How long a join waits for the shard to take or refuse it before it joins by signal. */
const JOIN_UPDATE_TIMEOUT_MS = 5_000;

function isDeadlineExceeded(err: unknown): boolean {
  return (err as { code?: number })?.code === 4; // gRPC DEADLINE_EXCEEDED
}

/** A shard's worker runs code without the join update (a rollout under way). */
function isUnknownUpdate(cause: Error | undefined): boolean {
  return /unknown update|no.*handler/i.test(cause?.message ?? '');
}

/** The workflow that called: the shipment joining or leaving. */
function callerOf(info: Context['info']): string {
  const workflowId = info.workflowExecution?.workflowId;
  if (!workflowId) throw new Error('tracking poller activities are called by a shipment workflow');
  return workflowId;
}

export type TrackingPollerActivities = ReturnType<typeof createTrackingPollerActivities>;
