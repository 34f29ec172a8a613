/**
 * A poller shard's membership across a span, fast: the real dev server and workflow bundle, with
 * the span activity replaced by a script that returns what the test says when the test says.
 * The real span (tracking-poller/span.ts) is proven end to end in test/fleet-*.test.ts and
 * test/relabel.test.ts.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestEnv, getWorkflowBundle } from '../../test/helpers/temporal-env';
import { saveFixture } from '../../test/helpers/fixtures';
import { waitFor } from '../../test/helpers/wait';
import {
  unwatchTrackingSignal,
  watchTrackingSignal,
  type PollerInput,
  type SpanResult,
  type WatchRequest,
} from '../../workflow-definitions/tracking-poller';

let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;
const taskQueue = `poller-${randomUUID()}`;

/** Each span waits until the test ends it with a result. */
const spans: Array<(result: SpanResult) => void> = [];
const activities = {
  pollTrackingSpan: () => new Promise<SpanResult>((resolve) => spans.push(resolve)),
};

beforeAll(async () => {
  env = await createTestEnv();
  worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await getWorkflowBundle(), activities });
  running = worker.run();
});
afterAll(async () => {
  // A span still open would hold the worker's shutdown.
  for (const end of spans) end({ progress: [], dropped: [], stats: { polls: 0, told: 0, heartbeats: 0 } });
  worker?.shutdown();
  await running;
  await env?.teardown();
});

const known = { tag: 'InTransit', subtag: null, trackingNumber: 'T1', checkpoints: 2, lastCheckpointTime: '2026-11-27T10:00:00Z' };
const cadence = { pollIntervalMs: 1000, pollIntervalsMs: {}, terminalTags: ['Delivered'] };
const watchOf = (labelId: string): WatchRequest => ({
  workflowId: 'shipment-a',
  labelId,
  known,
  cadence,
  deadline: Date.now() + 3_600_000,
});

it('a shipment relabelled during a span keeps its new label in the shard, whatever the span reports of the old one', async () => {
  const input: PollerInput = {
    cadences: [cadence],
    members: [{ ...watchOf('label-1'), cadence: 0, nextPollAt: 0, polls: 0, failures: 0, failureTold: null }],
  };
  const handle = await env.client.workflow.start('trackingPollerWorkflow', {
    taskQueue,
    workflowId: `poller-${randomUUID()}`,
    args: [input],
  });
  await waitFor(() => (spans.length === 1 ? true : undefined), { what: 'the first span', timeoutMs: 10_000 });

  // The relabel, while the span runs: the shipment leaves with its old label and joins with the new one.
  await handle.signal(unwatchTrackingSignal, { workflowId: 'shipment-a' });
  await handle.signal(watchTrackingSignal, watchOf('label-2'));
  // The span saw the old label delivered (a poll in flight as the shipment left) and dropped it.
  spans[0]!({
    progress: [
      {
        workflowId: 'shipment-a',
        labelId: 'label-1',
        known: { ...known, tag: 'Delivered' },
        nextPollAt: 9,
        polls: 3,
        failures: 0,
        failureTold: null,
      },
    ],
    dropped: ['shipment-a'],
    droppedLabels: ['label-1'],
    stats: { polls: 3, told: 1, heartbeats: 0 },
  });

  // The next run (continued as new) carries the new label, as it joined: polled, and never told the old label's state.
  await waitFor(() => (spans.length === 2 ? true : undefined), { what: 'the next span', timeoutMs: 10_000 });
  const next = await env.client.workflow.getHandle(handle.workflowId).fetchHistory();
  const carried = env.client.options.loadedDataConverter.payloadConverter.fromPayload<PollerInput>(
    next.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!,
  );
  expect(carried.members).toEqual([expect.objectContaining({ workflowId: 'shipment-a', labelId: 'label-2', known })]);

  await saveFixture(
    env.client.workflow.getHandle(handle.workflowId, next.events![0]!.workflowExecutionStartedEventAttributes!.firstExecutionRunId!),
    'fleet-poller-relabel',
  );
  await handle.terminate('test over');
});
