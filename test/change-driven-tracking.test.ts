/**
 * Change-driven tracking on a real Temporal dev server and the fake API over loopback: polls
 * that find nothing new cost no workflow task and no history event, while Retry-After, backoff,
 * the tracking time limit and the operator's stop still hold. Also: a shipment started by the
 * pre-change code (bundled from git) finishes under the new code.
 */
import { temporal } from '@temporalio/proto';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baselineWorkflowBundle, hasBaselineCommit, PER_SHIPMENT_TRACKING_COMMIT } from '../bench/baseline';
import { startShipment } from '../order-import/start-shipment';
import { startFakeShippingApi } from '../fake-shipping-api/server';
import { ShippingApiClient, type ShippingApiClientOptions } from '../shipping-api/client';
import { createShipmentWorker, type ShipmentWorkerOptions } from '../worker/create-worker';
import { cancelShipmentSignal, stateQuery } from '../workflow-definitions/shipment';
import { TRACKING_POLLER_WORKFLOW_TYPE, trackingPollerId, watchTrackingSignal } from '../workflow-definitions/tracking-poller';
import { UNKNOWN_ACCOUNT } from '../shipping-accounts/directory';
import { type ShipmentInput } from '../domain/shipment';
import { startHarness, TEST_CREDENTIALS, type Harness } from './helpers/harness';
import { order } from './helpers/orders';
import { saveFixture } from './helpers/fixtures';
import { createTestEnv, getWorkflowBundle } from './helpers/temporal-env';
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

describe.skipIf(!hasBaselineCommit())('a shipment started by the timer-loop code', () => {
  it("finishes under the new code, switching to the fleet's pollers at its next poll", async () => {
    // Tracking moves one stage per poll (1: not registered, 2: Pending, 3: InfoReceived, 4:
    // InTransit, 5: Delivered), so the old code cannot run the shipment to its end while the
    // test waits, however slow the machine: its third poll is held until its worker stops.
    const fake = await startFakeShippingApi({ port: 0, trackingStepPolls: 1, accounts: [{ name: 'main', ...TEST_CREDENTIALS }] });
    const taskQueue = `migration-${Date.now()}`;
    const oldApi = new PollGate({ baseUrl: fake.baseUrl, ...TEST_CREDENTIALS }, 2);
    const tracking = { pollIntervalMs: 300, pollIntervalsMs: {} };
    const workerFor = (workflowBundle: WorkflowBundle, shippingApi: ShippingApiClient | ShippingApiClientOptions) =>
      runWorker({ taskQueue, shippingApi, tracking, workflowBundle });
    try {
      const stopOld = await workerFor(await baselineWorkflowBundle(), oldApi);
      const started = await startShipment(env.client, taskQueue, order('cdt', 'M-1'));
      const handle = env.client.workflow.getHandle(started.workflowId);
      await waitFor(async () => (oldApi.held ? true : undefined), {
        what: 'the timer loop at its third poll',
        timeoutMs: 30_000,
        intervalMs: 100,
      });
      await stopOld();
      await oldApi.close();
      expect((await handle.describe()).status.name).toBe('RUNNING');

      const stopNew = await workerFor(await getWorkflowBundle(), { baseUrl: fake.baseUrl, ...TEST_CREDENTIALS });
      try {
        const result = await handle.result();
        expect(result.outcome).toBe('delivered');
        const list = await events(handle);
        expect(scheduledActivities(list, 'getTracking')).toBeGreaterThanOrEqual(2);
        expect(patchesRecorded(list)).toEqual(expect.arrayContaining(['change-driven-tracking', 'fleet-tracking']));
        expect(list.some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'trackingNews')).toBe(true);
        expect(fake.labels()).toHaveLength(1);
        await saveFixture(handle, 'fleet-migrated-from-timer-loop');
      } finally {
        await stopNew();
      }
    } finally {
      await fake.close();
    }
  });
});

describe.skipIf(!hasBaselineCommit(PER_SHIPMENT_TRACKING_COMMIT))(
  'a shipment waiting in its own tracking activity (the code before the pollers)',
  () => {
    it("moves to the fleet's pollers at its next regular poll and finishes there, each change told once", async () => {
      // Tracking moves one stage per poll (1: not registered, 2: Pending, 3: InfoReceived, 4:
      // InTransit, 5: Delivered), and the old code's third poll is held until its worker stops:
      // the old code cannot follow the shipment to its end however slow the machine, and the
      // pollers see every later stage, however long the hand-over takes (by time, a loaded CI
      // machine let a stage pass unseen between the two workers).
      const fake = await startFakeShippingApi({ port: 0, trackingStepPolls: 1, accounts: [{ name: 'main', ...TEST_CREDENTIALS }] });
      const taskQueue = `migration-fleet-${Date.now()}`;
      const shippingApi = { baseUrl: fake.baseUrl, ...TEST_CREDENTIALS };
      const oldApi = new PollGate(shippingApi, 2);
      const tracking = { pollIntervalMs: 1_000, pollIntervalsMs: {} };
      const run = (workflowBundle: WorkflowBundle, api: ShippingApiClient | ShippingApiClientOptions, handOverToPollers: boolean) =>
        runWorker({ taskQueue, shippingApi: api, tracking, workflowBundle, handOverToPollers });
      try {
        const newBundle = await getWorkflowBundle(); // made before the old worker stops, so the hand-over is quick
        const stopOld = await run(await baselineWorkflowBundle(PER_SHIPMENT_TRACKING_COMMIT), oldApi, false);
        const started = await startShipment(env.client, taskQueue, order('cdt', 'M-2'));
        const handle = env.client.workflow.getHandle(started.workflowId);
        await waitFor(async () => (oldApi.held && (await handle.query(stateQuery)).tag === 'Pending' ? true : undefined), {
          what: 'the old code tracking to Pending, its third poll held',
          timeoutMs: 30_000,
          intervalMs: 100,
        });
        await stopOld();
        await oldApi.close();

        const stopNew = await run(newBundle, shippingApi, true);
        try {
          const result = await handle.result();
          expect(result.outcome).toBe('delivered');
          const list = await events(handle);
          expect(scheduledActivities(list, 'awaitTrackingChange')).toBeGreaterThanOrEqual(1);
          expect(patchesRecorded(list)).toContain('fleet-tracking');
          // Each stage emitted once whichever path saw it (counted even without a connector):
          // label, Pending, InfoReceived, InTransit, Delivered, completed.
          expect(result.shopSync?.emitted).toBe(6);
          await saveFixture(handle, 'fleet-migrated-from-change-driven');
        } finally {
          await stopNew();
        }
      } finally {
        await fake.close();
      }
    });
  },
);

type WorkflowBundle = Awaited<ReturnType<typeof getWorkflowBundle>>;

/** A shipment worker running `workflowBundle` (another commit's, for a migration); resolves to its stop. */
async function runWorker(
  options: Pick<ShipmentWorkerOptions, 'taskQueue' | 'shippingApi' | 'tracking' | 'workflowBundle' | 'handOverToPollers'>,
): Promise<() => Promise<void>> {
  const worker = await createShipmentWorker({ connection: env.nativeConnection, namespace: 'default', ...options });
  const running = worker.run();
  return async () => {
    worker.shutdown();
    await running;
  };
}

/** The patch ids a history recorded. */
function patchesRecorded(list: Awaited<ReturnType<typeof events>>): string[] {
  return list
    .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
    .map((e) => {
      const payload = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0];
      return payload?.data ? (JSON.parse(Buffer.from(payload.data).toString()) as { id: string }).id : '';
    });
}

/** A client whose tracking polls after the first `allowed` wait until their activity is cancelled (its worker stops). */
class PollGate extends ShippingApiClient {
  private polls = 0;
  held = false;
  constructor(
    options: ShippingApiClientOptions,
    private readonly allowed: number,
  ) {
    super(options);
  }
  override async getTracking(id: string, options: Parameters<ShippingApiClient['getTracking']>[1] = {}) {
    if (++this.polls <= this.allowed) return super.getTracking(id, options);
    this.held = true;
    const signal = options.signal;
    await new Promise<never>((_, reject) => {
      if (signal?.aborted) return reject(signal.reason as Error);
      signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
    });
    throw new Error('unreachable');
  }
}
