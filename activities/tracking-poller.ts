/**
 * The fleet's tracking pollers, worker side: a shipment joins its shard (`watchTracking`) and
 * leaves it (`unwatchTracking`), both signals sent from a local activity; a shard's span
 * (`pollTrackingSpan`, tracking-span.ts) polls its labels and tells the shipments what changed.
 * The shard count and the span length are the worker's settings (TRACKING_POLLERS,
 * TRACKING_POLLER_SPAN); the clients and the credentials stay here, one per shipping account
 * (activities/accounts.ts): a shipment joins a shard of its own account, and each label is
 * polled with its own account's client and pacer.
 */
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import {
  shardOf,
  TRACKING_POLLER_WORKFLOW_TYPE,
  trackingPollerId,
  unwatchTrackingSignal,
  watchTrackingSignal,
  type SpanResult,
  type WatchRequest,
} from '../workflows/tracking-poller/definitions';
import { TrackingSpan, type TrackingPollerDeps } from './tracking-span';
import { DEFAULT_SHIPPING_ACCOUNT } from '../domain/shipment';

export type { TrackingPollerDeps, TrackingPollerSettings } from './tracking-span';

export function createTrackingPollerActivities(deps: TrackingPollerDeps) {
  return {
    /**
     * The calling shipment joins its shard, one of its account's (started if it is not running);
     * returns the shard's workflow id.
     */
    async watchTracking(request: Omit<WatchRequest, 'workflowId'>): Promise<{ poller: string }> {
      const { info } = Context.current();
      const workflowId = callerOf(info);
      const shard = shardOf(workflowId, deps.settings.shards);
      const taskQueue = deps.taskQueue ?? info.taskQueue;
      const poller = trackingPollerId(taskQueue, shard, request.account);
      await deps.client.workflow.signalWithStart(TRACKING_POLLER_WORKFLOW_TYPE, {
        workflowId: poller,
        taskQueue,
        args: [],
        signal: watchTrackingSignal,
        signalArgs: [{ ...request, workflowId, membership: `${info.workflowExecution?.runId ?? ''}:${info.activityId}` }],
        staticSummary: `Tracking poller: shard ${shard} of ${deps.settings.shards} on task queue ${taskQueue}, account ${request.account ?? DEFAULT_SHIPPING_ACCOUNT}`,
      });
      return { poller };
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

    /** One span of the calling shard: see tracking-span.ts. */
    async pollTrackingSpan(): Promise<SpanResult> {
      return new TrackingSpan(deps, Context.current()).run();
    },
  };
}

/** The workflow that called: the shipment joining or leaving. */
function callerOf(info: Context['info']): string {
  const workflowId = info.workflowExecution?.workflowId;
  if (!workflowId) throw new Error('tracking poller activities are called by a shipment workflow');
  return workflowId;
}

export type TrackingPollerActivities = ReturnType<typeof createTrackingPollerActivities>;
