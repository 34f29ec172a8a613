/**
 * Platform connectors against slow and busy stores, on a real Temporal dev server and the local
 * fakes over loopback: a store's Retry-After holds every call (the first attempt's included),
 * a write a slow host may still apply is never written again, and what is written is the
 * event's once.
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startShipment } from '../order-import/start-shipment';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import { loadShopConnectors } from '../platforms/connectors';
import type { ShipmentOutcome } from '../workflow-definitions/shipment';
import type { ShipmentInput } from '../domain/shipment';
import { startHarness, type Harness } from './helpers/harness';
import { order } from './helpers/orders';
import { platformConnectors } from './helpers/platforms';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';

let env: TestWorkflowEnvironment;
let shopify: FakeShopify;
let woo: FakeWooCommerce;
let h: Harness;

beforeAll(async () => {
  env = await createTestEnv();
  shopify = await startFakeShopify();
  woo = await startFakeWooCommerce();
  const connectors = platformConnectors(shopify.baseUrl, woo.baseUrl);
  // A site whose answers may take 6 s: longer than a first delivery attempt's 3 s.
  const patient = { ...connectors['woo-shop'], timeout: '6s' };
  const shopConnectors = loadShopConnectors({ SHOP_CONNECTORS: JSON.stringify({ ...connectors, 'woo-patient': patient }) });
  h = await startHarness({ env, shopConnectors, fake: { trackingStepPolls: 1 } });
});
afterAll(async () => {
  await h?.stop();
  await shopify?.close();
  await woo?.close();
  await env?.teardown();
});

async function run(input: ShipmentInput): Promise<ShipmentOutcome> {
  const started = await startShipment(h.env.client, h.taskQueue, input);
  const handle: WorkflowHandle = h.env.client.workflow.getHandle(started.workflowId);
  const outcome = (await handle.result()) as ShipmentOutcome;
  expect(outcome.shopSync).toMatchObject({ status: 'up_to_date' });
  return outcome;
}

const wooOrder = () => String(woo.createOrder({ status: 'processing', lineItems: [{ sku: 'BEAN-1', quantity: 1 }] }).id);

describe("a store's Retry-After", () => {
  it('a 503 with Retry-After on the first read of the first attempt: no call to the order or the store before it ends', async () => {
    woo.resetStats();
    woo.setFaults({ failNext: [{ route: 'GET order', kind: '503', retryAfterSeconds: 3 }] });
    const [busy, other] = [wooOrder(), wooOrder()];
    const began = Date.now();
    await Promise.all([
      run({ ...order('woo-shop', 'RA-1'), platformOrderId: busy }),
      // Another order of the same store, started a moment later: the store's hold holds it too.
      new Promise((resolve) => setTimeout(resolve, 300)).then(() => run({ ...order('woo-shop', 'RA-2'), platformOrderId: other })),
    ]);
    const stats = woo.stats();
    expect(stats.unavailable).toBe(1);
    expect(stats.callsBeforeRetryAfter, JSON.stringify(stats)).toBe(0);
    expect(stats.storeCallsBeforeRetryAfter, JSON.stringify(stats)).toBe(0);
    expect(Date.now() - began).toBeGreaterThanOrEqual(3_000);
    expect(woo.order(Number(busy))!.trackingItems).toHaveLength(1);
  });
});

describe('a write a slow host may still apply', () => {
  it("queued for 4 s while the first attempt's 3 s run out: the next attempt reads only once it can have landed, and writes nothing twice", async () => {
    woo.resetStats();
    woo.setFaults({ failNext: [{ route: 'POST shipment-trackings', kind: 'queued', delayMs: 4_000 }] });
    const id = wooOrder();
    await run({ ...order('woo-patient', 'SLOW-1'), platformOrderId: id });
    // The queued write has landed (it may come after the shipment ended).
    const stats = await waitFor(() => (woo.stats().lateWrites === 1 ? woo.stats() : undefined), {
      timeoutMs: 10_000,
      what: 'the queued write',
    });
    expect(woo.order(Number(id))!.trackingItems).toHaveLength(1);
    // Not written twice and cleaned up: written once.
    expect(stats.writesApplied['POST shipment-trackings'], JSON.stringify(stats.writesApplied)).toBe(1);
    expect(stats.writesApplied['DELETE shipment-tracking']).toBeUndefined();
  });
});
