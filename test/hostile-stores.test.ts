import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { editJson, startHostileStore, type HostileStore } from '../chaos/hostile-store';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import { startShipment } from '../order-import/start-shipment';
import { loadShopConnectors } from '../shop-sync/connectors';
import type { ShipmentOutcome } from '../workflows/definitions';
import { startHarness, type Harness } from './helpers/harness';
import { order } from './helpers/orders';
import { platformConnectors } from './helpers/platforms';
import { createTestEnv } from './helpers/temporal-env';

let env: TestWorkflowEnvironment;
let shopify: FakeShopify;
let woo: FakeWooCommerce;
let hostileShopify: HostileStore;
let hostileWoo: HostileStore;
let h: Harness;

beforeAll(async () => {
  env = await createTestEnv();
  shopify = await startFakeShopify();
  woo = await startFakeWooCommerce();
  hostileShopify = await startHostileStore(shopify.baseUrl);
  hostileWoo = await startHostileStore(woo.baseUrl);
  const shopConnectors = loadShopConnectors({ SHOP_CONNECTORS: JSON.stringify(platformConnectors(hostileShopify.url, hostileWoo.url)) });
  h = await startHarness({ env, shopConnectors, fake: { trackingStepPolls: 1 } });
});
afterAll(async () => {
  await h?.stop();
  await hostileShopify?.close();
  await hostileWoo?.close();
  await shopify?.close();
  await woo?.close();
  await env?.teardown();
});

describe('Shopify write-back', () => {
  it('an absurd throttleStatus does not stop the worker', async () => {
    hostileShopify.tamper((_req, answer) =>
      editJson(answer, (json) => {
        if (json?.extensions?.cost)
          json.extensions.cost.throttleStatus = { maximumAvailable: 1000, currentlyAvailable: -1e308, restoreRate: 1e-300 };
      }),
    );
    const id = shopify.createOrder({ lineItems: [{ sku: 'BEAN-1', quantity: 1 }] }).legacyResourceId;
    const started = await startShipment(h.env.client, h.taskQueue, { ...order('shopify-shop', 'S-HOSTILE-1'), platformOrderId: id });
    await new Promise((r) => setTimeout(r, 8000));
    hostileShopify.tamper(null);
    const outcome = (await h.env.client.workflow.getHandle(started.workflowId).result()) as ShipmentOutcome;
    expect(outcome.shopSync).toMatchObject({ status: 'up_to_date' });
    expect(h.worker.getState()).toBe('RUNNING');
  });
});
