/**
 * A Shopify shop whose orders were labelled before its schedule first ran (started by
 * `import --from`, or fulfilled elsewhere): that first pull reads nothing (a pull without a cursor
 * leaves fulfilled orders out), yet it sets the cursor, so the next pull reads the changes of
 * orders we fulfilled. Real dev server, the fake Shopify over loopback.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { applySchedule, cursorOf, importShops } from '../shop-import/schedule';
import { loadShopConnectors } from '../shop-sync/connectors';
import { shopPullScheduleId } from '../workflows/shop-pull/definitions';
import { startHarness, type Harness } from './helpers/harness';
import { fakeShopifyEntry, fulfilShopifyOrder } from './helpers/platforms';
import { pullNow } from './helpers/shop-pulls';
import { createTestEnv } from './helpers/temporal-env';

const SHOP = 'first-cursor';
let env: TestWorkflowEnvironment;
let shopify: FakeShopify;
let h: Harness;

beforeAll(async () => {
  env = await createTestEnv();
  shopify = await startFakeShopify();
  const connectors = loadShopConnectors({
    SHOP_CONNECTORS: JSON.stringify({
      maxBackoff: '1s',
      [SHOP]: fakeShopifyEntry(shopify.baseUrl, {
        // Paused: only the test's triggers pull.
        import: {
          every: '1h',
          overlap: '2m',
          firstPull: '1d',
          paused: true,
          mapping: { shippingMethods: { Standard: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' } }, units: { weight: 'kg' } },
        },
      }),
    }),
  });
  h = await startHarness({ env, shopConnectors: connectors });
  for (const connector of importShops(connectors)) await applySchedule(h.env.client, connector, h.taskQueue);
});
afterAll(async () => {
  await h?.stop();
  await shopify?.close();
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
