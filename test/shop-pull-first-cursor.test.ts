/**
 * A shop whose orders were labelled before its schedule first ran (started by `import --from`, or
 * fulfilled elsewhere): Shopify's first pull reads nothing (a pull without a cursor leaves
 * fulfilled orders out), yet it sets the cursor, so the next pull reads the changes of orders we
 * fulfilled; WooCommerce's pulls read by status, so the same change reaches its shipment there too.
 * Real dev server, the fake stores over loopback.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import { applySchedule, cursorOf, importShops } from '../shop-import/schedule';
import { loadShopConnectors } from '../platforms/connectors';
import { shopPullScheduleId } from '../workflow-definitions/shop-pull';
import { startHarness, type Harness } from './helpers/harness';
import { fakeShopifyEntry, fakeWooEntry, fulfilShopifyOrder, PORTO_SHIP_FROM } from './helpers/platforms';
import { pullNow } from './helpers/shop-pulls';
import { createTestEnv } from './helpers/temporal-env';
import { holdTrackingBack } from './helpers/api';
import { runCli } from './helpers/cli';
import { waitFor } from './helpers/wait';
import { stateQuery, WORKFLOW_TYPE } from '../workflow-definitions/shipment';

const SHOP = 'first-cursor';
const WOO_SHOP = 'first-cursor-woo';
let env: TestWorkflowEnvironment;
let shopify: FakeShopify;
let woo: FakeWooCommerce;
let h: Harness;
let config: Record<string, unknown>;

beforeAll(async () => {
  env = await createTestEnv();
  shopify = await startFakeShopify();
  woo = await startFakeWooCommerce();
  // Paused: only the test's triggers pull.
  const imported = (more: Record<string, unknown> = {}) => ({
    every: '1h',
    overlap: '2m',
    firstPull: '1d',
    paused: true,
    mapping: {
      shippingMethods: {
        Standard: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' },
        flat_rate: { courier: 'dpd-de', productCode: 'DPD_CLASSIC' },
      },
      units: { weight: 'kg' },
      ...more,
    },
  });
  config = {
    maxBackoff: '1s',
    [SHOP]: fakeShopifyEntry(shopify.baseUrl, { import: imported() }),
    [WOO_SHOP]: fakeWooEntry(woo.baseUrl, { import: imported({ shipFrom: PORTO_SHIP_FROM }) }),
  };
  const connectors = loadShopConnectors({ SHOP_CONNECTORS: JSON.stringify(config) });
  h = await startHarness({ env, shopConnectors: connectors });
  for (const connector of importShops(connectors)) await applySchedule(h.env.client, connector, h.taskQueue);
});
afterAll(async () => {
  await h?.stop();
  await shopify?.close();
  await woo?.close();
  await env?.teardown();
});

it('a first pull that reads no order still sets the cursor, and the next pull reads the change of a fulfilled order', async () => {
  // Labelled and fulfilled before the schedule first ran.
  const order = shopify.createOrder({ lineItems: [{ sku: 'TENT-2', quantity: 1, grams: 2400 }] });
  await fulfilShopifyOrder(shopify.baseUrl, order);

  const first = await pullNow(h.env.client, SHOP);
  expect(first.counts.read).toBe(0);
  const cursor = cursorOf(await h.env.client.schedule.getHandle(shopPullScheduleId(SHOP)).describe());
  expect(cursor.since).not.toBeNull();

  // The merchant moves the address after the label: the next pull reads the fulfilled order.
  shopify.editOrder(order.legacyResourceId, { shippingAddress: { address2: 'Floor 3' } });
  const next = await pullNow(h.env.client, SHOP);
  expect(next.counts.read).toBe(1);
});

interface Store {
  shop: string;
  /** A new order, and the edit that moves its address. */
  place(): { moveAddress(): void };
}

const stores: Store[] = [
  {
    shop: SHOP,
    place() {
      const order = shopify.createOrder({ lineItems: [{ sku: 'MAT-1', quantity: 1, grams: 500 }] });
      return { moveAddress: () => void shopify.editOrder(order.legacyResourceId, { shippingAddress: { zip: '20095' } }) };
    },
  },
  {
    shop: WOO_SHOP,
    place() {
      const order = woo.createOrder({
        status: 'processing',
        lineItems: [{ sku: 'PORT-10', quantity: 1, weight: '1.5' }],
        shipping: { postcode: '1100-001', country: 'PT', city: 'Lisboa', address_1: 'Rua Nova 3' },
      });
      return { moveAddress: () => void woo.editOrder(order.id, { shipping: { postcode: '4000-100' } }) };
    },
  },
];

it.each(stores)(
  '$shop: a shipment started by import --from and labelled before the first pull hears the address the merchant moved after that pull',
  async ({ shop, place }) => {
    const order = place();
    const release = holdTrackingBack(h.fake); // the shipment stays in tracking
    try {
      const run = await runCli(['import', '--from', shop, '--since', '2h', '--skip-preflight', '--max-backlog', '0', '--json'], {
        env: {
          TEMPORAL_ADDRESS: env.address,
          TEMPORAL_NAMESPACE: 'default',
          TEMPORAL_TASK_QUEUE: h.taskQueue,
          SHOP_CONNECTORS: JSON.stringify(config),
          ...h.shippingEnv,
        },
        timeoutMs: 120_000,
      });
      expect(run.code, `${run.stderr}\n${run.stdout}`).toBe(0);
      let workflowId = '';
      for await (const w of env.client.workflow.list({
        query: `WorkflowType = '${WORKFLOW_TYPE}' AND ShipmentShop = '${shop}' AND ExecutionStatus = 'Running'`,
      }))
        workflowId = w.workflowId;
      expect(workflowId).not.toBe('');
      const handle = env.client.workflow.getHandle(workflowId);
      // Labelled and written back (on Shopify the order is then fulfilled: a pull without a cursor leaves it out).
      await waitFor(async () => ((await handle.query(stateQuery)).shopSync?.delivered ?? 0) >= 1 || undefined, {
        what: 'the write-back of the label',
        timeoutMs: 30_000,
        intervalMs: 100,
      });
      expect((await pullNow(h.env.client, shop)).counts.changed).toBe(0);

      order.moveAddress();
      expect((await pullNow(h.env.client, shop)).counts.changed).toBe(1);
      expect((await handle.query(stateQuery)).shopOrder!.attention).toBe('address_changed');
    } finally {
      release();
    }
  },
);
