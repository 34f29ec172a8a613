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
import { loadShopConnectors } from '../platforms/connectors';
import { shopPullScheduleId } from '../workflow-definitions/shop-pull';
import { startHarness, type Harness } from './helpers/harness';
import { fakeShopifyEntry, fulfilShopifyOrder } from './helpers/platforms';
import { pullNow } from './helpers/shop-pulls';
import { createTestEnv } from './helpers/temporal-env';
import { holdTrackingBack } from './helpers/api';
import { runCli } from './helpers/cli';
import { waitFor } from './helpers/wait';
import { stateQuery, WORKFLOW_TYPE } from '../workflow-definitions/shipment';

const SHOP = 'first-cursor';
let env: TestWorkflowEnvironment;
let shopify: FakeShopify;
let h: Harness;
let config: Record<string, unknown>;

beforeAll(async () => {
  env = await createTestEnv();
  shopify = await startFakeShopify();
  config = {
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
  };
  const connectors = loadShopConnectors({ SHOP_CONNECTORS: JSON.stringify(config) });
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

it('a shipment started by import --from and labelled before the first pull hears the address the merchant moved after that pull', async () => {
  const order = shopify.createOrder({ lineItems: [{ sku: 'MAT-1', quantity: 1, grams: 500 }] });
  const release = holdTrackingBack(h.fake); // the shipment stays in tracking
  try {
    const run = await runCli(['import', '--from', SHOP, '--since', '2h', '--skip-preflight', '--max-backlog', '0', '--json'], {
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
    // Labelled and written back: the order is fulfilled, so a pull without a cursor leaves it out.
    await waitFor(() => (shopify.order(order.legacyResourceId)!.displayFulfillmentStatus === 'FULFILLED' ? true : undefined), {
      what: 'the write-back of the label',
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    let workflowId = '';
    for await (const w of env.client.workflow.list({
      query: `WorkflowType = '${WORKFLOW_TYPE}' AND ShipmentShop = '${SHOP}' AND ExecutionStatus = 'Running'`,
    }))
      workflowId = w.workflowId;
    expect(workflowId).not.toBe('');
    expect((await pullNow(h.env.client, SHOP)).counts.changed).toBe(0);

    shopify.editOrder(order.legacyResourceId, { shippingAddress: { zip: '20095' } });
    expect((await pullNow(h.env.client, SHOP)).counts.changed).toBe(1);
    const state = await env.client.workflow.getHandle(workflowId).query(stateQuery);
    expect(state.shopOrder!.attention).toBe('address_changed');
  } finally {
    release();
  }
});
