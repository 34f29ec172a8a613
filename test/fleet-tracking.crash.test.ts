/**
 * The fleet's tracking pollers through real worker processes: shipments in tracking while the
 * worker running their poller shard's span is SIGKILLed, then the other worker too, and a new
 * one takes over. Every shipment ends delivered, each change is told to it once and in order
 * (no trackingNews signal twice, tags only forward), and nothing is lost.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startShipment } from '../order-import/start-shipment';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { stateQuery, type ShipmentOutcome } from '../workflow-definitions/shipment';
import { trackingNewsSignal, trackingPollerId, type TrackingNews } from '../workflow-definitions/tracking-poller';
import { defaultPayloadConverter } from '@temporalio/common';
import { saveFixture } from './helpers/fixtures';
import { TEST_CREDENTIALS } from './helpers/harness';
import { killWorkerProcesses, startWorkerProcess, type WorkerProcess, workerEnv } from './helpers/worker-process';
import { order } from './helpers/orders';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';
import { prebuiltBundlePath } from './helpers/workflow-bundle';

const SHIPMENTS = 12;
const ORDER = ['Pending', 'InfoReceived', 'InTransit', 'Delivered'];
let env: TestWorkflowEnvironment;
let fake: FakeShippingApi;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'fleet-crash-'));
let bundle = '';

beforeAll(async () => {
  bundle = prebuiltBundlePath();
  env = await createTestEnv();
  // Each stage lasts 4 polls of a label: the pollers' progress, not the clock, moves tracking.
  fake = await startFakeShippingApi({ port: 0, trackingStepPolls: 4, accounts: [{ name: 'main', ...TEST_CREDENTIALS }] });
});
afterAll(async () => {
  killWorkerProcesses();
  await fake?.close();
  await env?.teardown();
  rmSync(tmp, { recursive: true, force: true });
});

it('a poller killed and its shard moved to another worker: no shipment lost, no change told twice or out of order', async () => {
  const taskQueue = `fleet-crash-${randomUUID()}`;
  const start = (): Promise<WorkerProcess> =>
    startWorkerProcess({
      ...workerEnv(env.address, taskQueue, fake.baseUrl),
      WORKFLOW_BUNDLE_PATH: bundle,
      TRACKING_POLL_INTERVAL: '400ms',
      TRACKING_POLLERS: '2',
      TRACKING_POLLER_SPAN: '1m',
    });
  const [a, b] = await Promise.all([start(), start()]);
  const handles: Array<ReturnType<typeof env.client.workflow.getHandle>> = [];
  for (let i = 0; i < SHIPMENTS; i++) {
    const started = await startShipment(env.client, taskQueue, order('fleet', `K-${i}`));
    handles.push(env.client.workflow.getHandle(started.workflowId));
  }
  // Mid-way: some shipments have news, none is done.
  await waitFor(async () => ((await handles[0]!.query(stateQuery)).tag !== null ? true : undefined), {
    what: 'the first news',
    timeoutMs: 30_000,
    intervalMs: 100,
  });
  a.child.kill('SIGKILL');
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  b.child.kill('SIGKILL');
  await start(); // the shards' spans move here once their heartbeats are missed

  const results = (await Promise.all(handles.map((h) => h.result()))) as ShipmentOutcome[];
  expect(results.map((r) => r.outcome)).toEqual(Array(SHIPMENTS).fill('delivered'));
  for (const handle of handles) {
    const events = (await handle.fetchHistory()).events ?? [];
    const news = events
      .filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === trackingNewsSignal.name)
      .map((e) => defaultPayloadConverter.fromPayload<TrackingNews>(e.workflowExecutionSignaledEventAttributes!.input!.payloads![0]!));
    // Told once: a retried span tells the change it finds under the id the killed attempt used
    // (tracking-poller/span.ts, NewsIds), so the server drops the second signal.
    const told = news.map((n) => JSON.stringify([n.change?.tag, n.change?.subtag, n.change?.checkpoints]));
    expect(new Set(told).size).toBe(told.length); // nothing told twice
    const tags = news.map((n) => ORDER.indexOf(n.change!.tag!));
    expect(tags).toEqual([...tags].sort((x, y) => x - y)); // only forward
    expect(tags.at(-1)).toBe(ORDER.indexOf('Delivered'));
  }
  // One label per order, and every label polled to its end.
  expect(fake.labels().filter((l) => l.idempotencyKey.startsWith('fleet:'))).toHaveLength(SHIPMENTS);
  await saveFixture(handles[0]!, 'fleet-poller-killed-shipment');
  // A shard's busiest run: watch signals, a span retried on another worker, its merge and continue-as-new.
  let busiest = { runId: '', events: 0 };
  for await (const run of env.client.workflow.list({ query: `WorkflowId = '${trackingPollerId(taskQueue, 0)}'` })) {
    const events = (await env.client.workflow.getHandle(run.workflowId, run.runId).fetchHistory()).events?.length ?? 0;
    if (events > busiest.events) busiest = { runId: run.runId, events };
  }
  await saveFixture(env.client.workflow.getHandle(trackingPollerId(taskQueue, 0), busiest.runId), 'fleet-poller-shard');
}, 180_000);
