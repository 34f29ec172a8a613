/**
 * Change-driven tracking on a real Temporal dev server and the fake API over loopback: polls
 * that find nothing new cost no workflow task and no history event, while Retry-After, backoff,
 * the tracking time limit and the operator's stop still hold.
 */
import { temporal } from '@temporalio/proto';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startShipment } from '../order-import/start-shipment';
import { cancelShipmentSignal, stateQuery } from '../workflow-definitions/shipment';
import { TRACKING_POLLER_WORKFLOW_TYPE, trackingPollerId, watchTrackingSignal } from '../workflow-definitions/tracking-poller';
import { UNKNOWN_ACCOUNT } from '../shipping-accounts/directory';
import { type ShipmentInput } from '../domain/shipment';
import { startHarness, type Harness } from './helpers/harness';
import { order } from './helpers/orders';
import { saveFixture } from './helpers/fixtures';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';

const POLLS_PER_STAGE = 5;

let env: TestWorkflowEnvironment;
/** Tracking advances every POLLS_PER_STAGE polls of a label, whatever the time. */
let byPolls: Harness;
/** Tracking advances with time (150 ms a stage), as in the other workflow tests. */
let byTime: Harness;

beforeAll(async () => {
  env = await createTestEnv();
  byPolls = await startHarness({ env, fake: { trackingStepPolls: POLLS_PER_STAGE } });
  byTime = await startHarness({ env });
});
afterAll(async () => {
  await byPolls?.stop();
  await byTime?.stop();
  await env?.teardown();
});

async function start(h: Harness, input: ShipmentInput): Promise<WorkflowHandle> {
  const started = await startShipment(h.env.client, h.taskQueue, input);
  return h.env.client.workflow.getHandle(started.workflowId);
}

async function events(handle: WorkflowHandle) {
  return (await handle.fetchHistory()).events ?? [];
}

function scheduledActivities(list: Awaited<ReturnType<typeof events>>, type: string): number {
  return list.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type).length;
}

const WORKFLOW_TASK_COMPLETED = temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED;

async function tracking(handle: WorkflowHandle): Promise<void> {
  await waitFor(async () => ((await handle.query(stateQuery)).phase === 'tracking' ? true : undefined), {
    what: 'tracking',
    timeoutMs: 20_000,
    intervalMs: 100,
  });
}

function trackingRequests(h: Harness, labelId: string) {
  return h.fake.requestLog().filter((r) => r.endpoint === 'GET /tracking' && r.id === labelId);
}

describe('change-driven tracking', () => {
  it("polls without change add no workflow task and no history event: the fleet's pollers tell a shipment only its changes", async () => {
    const handle = await start(byPolls, order('cdt', 'P-1'));
    const result = await handle.result();
    expect(result.outcome).toBe('delivered');
    expect(result.lastError).toBeNull();

    // 404, Pending, InfoReceived, InTransit: POLLS_PER_STAGE polls each, then Delivered.
    const polls = trackingRequests(byPolls, result.labelId).length;
    expect(polls).toBe(4 * POLLS_PER_STAGE + 1);
    expect((await handle.query(stateQuery)).attempts.trackingPolls).toBe(polls);

    const list = await events(handle);
    // One signal per change (Pending, InfoReceived, InTransit, Delivered), no activity at all for tracking.
    const news = list.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'trackingNews');
    expect(news).toHaveLength(4);
    expect(scheduledActivities(list, 'awaitTrackingChange')).toBe(0);
    expect(scheduledActivities(list, 'getTracking')).toBe(0);
    expect(list.filter((e) => e.eventType === WORKFLOW_TASK_COMPLETED).length).toBeLessThanOrEqual(8);
    expect(list.length).toBeLessThanOrEqual(60);
    await saveFixture(handle, 'fleet-polled-by-count');
  });

  it("keeps a label's cadence when its answers come late: the next poll is due an interval after the last was due, not after its answer", async () => {
    byPolls.fake.setFaults({ latencyMs: 200, endpoints: ['GET /tracking'] });
    try {
      const handle = await start(byPolls, order('cdt', 'C-1', {}, { pollIntervalMs: 500 }));
      const result = await handle.result();
      expect(result.outcome).toBe('delivered');
      const at = trackingRequests(byPolls, result.labelId).map((r) => r.receivedAt);
      expect(at).toHaveLength(4 * POLLS_PER_STAGE + 1);
      const gaps = at.slice(1).map((t, i) => t - at[i]!);
      const median = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)]!;
      // After each answer (200 ms late) it was 700 ms and more; never sooner than the interval on average.
      expect(median).toBeLessThan(620);
      expect((at.at(-1)! - at[0]!) / gaps.length).toBeGreaterThanOrEqual(490);
      // Never sooner than half an interval after the answer before.
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(200 + 250 - 20);
    } finally {
      byPolls.fake.setFaults({ latencyMs: 0, endpoints: null });
    }
  });

  it('waits Retry-After after a 429 on a poll, and it leaves no error behind', async () => {
    byTime.fake.setFaults({ failNext: [{ endpoint: 'GET /tracking', status: 429, retryAfter: '3' }] });
    const handle = await start(byTime, order('cdt', 'R-1'));
    const result = await handle.result();
    expect(result.outcome).toBe('delivered');
    expect(result.lastError).toBeNull();
    const log = trackingRequests(byTime, result.labelId);
    const limited = log.findIndex((r) => r.status === 429);
    expect(limited).toBeGreaterThanOrEqual(0);
    expect(log[limited + 1]!.at - log[limited]!.at).toBeGreaterThanOrEqual(3_000);
  });

  it('backs off exponentially on 5xx during tracking, never later than the next regular poll', async () => {
    byTime.fake.setFaults({
      failNext: [
        { endpoint: 'GET /tracking', status: 500 },
        { endpoint: 'GET /tracking', status: 502 },
      ],
    });
    const handle = await start(byTime, order('cdt', 'S-1', {}, { pollIntervalMs: 2_500 }));
    const result = await handle.result();
    expect(result.outcome).toBe('delivered');
    expect(result.lastError).toBeNull();
    const log = trackingRequests(byTime, result.labelId);
    expect(log.slice(0, 2).map((r) => r.status)).toEqual([500, 502]);
    expect(log[1]!.at - log[0]!.at).toBeGreaterThanOrEqual(1_000);
    // The poller keeps the label's failures in a row: the second wait doubles.
    expect(log[2]!.at - log[1]!.at).toBeGreaterThanOrEqual(2_000);
  });

  it('records a poll failure retrying cannot fix, and goes on tracking', async () => {
    byTime.fake.setFaults({ failNext: [{ endpoint: 'GET /tracking', status: 401 }] });
    const handle = await start(byTime, order('cdt', 'U-1'));
    const seen = await waitFor(
      async () => {
        const s = await handle.query(stateQuery);
        return s.lastError?.kind === 'unauthorized' || s.phase === 'completed' ? s : undefined;
      },
      { what: 'the recorded 401', timeoutMs: 20_000, intervalMs: 50 },
    );
    expect(seen.lastError?.kind).toBe('unauthorized');
    const result = await handle.result();
    expect(result.outcome).toBe('delivered');
    // The later successful polls cleared it: the outcome shows only errors that still stand.
    expect(result.lastError).toBeNull();
    await saveFixture(handle, 'fleet-poll-unauthorized');
  });

  it('a label of a shipping account this worker does not know fails its shard’s span as accountCalls fails a call, naming the account', async () => {
    const shard = trackingPollerId(byTime.taskQueue, 0, 'ghost');
    const handle = await byTime.env.client.workflow.signalWithStart(TRACKING_POLLER_WORKFLOW_TYPE, {
      workflowId: shard,
      taskQueue: byTime.taskQueue,
      args: [],
      signal: watchTrackingSignal,
      signalArgs: [
        {
          workflowId: 'ghost-shipment',
          labelId: 'L-ghost',
          known: { tag: null, subtag: null, trackingNumber: null, checkpoints: 0, lastCheckpointTime: null },
          cadence: { pollIntervalMs: 1000, pollIntervalsMs: {}, terminalTags: ['Delivered'] },
          deadline: Date.now() + 3_600_000,
          account: 'ghost',
        },
      ],
    });
    try {
      const failure = await waitFor(async () => (await handle.describe()).raw.pendingActivities?.[0]?.lastFailure ?? undefined, {
        what: 'the span’s failure',
      });
      expect(failure.applicationFailureInfo?.type).toBe(UNKNOWN_ACCOUNT);
      expect(failure.message).toContain('"ghost"');
      // Retried each minute, as a shipment's call for an unknown account is; nothing was polled with another account.
      expect(byTime.fake.requestLog().filter((r) => r.id === 'L-ghost')).toEqual([]);
    } finally {
      await handle.terminate('test over');
    }
  });

  it('an operator stop ends a long wait at once', async () => {
    const handle = await start(byTime, order('cdt', 'X-1', { marker: 'STALL' }, { pollIntervalMs: 3_600_000 }));
    await tracking(handle);
    const stoppedAt = Date.now();
    await handle.signal(cancelShipmentSignal, { reason: 'parcel collected in store' });
    const result = await handle.result();
    expect(result).toMatchObject({ outcome: 'cancelled_by_operator', reason: 'parcel collected in store' });
    // The next poll was an hour away: the stop did not wait for it.
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
    await saveFixture(handle, 'fleet-cancel-while-waiting');
  });

  it('ends with tracking_timed_out at the maximum tracking duration, even between two hourly polls', async () => {
    const handle = await start(byTime, order('cdt', 'T-1', { marker: 'STALL' }, { pollIntervalMs: 3_600_000, maxTrackingMs: 2_000 }));
    const startedAt = Date.now();
    const result = await handle.result();
    expect(result.outcome).toBe('tracking_timed_out');
    expect(Date.now() - startedAt).toBeLessThan(20_000);
    await saveFixture(handle, 'fleet-timed-out');
  });
});
