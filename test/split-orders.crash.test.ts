/**
 * One order, two parcels, through real worker processes: the worker is SIGKILLed once the first
 * parcel's label exists and the second's call is out; a new worker process finishes the order.
 * Still exactly two labels (each location's key once), two fulfillments, both delivered.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { shipmentWorkflowId } from '../domain/shipment';
import type { ShipmentOutcome } from '../workflow-definitions/shipment';
import { TEST_CREDENTIALS } from './helpers/harness';
import { platformConnectors } from './helpers/platforms';
import { pullNow } from './helpers/shop-pulls';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';
import { killWorkerProcesses, startWorkerProcess, workerEnv, type WorkerProcess } from './helpers/worker-process';

let env: TestWorkflowEnvironment;
let api: FakeShippingApi;
let shopify: FakeShopify;

beforeAll(async () => {
  env = await createTestEnv();
  api = await startFakeShippingApi({ port: 0, trackingStepPolls: 1, accounts: [{ name: 'main', ...TEST_CREDENTIALS }] });
  shopify = await startFakeShopify();
});
afterAll(async () => {
  killWorkerProcesses();
  await Promise.all([api?.close(), shopify?.close()]);
  await env?.teardown();
});

const SHOP = 'shopify-shop';

function startWorker(taskQueue: string): Promise<WorkerProcess> {
  const connectors = platformConnectors(shopify.baseUrl, 'http://127.0.0.1:9');
  const shop = {
    ...connectors[SHOP],
    import: {
      every: '1h',
      paused: true, // only the test's triggers pull: no tick of the schedule mid-test
      firstPull: '1d',
      mapping: { orderIdPrefix: 'K-', shippingMethods: { Standard: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' } } },
    },
  };
  return startWorkerProcess({
    ...workerEnv(env.address, taskQueue, api.baseUrl),
    TRACKING_POLL_INTERVAL: '200ms',
    SHOP_CONNECTORS: JSON.stringify({ maxBackoff: '1s', [SHOP]: shop }),
  });
}

it('a worker SIGKILLed between the two parcels’ labels leaves exactly two labels, two fulfillments, both delivered', async () => {
  const taskQueue = `split-crash-${randomUUID()}`;
  const order = shopify.createOrder({
    lineItems: [1, 2, 3].map((i) => ({ sku: `KIT-${i}`, quantity: 1, grams: 400 })),
    splitLocations: true,
  });
  const orderId = `K-${order.name.replace('#', '')}`;
  // Each label takes 1.5 s: the kill comes while a label call is out.
  api.setFaults({ latencyMs: 1_500, endpoints: ['POST /labels'] });
  const first = await startWorker(taskQueue);
  expect((await pullNow(env.client, SHOP)).counts.started).toBe(1);
  await waitFor(() => (api.labels().some((l) => l.customerOrderNumber === order.name) ? true : undefined), {
    what: 'the first label',
    timeoutMs: 30_000,
    intervalMs: 20,
  });
  first.child.kill('SIGKILL');
  expect(await first.exited).toBeNull();
  api.setFaults({ latencyMs: 0, endpoints: null });

  const second = await startWorker(taskQueue);
  const outcome = (await env.client.workflow.getHandle(shipmentWorkflowId({ shop: SHOP, orderId })).result()) as ShipmentOutcome;
  expect(outcome.outcome).toBe('delivered');
  const labels = api.labels().filter((l) => l.customerOrderNumber === order.name);
  expect(labels.map((l) => l.idempotencyKey).sort()).toEqual([`${SHOP}:${orderId}@1:r1`, `${SHOP}:${orderId}@2:r1`]);
  await waitFor(() => (shopify.order(order.legacyResourceId)!.fulfillments.length === 2 ? true : undefined), {
    what: 'two fulfillments',
    timeoutMs: 15_000,
  });
  expect(shopify.stats().mutationsApplied.fulfillmentCreate).toBe(2);
  expect(shopify.order(order.legacyResourceId)!.fulfillmentOrders.map((fo) => fo.status)).toEqual(['CLOSED', 'CLOSED']);
  second.child.kill('SIGTERM');
  await second.exited;
});
