/**
 * Live orders go ahead of a backlog (domain/priority.ts), through a real worker on the dev server:
 * a backlog of shipments is queued while no worker polls, then a live order's shipment starts;
 * when the worker comes, the live order's label is created before every backlog label. Without
 * priorities (every shipment at the server's default, as before) it was created last.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_SHIPMENT_PRIORITIES, shipmentPriorityKey } from '../domain/priority';
import type { ShipmentInput } from '../domain/shipment';
import { priorityDevServerArgs } from '../dev-server/server-priority';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { startShipment } from '../order-import/start-shipment';
import { createShipmentWorker } from '../worker/create-worker';
import { FAKE_TRACKING_STEP_MS, FAST_TRACKING, TEST_CREDENTIALS } from './helpers/harness';
import { order } from './helpers/orders';
import { createTestEnv, getWorkflowBundle } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';

const BACKLOG = 12;
let env: TestWorkflowEnvironment;
let fake: FakeShippingApi;

beforeAll(async () => {
  env = await createTestEnv({
    server: {
      extraArgs: [
        ...priorityDevServerArgs(),
        // Priority orders tasks within a partition (docs: "Priority is enforced within a single
        // Task Queue partition"); one partition makes the order exact, not approximate.
        ...['--dynamic-config-value', 'matching.numTaskqueueReadPartitions=1'],
        ...['--dynamic-config-value', 'matching.numTaskqueueWritePartitions=1'],
      ],
    },
  });
  fake = await startFakeShippingApi({ port: 0, trackingStepMs: FAKE_TRACKING_STEP_MS, accounts: [{ name: 'main', ...TEST_CREDENTIALS }] });
});
afterAll(async () => {
  await fake?.close();
  await env?.teardown();
});

it("a live order's label is created before a queued backlog's labels", async () => {
  const taskQueue = `shipments-${randomUUID()}`;
  const shop = `live-${randomUUID().slice(0, 8)}`;
  const now = Date.now();
  const start = (input: ShipmentInput) =>
    startShipment(env.client, taskQueue, input, shipmentPriorityKey(input, DEFAULT_SHIPMENT_PRIORITIES, now));
  // No worker polls yet: every task waits on the server, as behind a backlog that has not drained.
  for (let i = 0; i < BACKLOG; i++) await start(order(shop, `B-${i}`)); // a file's orders: backlog
  const live = { ...order(shop, 'LIVE'), shopOrder: placedJustNow(now) };
  await start(live);

  const worker = await createShipmentWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    shippingApi: { baseUrl: fake.baseUrl, ...TEST_CREDENTIALS },
    tracking: FAST_TRACKING,
    workflowBundle: await getWorkflowBundle(),
    // Few slots, so what runs first is what the server hands out first.
    maxConcurrentWorkflowTaskExecutions: 2,
    maxConcurrentActivityTaskExecutions: 1,
  });
  await worker.runUntil(async () => {
    await waitFor(() => labelsOf(shop).some((l) => l.customerOrderNumber === 'LIVE') || undefined, {
      what: "the live order's label",
      timeoutMs: 60_000,
      intervalMs: 50,
    });
  });
  expect(labelsOf(shop).map((l) => l.customerOrderNumber)[0]).toBe('LIVE');
});

function labelsOf(shop: string) {
  return fake.labels().filter((l) => l.idempotencyKey.includes(shop));
}

/** The shop's order as a pull reads one placed a moment ago. */
function placedJustNow(now: number): ShipmentInput['shopOrder'] {
  return { facts: { status: 'open', address: 'a'.repeat(32), lines: 'b'.repeat(32) }, modifiedAt: new Date(now - 5_000).toISOString() };
}

it("a live order's first attempt (a local activity) goes ahead of the backlog's calls waiting in the pacer", async () => {
  // An account of 4 calls a second: the backlog's calls queue in the worker's pacer.
  const limited = await startFakeShippingApi({
    port: 0,
    trackingStepMs: 60_000,
    accounts: [{ name: 'main', ...TEST_CREDENTIALS }],
    faults: { rateLimit: { perSecond: 4, burst: 4 } },
  });
  const taskQueue = `shipments-${randomUUID()}`;
  const shop = `la-${randomUUID().slice(0, 8)}`;
  const worker = await createShipmentWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    shippingApi: { baseUrl: limited.baseUrl, ...TEST_CREDENTIALS },
    tracking: { ...FAST_TRACKING, pollIntervalMs: 60_000 },
    workflowBundle: await getWorkflowBundle(),
  });
  try {
    await worker.runUntil(async () => {
      const now = Date.now();
      const start = (input: ShipmentInput) =>
        startShipment(env.client, taskQueue, input, shipmentPriorityKey(input, DEFAULT_SHIPMENT_PRIORITIES, now));
      await Promise.all(Array.from({ length: 30 }, (_, i) => start(order(shop, `B-${i}`))));
      // The backlog's first attempts are waiting in the pacer now.
      await waitFor(() => labelsAt(limited, shop).length >= 2 || undefined, { what: 'the backlog under way', timeoutMs: 20_000 });
      const before = labelsAt(limited, shop).length;
      await start({ ...order(shop, 'LIVE'), shopOrder: placedJustNow(Date.now()) });
      await waitFor(() => labelsAt(limited, shop).includes('LIVE') || undefined, { what: "the live order's label", timeoutMs: 30_000 });
      // Ahead of every backlog call that was waiting: at most one more (granted as it started) before it.
      expect(labelsAt(limited, shop).indexOf('LIVE') - before).toBeLessThanOrEqual(1);
    });
  } finally {
    await limited.close();
  }
});

function labelsAt(api: FakeShippingApi, shop: string): string[] {
  return api
    .labels()
    .filter((l) => l.idempotencyKey.includes(shop))
    .map((l) => l.customerOrderNumber);
}
