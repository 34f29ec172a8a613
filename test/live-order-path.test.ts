/**
 * A live order's path during a backlog, through real workers on the dev server (issue 30,
 * placed → label ≤ 5 s): its webhook's pull does not wait behind the shop's running pull, and its
 * shipment runs on a queue with slots of its own, so backlog shipments holding every slot of the
 * shipments' worker (first attempts waiting on a slow API) cannot keep its first task waiting.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { liveShipmentTaskQueue } from '../domain/priority';
import { priorityDevServerArgs } from '../dev-server/server-priority';
import { startFakeShippingApi } from '../fake-shipping-api/server';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { startShipment } from '../order-import/start-shipment';
import { applySchedule, cursorOf, importShops, pullNow, triggerPull } from '../shop-import/schedule';
import { loadShopConnectors, type ShopConnectors } from '../platforms/connectors';
import { createPullWorker, createShipmentWorkers } from '../worker/create-worker';
import { shopPullScheduleId } from '../workflow-definitions/shop-pull';
import { TRACKING_POLLER_WORKFLOW_TYPE } from '../workflow-definitions/tracking-poller';
import { FAKE_TRACKING_STEP_MS, FAST_TRACKING, TEST_CREDENTIALS } from './helpers/harness';
import { saveFixture } from './helpers/fixtures';
import { order } from './helpers/orders';
import { createTestEnv, getWorkflowBundle } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';

let env: TestWorkflowEnvironment;
let shopify: FakeShopify;

beforeAll(async () => {
  env = await createTestEnv({ server: { extraArgs: priorityDevServerArgs() } });
  shopify = await startFakeShopify();
});
afterAll(async () => {
  await shopify?.close();
  await env?.teardown();
});

function connectorsFor(shop: string, store: FakeShopify = shopify): ShopConnectors {
  return loadShopConnectors({
    SHOP_CONNECTORS: JSON.stringify({
      [shop]: {
        type: 'shopify',
        storeDomain: 'fake-store.myshopify.com',
        adminUrl: store.baseUrl,
        accessToken: 'shpat_fake_dev_token',
        webhookSecret: 'fake-client-secret',
        import: {
          every: '1h',
          paused: true, // only the test pulls: no tick mid-test
          firstPull: '1d',
          mapping: { shippingMethods: { Standard: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' } }, orderIdPrefix: `${shop}-` },
        },
      },
    }),
  });
}

const newOrder = (store: FakeShopify = shopify, at?: string) =>
  store.createOrder({
    lineItems: [{ sku: 'TENT-2', quantity: 1, grams: 2400 }],
    ...(at === undefined ? {} : { createdAt: at, updatedAt: at }),
  });

/** The shop's schedule applied and pulled once (a cursor to start from), as on a worker that ran a while. */
async function pulledOnce(shop: string, connectors: ShopConnectors, taskQueue: string) {
  for (const connector of importShops(connectors)) await applySchedule(env.client, connector, taskQueue);
  const schedule = env.client.schedule.getHandle(shopPullScheduleId(shop));
  await triggerPull(env.client, shop);
  await waitFor(async () => (cursorOf(await schedule.describe()).since !== null ? true : undefined), {
    what: 'the first pull',
    timeoutMs: 30_000,
    intervalMs: 100,
  });
  return schedule;
}

async function shipmentsOf(shop: string, taskQueue?: string): Promise<number> {
  const queue = taskQueue === undefined ? '' : ` AND TaskQueue = '${taskQueue}'`;
  return (await env.client.workflow.count(`ShipmentShop = '${shop}'${queue}`)).count;
}

it("a webhook's pull starts the new order's shipment while the shop's scheduled pull still runs", async () => {
  const shop = `wh-${randomUUID().slice(0, 8)}`;
  const connectors = connectorsFor(shop);
  const taskQueue = `shipments-${randomUUID()}`; // no shipment worker: shipments wait there
  const pulls = await createPullWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    shopConnectors: connectors,
    workflowBundle: await getWorkflowBundle(),
  });
  await pulls.runUntil(async () => {
    newOrder();
    await pulledOnce(shop, connectors, taskQueue);
    await waitFor(async () => ((await shipmentsOf(shop)) === 1 ? true : undefined), { what: 'the first shipment', timeoutMs: 10_000 });
    // The schedule's next run reads a page whose answer takes 10 s (inside the platform's timeout): a pull that lasts, as under a backlog.
    const SLOW_MS = 10_000;
    shopify.setFaults({ failNext: [{ operation: 'orders', kind: 'slow', delayMs: SLOW_MS }] });
    const slowFrom = Date.now();
    await triggerPull(env.client, shop);
    await waitFor(() => (shopify.setFaults({}).failNext.length === 0 ? true : undefined), { what: 'its slow read', timeoutMs: 10_000 });

    const { name } = newOrder(); // placed now: the webhook comes
    expect(await pullNow(env.client, shop)).toEqual({ namedOrders: false, cursor: 'webhook pull' });
    const started = await waitFor(
      async () => {
        for await (const w of env.client.workflow.list({ query: `ShipmentShop = '${shop}'` }))
          if (w.workflowId.endsWith(name.replace('#', ''))) return w.startTime.getTime();
        return undefined;
      },
      { what: "the new order's shipment", timeoutMs: 30_000, intervalMs: 100 },
    );
    // Before the running pull's read was answered: not behind it (before, it came from that pull or the next).
    expect(started).toBeLessThan(slowFrom + SLOW_MS);
    // The webhook pull leaves the cursor to the schedule's runs.
    const webhookPull = env.client.workflow.getHandle(`${shopPullScheduleId(shop)}-webhook-0`);
    await webhookPull.result();
    const events = (await webhookPull.fetchHistory()).events ?? [];
    const activities = events.flatMap((e) =>
      e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType?.name] : [],
    );
    expect(activities).toEqual(['pullShopOrders']);
    await saveFixture(webhookPull, 'live-webhook-pull');

    // Another webhook naming no order while that pull from the cursor reads: the schedule's next run
    // is buffered (the trailing read), not a second pull of the same pages sharing the cost bucket.
    shopify.setFaults({ failNext: [{ operation: 'orders', kind: 'slow', delayMs: 5_000 }] });
    expect(await pullNow(env.client, shop)).toEqual({ namedOrders: false, cursor: 'webhook pull' });
    await waitFor(() => (shopify.setFaults({}).failNext.length === 0 ? true : undefined), { what: 'its slow read', timeoutMs: 10_000 });
    expect(await pullNow(env.client, shop)).toEqual({ namedOrders: false, cursor: 'buffered' });
    await webhookPull.result();
  });
});

it("a live order's first task runs while backlog shipments hold every slot of the shipments' worker", async () => {
  const shop = `lq-${randomUUID().slice(0, 8)}`;
  const store = await startFakeShopify(); // its own: no order of the test before
  const connectors = connectorsFor(shop, store);
  const taskQueue = `shipments-${randomUUID()}`;
  // Each label's answer takes 12 s: a backlog shipment's first attempt holds its workflow task slot that long.
  const API_LATENCY_MS = 12_000;
  const api = await startFakeShippingApi({
    port: 0,
    trackingStepMs: FAKE_TRACKING_STEP_MS,
    accounts: [{ name: 'main', ...TEST_CREDENTIALS }],
    faults: { latencyMs: API_LATENCY_MS, endpoints: ['POST /labels'] },
  });
  const bundle = await getWorkflowBundle();
  const { shipments, live } = await createShipmentWorkers({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    shippingApi: { baseUrl: api.baseUrl, ...TEST_CREDENTIALS },
    tracking: FAST_TRACKING,
    workflowBundle: bundle,
    maxConcurrentWorkflowTaskExecutions: 2, // the SDK's least with a cache: two backlog tasks fill it
  });
  const pulls = await createPullWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    shopConnectors: connectors,
    workflowBundle: bundle,
    liveTaskQueue: liveShipmentTaskQueue(taskQueue),
  });
  const labels = () => api.labels().filter((l) => l.idempotencyKey.includes(shop));
  try {
    await shipments.runUntil(() =>
      live!.runUntil(() =>
        pulls.runUntil(async () => {
          newOrder(store, new Date(Date.now() - 2 * 3_600_000).toISOString()); // an old open order: backlog
          await pulledOnce(shop, connectors, taskQueue);
          for (let i = 0; i < 2; i++) await startShipment(env.client, taskQueue, order(shop, `B-${i}`)); // a file's: backlog
          // The slots are held: the old order's first attempt waits for its answer, the backlog for a slot.
          await waitFor(() => (labels().length >= 1 ? true : undefined), { what: 'the backlog under way', timeoutMs: 20_000 });
          const firstAnswer = Math.min(...labels().map((l) => Date.parse(l.createdAt))) + API_LATENCY_MS;

          const { name } = newOrder(store);
          await pullNow(env.client, shop);
          const liveLabel = await waitFor(() => labels().find((l) => l.customerOrderNumber === name), {
            what: "the live order's label",
            timeoutMs: 30_000,
            intervalMs: 50,
          });
          // Its call went out before the call holding a slot was answered (before, it waited for that slot).
          expect(Date.parse(liveLabel.createdAt)).toBeLessThan(firstAnswer);
          // It ran on the live queue, and was tracked by the shipments' queue's pollers: none runs on the live queue.
          const liveQueue = liveShipmentTaskQueue(taskQueue);
          const onLiveQueue: string[] = [];
          for await (const w of env.client.workflow.list({ query: `ShipmentShop = '${shop}' AND TaskQueue = '${liveQueue}'` }))
            onLiveQueue.push(w.workflowId);
          expect(onLiveQueue).toHaveLength(1);
          await env.client.workflow.getHandle(onLiveQueue[0]!).result(); // delivered: tracked to the end
          const pollers = (queue: string) =>
            env.client.workflow.count(`WorkflowType = '${TRACKING_POLLER_WORKFLOW_TYPE}' AND TaskQueue = '${queue}'`);
          expect((await pollers(taskQueue)).count).toBeGreaterThan(0);
          expect((await pollers(liveQueue)).count).toBe(0);
        }),
      ),
    );
  } finally {
    await api.close();
    await store.close();
  }
  // Its own waits add up past the default 60 s (20 s, 30 s, then tracking to delivered): a loaded CI machine once took them.
}, 150_000);
