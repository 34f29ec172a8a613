/**
 * A tracking poller shard: watches the labels of the shipments that joined it and tells each
 * shipment only what changed. Each run is one span of polling, a long-running heartbeating
 * activity that polls every label on its stage's cadence through the account's pacer, signals
 * news to the shipments itself (exactly once: request ids the server de-duplicates) and learns of
 * shipments joining meanwhile from this run's history. The run then continues as new with the
 * merged membership, so its history stays a few dozen events and the membership is its input.
 */
import { allHandlersFinished, ApplicationFailure, condition, continueAsNew, proxyActivities, setHandler } from '@temporalio/workflow';
import type { TrackingPollerActivities } from '../../activities/tracking-poller';
import { TRACKING_POLLER_ACTIVITY_OPTIONS } from '../../activities/retry-options';
import {
  joinTrackingUpdate,
  SHARD_FULL,
  shardMembersQuery,
  unwatchTrackingSignal,
  watchTrackingSignal,
  type JoinRequest,
  type PollerInput,
} from './definitions';
import { PollerShard } from './shard';

const { pollTrackingSpan } = proxyActivities<TrackingPollerActivities>(TRACKING_POLLER_ACTIVITY_OPTIONS);

export async function trackingPollerWorkflow(input?: PollerInput): Promise<void> {
  const shard = new PollerShard(input);
  setHandler(watchTrackingSignal, (request) => shard.watch(request));
  setHandler(unwatchTrackingSignal, ({ workflowId }) => shard.unwatch(workflowId));
  // A join that would take the shard past its bound is refused before anything is written: the
  // joining shipment tries the next shard (activities/tracking-poller.ts).
  setHandler(joinTrackingUpdate, ({ bound: _bound, ...request }) => shard.watch(request), {
    validator: (request: JoinRequest) => {
      if (!shard.fits(request, request.bound))
        throw ApplicationFailure.create({
          type: SHARD_FULL,
          message: `tracking shard full: ${shard.size} labels, bound ${request.bound.maxLabels} labels and ${request.bound.maxBytes} bytes`,
          nonRetryable: true,
        });
    },
  });
  setHandler(shardMembersQuery, () => shard.describe());
  // An empty shard waits for its first shipment without a timer or an activity.
  await condition(() => shard.size > 0);
  const result = await pollTrackingSpan();
  shard.merge(result);
  await condition(allHandlersFinished);
  await continueAsNew<typeof trackingPollerWorkflow>(shard.carried());
}
