/**
 * Tracking that cannot be lost, on a real Temporal dev server with the fake shipping API behind a
 * loopback proxy that rewrites its tracking answers: a terminal answer ends tracking whatever its
 * checkpoint count, a state the tracking returns to is told again, a terminated shard's shipments
 * join again and finish, and a full shard overflows to the next one.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startShipment } from '../order-import/start-shipment';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import type { Checkpoint, TrackingRecord } from '../shipping-api/contract';
import { createShipmentWorker } from '../worker/create-worker';
import type { TrackingPollerSettings } from '../activities/tracking-poller';
import type { ShipmentInput, TrackingPolicy } from '../domain/shipment';
import { WorkflowNotFoundError } from '@temporalio/client';
import { shardMembersQuery, trackingNewsSignal, trackingPollerId, type TrackingNews } from '../workflow-definitions/tracking-poller';
import { stateQuery } from '../workflow-definitions/shipment';
import { TrackingReconciler } from '../tracking-poller/reconciler';
import { waitFor } from './helpers/wait';
import { FAST_TRACKING, TEST_CREDENTIALS } from './helpers/harness';
import { order } from './helpers/orders';
import { saveFixture } from './helpers/fixtures';
import { createTestEnv, getWorkflowBundle } from './helpers/temporal-env';
import { startTrackingProxy, type TrackingProxy, type TrackingRewrite } from './helpers/tracking-proxy';

let env: TestWorkflowEnvironment;
let fake: FakeShippingApi;
const stops: Array<() => Promise<void>> = [];

beforeAll(async () => {
  env = await createTestEnv();
  fake = await startFakeShippingApi({ port: 0, trackingStepMs: 150, accounts: [{ name: 'main', ...TEST_CREDENTIALS }] });
});
afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  await fake?.close();
  await env?.teardown();
});

/** A worker on its own queue whose shipping API is the fake behind a proxy that rewrites tracking. */
async function workerBehind(
  rewrite: TrackingRewrite,
  opts: { tracking?: Partial<TrackingPolicy>; pollers?: TrackingPollerSettings } = {},
): Promise<{ taskQueue: string; proxy: TrackingProxy; worker: Worker }> {
  const proxy = await startTrackingProxy(fake.baseUrl, rewrite);
  const taskQueue = `membership-${randomUUID()}`;
  const worker = await createShipmentWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    shippingApi: { baseUrl: proxy.baseUrl, ...TEST_CREDENTIALS },
    tracking: { ...FAST_TRACKING, ...opts.tracking },
    trackingPollers: opts.pollers ?? { shards: 2, spanMs: 60_000 },
    workflowBundle: await getWorkflowBundle(),
  });
  const running = worker.run();
  stops.push(async () => {
    worker.shutdown();
    await running;
    await proxy.close();
  });
  return { taskQueue, proxy, worker };
}

async function start(taskQueue: string, input: ShipmentInput) {
  const started = await startShipment(env.client, taskQueue, input);
  return env.client.workflow.getHandle(started.workflowId);
}

/** The news signals a shipment received, in order. */
async function newsOf(handle: ReturnType<typeof env.client.workflow.getHandle>): Promise<TrackingNews[]> {
  const converter = env.client.options.loadedDataConverter.payloadConverter;
  const events = (await handle.fetchHistory()).events ?? [];
  return events
    .map((e) => e.workflowExecutionSignaledEventAttributes)
    .filter((s) => s?.signalName === trackingNewsSignal.name)
    .map((s) => converter.fromPayload<TrackingNews>(s!.input!.payloads![0]!));
}

/** Checkpoints of one tag, a minute apart. */
function checkpoints(count: number, tag: string): Checkpoint[] {
  return Array.from({ length: count }, (_, i) => ({
    checkpointTime: new Date(Date.UTC(2026, 10, 27, 10, i)).toISOString(),
    city: 'Porto',
    state: '',
    countryRegion: 'PT',
    location: 'Porto, PT',
    message: `${tag} ${i + 1}`,
    tag,
    subtag: `${tag}_001`,
    subtagMessage: tag,
    slug: 'dhl',
  }));
}

/** Tracking by the label's count of registered answers (404s pass through and do not count). */
function scripted(answer: (poll: number, record: TrackingRecord) => TrackingRecord): TrackingRewrite {
  const polls = new Map<string, number>();
  return (record, labelId) => {
    if (record === null) return null;
    const poll = (polls.get(labelId) ?? 0) + 1;
    polls.set(labelId, poll);
    return answer(poll, record);
  };
}

describe('what a poll answers', () => {
  it('a Delivered answer with fewer checkpoints than before (a collapsed list) ends tracking as delivered', async () => {
    // In transit with 3 checkpoints for 3 polls; then the courier collapses its list on delivery to the last one.
    const collapse = scripted((poll, record) =>
      poll <= 3
        ? { ...record, tag: 'InTransit', subtag: 'InTransit_001', checkpoints: checkpoints(3, 'InTransit') }
        : { ...record, tag: 'Delivered', subtag: 'Delivered_001', checkpoints: checkpoints(1, 'Delivered') },
    );
    const { taskQueue } = await workerBehind(collapse, { tracking: { maxTrackingMs: 20_000 } });
    const handle = await start(taskQueue, order('collapse', `C-${randomUUID().slice(0, 8)}`));
    const result = await handle.result();
    expect(result.outcome).toBe('delivered');
    expect(result.tag).toBe('Delivered');
    expect((await newsOf(handle)).map((n) => [n.change?.tag, n.change?.checkpoints])).toEqual([
      ['InTransit', 3],
      ['Delivered', 1],
    ]);
    await saveFixture(handle, 'fleet-terminal-with-fewer-checkpoints');
  });

  it('tracking that returns to an exact earlier state is told again', async () => {
    // InTransit with one subtag, then another, then the first again (same checkpoints), then Delivered.
    const script = ['InTransit_001', 'InTransit_003', 'InTransit_001'];
    const flap = scripted((poll, record) => {
      const step = Math.floor((poll - 1) / 3);
      if (step < script.length) return { ...record, tag: 'InTransit', subtag: script[step]!, checkpoints: checkpoints(1, 'InTransit') };
      return { ...record, tag: 'Delivered', subtag: 'Delivered_001', checkpoints: checkpoints(2, 'Delivered') };
    });
    const { taskQueue } = await workerBehind(flap, { tracking: { maxTrackingMs: 30_000 } });
    const handle = await start(taskQueue, order('flap', `F-${randomUUID().slice(0, 8)}`));
    const result = await handle.result();
    expect(result.outcome).toBe('delivered');
    const subtags = (await newsOf(handle)).map((n) => n.change?.subtag);
    expect(subtags).toEqual([...script, 'Delivered_001']);
  });
});

/** In transit until `deliver` is set for the label's shipments, then Delivered. */
function holdInTransit(): { rewrite: TrackingRewrite; deliver(): void } {
  let delivered = false;
  return {
    rewrite: scripted((_poll, record) =>
      delivered
        ? { ...record, tag: 'Delivered', subtag: 'Delivered_001', checkpoints: checkpoints(2, 'Delivered') }
        : { ...record, tag: 'InTransit', subtag: 'InTransit_001', checkpoints: checkpoints(1, 'InTransit') },
    ),
    deliver: () => void (delivered = true),
  };
}

async function membersOf(poller: string): Promise<string[] | undefined> {
  try {
    const running = await env.client.workflow.getHandle(poller).describe();
    if (running.status.name !== 'RUNNING') return undefined;
    return (await env.client.workflow.getHandle(poller).query(shardMembersQuery)).members.map((m) => m.workflowId).sort();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

async function inTracking(handles: Array<{ workflowId: string }>): Promise<void> {
  await waitFor(
    async () => {
      const states = await Promise.all(handles.map((h) => env.client.workflow.getHandle(h.workflowId).query(stateQuery)));
      return states.every((s) => s.phase === 'tracking' && s.tag === 'InTransit') ? true : undefined;
    },
    { what: 'every shipment in transit', timeoutMs: 30_000, intervalMs: 200 },
  );
}

describe('tracking membership', () => {
  it('a shard terminated mid-run strands nobody: the reconciler finds its shipments, they join again and finish delivered', async () => {
    const tracking = holdInTransit();
    const { taskQueue } = await workerBehind(tracking.rewrite, {
      tracking: { maxTrackingMs: 120_000 },
      pollers: { shards: 1, spanMs: 60_000 },
    });
    const handles = await Promise.all([1, 2, 3].map((i) => start(taskQueue, order('lost-shard', `L-${i}-${randomUUID().slice(0, 6)}`))));
    await inTracking(handles);
    const poller = trackingPollerId(taskQueue, 0);
    const ids = handles.map((h) => h.workflowId).sort();
    expect(await membersOf(poller)).toEqual(ids);

    await env.client.workflow.getHandle(poller).terminate('operator terminated the shard');
    const reconciler = new TrackingReconciler({ client: env.client, maxLabels: 4000, log: { warn: () => {}, info: () => {} } });
    // Visibility follows the termination a moment later: the pass is repeated until it sees it.
    const pass = await waitFor(
      async () => {
        const found = await reconciler.reconcile();
        return ids.every((id) => found.unwatched.includes(id)) ? found : undefined;
      },
      { what: 'the reconciler to find the stranded shipments', timeoutMs: 20_000, intervalMs: 500 },
    );
    expect(pass.unwatched).toEqual(expect.arrayContaining(ids));
    await waitFor(async () => ((await membersOf(poller))?.length === 3 ? true : undefined), {
      what: 'the shipments in a running shard again',
      timeoutMs: 20_000,
    });

    tracking.deliver();
    const results = await Promise.all(handles.map((h) => h.result()));
    expect(results.map((r) => r.outcome)).toEqual(['delivered', 'delivered', 'delivered']);
    await saveFixture(handles[0]!, 'fleet-rejoined-after-shard-terminated');
  });

  it('a shard at its bound refuses a new label, which joins the next shard, chosen the same way by every worker', async () => {
    const tracking = holdInTransit();
    const { taskQueue } = await workerBehind(tracking.rewrite, {
      tracking: { maxTrackingMs: 120_000 },
      pollers: { shards: 1, spanMs: 60_000, maxLabels: 2 },
    });
    const handles: Array<{ workflowId: string; result(): Promise<{ outcome: string }> }> = [];
    // One at a time, so the shards fill in order.
    for (let i = 0; i < 5; i++) {
      const handle = await start(taskQueue, order('overflow', `O-${i}-${randomUUID().slice(0, 6)}`));
      await inTracking([handle]);
      handles.push(handle);
    }
    const shards = await Promise.all([0, 1, 2, 3].map((n) => membersOf(trackingPollerId(taskQueue, n))));
    const ids = handles.map((h) => h.workflowId);
    expect(shards).toEqual([[...ids.slice(0, 2)].sort(), [...ids.slice(2, 4)].sort(), [ids[4]], undefined]);

    tracking.deliver();
    const results = await Promise.all(handles.map((h) => h.result()));
    expect(results.map((r) => r.outcome)).toEqual(Array(5).fill('delivered'));
    // The shard's first run: its members joined by update, one refused (nothing recorded), its span, its continue-as-new.
    const poller = trackingPollerId(taskQueue, 0);
    const latest = await env.client.workflow.getHandle(poller).fetchHistory();
    const firstRunId = latest.events![0]!.workflowExecutionStartedEventAttributes!.firstExecutionRunId!;
    await saveFixture(env.client.workflow.getHandle(poller, firstRunId), 'fleet-poller-joined-by-update');
  });
});
