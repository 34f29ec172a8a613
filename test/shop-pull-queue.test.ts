/**
 * Pulls never queue behind shipments: the shop's pull runs on a task queue of its own, with the
 * pull worker's own slots. Here the shipments' queue has no worker at all (the extreme of a
 * backlog that does not drain): the pull still reads the store and starts its shipments, which
 * wait durably on the shipments' queue. Before pulls had their own queue, this pull never ran.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { applySchedule, importShops, triggerPull } from '../shop-import/schedule';
import { loadShopConnectors } from '../platforms/connectors';
import { createPullWorker } from '../worker/create-worker';
import { shopPullScheduleId, shopPullTaskQueue, type ShopPullResult } from '../workflow-definitions/shop-pull';
import { createTestEnv, getWorkflowBundle } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';

let env: TestWorkflowEnvironment;
let shopify: FakeShopify;

beforeAll(async () => {
  env = await createTestEnv();
  shopify = await startFakeShopify();
});
afterAll(async () => {
  await shopify?.close();
  await env?.teardown();
});

it('a pull runs on its own queue while no shipment worker takes a task; its shipments wait on the shipments queue', async () => {
  const shop = 'queue-shopify';
  const connectors = loadShopConnectors({
    SHOP_CONNECTORS: JSON.stringify({
      [shop]: {
        type: 'shopify',
        storeDomain: 'fake-store.myshopify.com',
        adminUrl: shopify.baseUrl,
        accessToken: 'shpat_fake_dev_token',
        webhookSecret: 'fake-client-secret',
        import: {
          every: '1h',
          paused: true, // only the test's triggers pull: no tick of the schedule mid-test
          firstPull: '1d',
          mapping: { shippingMethods: { Standard: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' } }, orderIdPrefix: 'Q-' },
        },
      },
    }),
  });
  for (let i = 0; i < 3; i++) shopify.createOrder({ lineItems: [{ sku: 'TENT-2', quantity: 1, grams: 2400 }] });
  const taskQueue = `shipments-${randomUUID()}`; // no worker polls it
  const worker = await createPullWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    shopConnectors: connectors,
    workflowBundle: await getWorkflowBundle(),
  });
  await worker.runUntil(async () => {
    for (const connector of importShops(connectors)) await applySchedule(env.client, connector, taskQueue);
    const schedule = env.client.schedule.getHandle(shopPullScheduleId(shop));
    expect((await schedule.describe()).action.taskQueue).toBe(shopPullTaskQueue(taskQueue));

    const since = Date.now();
    await triggerPull(env.client, shop);
    const run = await waitFor(
      async () => (await schedule.describe()).info.recentActions.find((a) => a.takenAt.getTime() >= since)?.action.workflow,
      { what: 'the triggered pull', timeoutMs: 30_000, intervalMs: 100 },
    );
    const result = (await env.client.workflow.getHandle(run.workflowId, run.firstExecutionRunId).result()) as ShopPullResult;
    expect(result.counts).toMatchObject({ read: 3, started: 3 });
    // The shipments it started wait on the shipments' queue, not the pulls'.
    const waiting = await env.client.workflow.count(
      `ShipmentShop = '${shop}' AND TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`,
    );
    expect(waiting.count).toBe(3);
  });
});
