/**
 * Exactly once on the platforms through real worker processes: the worker is SIGKILLed after
 * the platform applied a write and before the worker heard the answer; a new worker process
 * finishes the shipment. Exactly one fulfillment (Shopify) and one tracking item (WooCommerce);
 * and on a slow WooCommerce host that throttles, an order the merchant cancels mid-write gets
 * nothing more written.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startShipment } from '../order-import/start-shipment';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import type { ShipmentOutcome } from '../workflow-definitions/shipment';
import { saveFixture } from './helpers/fixtures';
import { TEST_CREDENTIALS } from './helpers/harness';
import { order } from './helpers/orders';
import { platformConnectors } from './helpers/platforms';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';
import { killWorkerProcesses, startWorkerProcess, workerEnv, type WorkerProcess } from './helpers/worker-process';

let env: TestWorkflowEnvironment;
let api: FakeShippingApi;
let shopify: FakeShopify;
let woo: FakeWooCommerce;

beforeAll(async () => {
  env = await createTestEnv();
  api = await startFakeShippingApi({ port: 0, trackingStepPolls: 1, accounts: [{ name: 'main', ...TEST_CREDENTIALS }] });
  shopify = await startFakeShopify();
  woo = await startFakeWooCommerce();
});
afterAll(async () => {
  killWorkerProcesses();
  await Promise.all([api?.close(), shopify?.close(), woo?.close()]);
  await env?.teardown();
});

function startWorker(taskQueue: string): Promise<WorkerProcess> {
  return startWorkerProcess({
    ...workerEnv(env.address, taskQueue, api.baseUrl),
    TRACKING_POLL_INTERVAL: '200ms',
    SHOP_CONNECTORS: JSON.stringify(platformConnectors(shopify.baseUrl, woo.baseUrl)),
  });
}

// Each test starts two worker processes (each bundles the workflow code) and waits out the killed
// attempt's timeout: ~60 s on a quiet machine, which is not what these tests measure.

/** Kills the worker once `applied` sees the platform's write; the write's answer is held back meanwhile. */
async function killAfterWrite(worker: WorkerProcess, applied: () => boolean): Promise<void> {
  await waitFor(() => (applied() ? true : undefined), { timeoutMs: 30_000, what: 'the platform write' });
  worker.child.kill('SIGKILL');
  expect(await worker.exited).toBeNull();
}

it('Shopify: a worker killed after fulfillmentCreate committed, before its answer, leaves exactly one fulfillment', async () => {
  const taskQueue = `platform-crash-${randomUUID()}`;
  const id = shopify.createOrder({ lineItems: [{ sku: 'BEAN-1', quantity: 1 }] }).legacyResourceId;
  // The store applies the fulfillment at once and answers 20 s later: the kill loses the answer.
  shopify.setFaults({ failNext: [{ operation: 'fulfillmentCreate', kind: 'slow', delayMs: 20_000 }] });
  const first = await startWorker(taskQueue);
  const started = await startShipment(env.client, taskQueue, { ...order('shopify-shop', 'SK-1'), platformOrderId: id });
  await killAfterWrite(first, () => shopify.order(id)!.fulfillments.length > 0);

  const second = await startWorker(taskQueue);
  const handle = env.client.workflow.getHandle(started.workflowId);
  const outcome = (await handle.result()) as ShipmentOutcome;
  expect(outcome.shopSync).toMatchObject({ status: 'up_to_date' });
  const view = shopify.order(id)!;
  expect(view.fulfillments).toHaveLength(1);
  expect(view.fulfillments[0]!.trackingInfo[0]?.number).toBe(outcome.trackingNumber);
  expect(view.fulfillments[0]!.events.at(-1)?.status).toBe('DELIVERED');
  expect(shopify.stats().mutationsApplied.fulfillmentCreate).toBe(1);
  await saveFixture(handle, 'shop-platform-shopify-delivered');
  second.child.kill('SIGTERM');
  await second.exited;
}, 180_000);

it('WooCommerce: a worker killed after the tracking item was stored, before the 201 arrived, leaves exactly one tracking item', async () => {
  const taskQueue = `platform-crash-${randomUUID()}`;
  const id = woo.createOrder({ status: 'processing', lineItems: [{ sku: 'BEAN-1', quantity: 1 }] }).id;
  woo.setFaults({ failNext: [{ route: 'POST shipment-trackings', kind: 'slow', delayMs: 20_000 }] });
  const first = await startWorker(taskQueue);
  const started = await startShipment(env.client, taskQueue, { ...order('woo-shop', 'WK-1'), platformOrderId: String(id) });
  await killAfterWrite(first, () => woo.order(id)!.trackingItems.length > 0);

  const second = await startWorker(taskQueue);
  const handle = env.client.workflow.getHandle(started.workflowId);
  const outcome = (await handle.result()) as ShipmentOutcome;
  expect(outcome.shopSync).toMatchObject({ status: 'up_to_date' });
  const view = woo.order(id)!;
  expect(view.trackingItems).toEqual([expect.objectContaining({ tracking_number: outcome.trackingNumber })]);
  expect(view.status).toBe('completed');
  await saveFixture(handle, 'shop-platform-woocommerce-delivered');
  second.child.kill('SIGTERM');
  await second.exited;
}, 180_000);

it('WooCommerce, a slow host that throttles: the merchant cancels while a tracking note is held and the worker is SIGKILLed; nothing more is written to the cancelled order', async () => {
  const taskQueue = `platform-crash-${randomUUID()}`;
  const id = woo.createOrder({ status: 'processing', lineItems: [{ sku: 'BEAN-1', quantity: 1 }] }).id;
  // A fifth of the calls answered 429 (Retry-After 1 s), every answer 100 ms late, the first note applied and answered 20 s later.
  woo.setFaults({
    rateLimitedRate: 0.2,
    retryAfterSeconds: 1,
    latencyMs: 100,
    failNext: [{ route: 'POST notes', kind: 'slow', delayMs: 20_000 }],
  });
  try {
    const first = await startWorker(taskQueue);
    const started = await startShipment(env.client, taskQueue, { ...order('woo-shop', 'WK-2'), platformOrderId: String(id) });
    await waitFor(() => (woo.order(id)!.notes.length > 0 ? true : undefined), { timeoutMs: 30_000, what: 'the first tracking note' });
    woo.editOrder(id, { status: 'cancelled' });
    const atCancel = woo.order(id)!;
    first.child.kill('SIGKILL');
    expect(await first.exited).toBeNull();

    // No pull tells the shipment: it runs to its end, and only the connector's own read sees the cancel.
    const second = await startWorker(taskQueue);
    const outcome = (await env.client.workflow.getHandle(started.workflowId).result()) as ShipmentOutcome;
    expect(outcome).toMatchObject({ outcome: 'delivered', shopSync: { status: 'up_to_date' } });
    const after = woo.order(id)!;
    const ours = (o: typeof after) => o.notes.filter((n) => !n.note.startsWith('Order status changed'));
    expect({ status: after.status, items: after.trackingItems, notes: ours(after) }).toEqual({
      status: 'cancelled',
      items: atCancel.trackingItems,
      notes: ours(atCancel),
    });
    expect(woo.stats().rateLimited).toBeGreaterThan(0);
    second.child.kill('SIGTERM');
    await second.exited;
  } finally {
    woo.setFaults({ rateLimitedRate: 0, latencyMs: 0, failNext: [] });
  }
}, 120_000);
