/**
 * The shop pull through real worker processes: a worker SIGKILLed in the middle of a pull and a
 * store outage after it; a new worker process finishes the pull from the heartbeated page. Every
 * order that needs a label has exactly one shipment, the pull's counts add up, and the killed
 * worker's page reading is taken over within its heartbeat timeout.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import { cursorOf, triggerPull } from '../shop-import/schedule';
import { WORKFLOW_TYPE } from '../workflow-definitions/shipment';
import { shipmentWorkflowId } from '../domain/shipment';
import { shopPullScheduleId, type ShopPullResult } from '../workflow-definitions/shop-pull';
import { TEST_CREDENTIALS } from './helpers/harness';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';
import { killWorkerProcesses, startWorkerProcess, workerEnv, type WorkerProcess } from './helpers/worker-process';

let env: TestWorkflowEnvironment;
let api: FakeShippingApi;
let woo: FakeWooCommerce;

beforeAll(async () => {
  env = await createTestEnv();
  api = await startFakeShippingApi({ port: 0, accounts: [{ name: 'main', ...TEST_CREDENTIALS }] });
  woo = await startFakeWooCommerce({ timezone: 'America/Los_Angeles', hpos: true });
});
afterAll(async () => {
  killWorkerProcesses();
  await Promise.all([api?.close(), woo?.close()]);
  await env?.teardown();
});

const SHOP = 'crash-woo';

function startWorker(taskQueue: string): Promise<WorkerProcess> {
  return startWorkerProcess({
    ...workerEnv(env.address, taskQueue, api.baseUrl),
    SHOP_CONNECTORS: JSON.stringify({
      [SHOP]: {
        type: 'woocommerce',
        url: woo.baseUrl,
        consumerKey: 'ck_fake_dev_key',
        consumerSecret: 'cs_fake_dev_secret',
        timeout: '40s', // the held page (below) waits its whole 30 s, not a retry after 2 s
        import: {
          every: '1h',
          paused: true, // only the test's triggers pull: no tick of the schedule mid-test
          firstPull: '2d',
          pageSize: 10,
          mapping: {
            defaultService: { courier: 'dpd-de', productCode: 'DPD_CLASSIC' },
            shipFrom: { address: { streetLines: ['Rua das Flores 10'], city: 'Porto', postalCode: '4050-262', countryCode: 'PT' } },
            orderIdPrefix: 'C-',
          },
        },
      },
    }),
  });
}

it('a worker killed mid-pull and a store outage: the next worker goes on from the last page; each order exactly one shipment', async () => {
  const taskQueue = `pull-crash-${randomUUID()}`;
  const made = woo.generateOrders({ count: 200, seed: 7, spreadSeconds: 3600 });
  // The pull's eighth page is held by the store for 30 s: the kill lands in the middle of the pull
  // however fast the first seven went (a loaded machine once saw the whole pull end before it).
  const page = { route: 'GET orders', params: { lacks: 'include=' } } as const;
  woo.setFaults({
    latencyMs: 60,
    failNext: [
      ...Array.from({ length: 7 }, () => ({ ...page, kind: 'slow' as const, delayMs: 60 })),
      { ...page, kind: 'queued', delayMs: 30_000 },
    ],
  });
  const first = await startWorker(taskQueue);
  const schedule = env.client.schedule.getHandle(shopPullScheduleId(SHOP));
  await waitFor(async () => (await schedule.describe().catch(() => undefined)) && true, {
    what: 'the schedule the worker applies',
    timeoutMs: 60_000,
    intervalMs: 200,
  });
  const since = Date.now();
  await triggerPull(env.client, SHOP);
  const shipments = async () => (await env.client.workflow.count(`WorkflowType = '${WORKFLOW_TYPE}' AND ShipmentShop = '${SHOP}'`)).count;
  await waitFor(async () => ((await shipments()) >= 40 ? true : undefined), {
    what: '40 shipments started',
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  const run = (await schedule.describe()).info.recentActions.find((a) => a.takenAt.getTime() >= since)!.action.workflow;
  const pullHandle = env.client.workflow.getHandle(run.workflowId, run.firstExecutionRunId);
  first.child.kill('SIGKILL');
  const killedAt = Date.now();
  const retry = retryOfKilledAttempt(pullHandle);
  expect(await first.exited).toBeNull();
  const atKill = await shipments();

  // The store is down when the next worker takes the pull over.
  woo.setFaults({ down: true });
  const second = await startWorker(taskQueue);
  setTimeout(() => woo.setFaults({ down: false, latencyMs: 0 }), 5_000);
  const result = (await pullHandle.result()) as ShopPullResult;
  // The killed worker's page reading is given to the next one 15 s after its last heartbeat (and
  // the retry's 2 s), not half a minute: every webhook's pull waits behind this one.
  const { lastBeat, nextAttempt } = await retry;
  expect(nextAttempt - lastBeat, 'from the last heartbeat to the retry').toBeLessThan(22_000);
  expect(nextAttempt - killedAt, 'from the kill to the retry').toBeLessThan(22_000);

  const cursor = cursorOf(await schedule.describe());
  const orders = woo.orders().filter((o) => o.id >= made.firstId && o.id <= made.lastId);
  let missed = 0;
  let withShipment = 0;
  for (const o of orders) {
    const pickup = o.shippingMethod?.methodId === 'local_pickup';
    const retried = cursor.retry.includes(String(o.id));
    const exists = await env.client.workflow
      .getHandle(shipmentWorkflowId({ shop: SHOP, orderId: `C-${o.number}` }))
      .describe()
      .then(() => true)
      .catch(() => false);
    if (exists) withShipment++;
    if (!pickup && !retried && !exists) missed++;
    if (pickup) expect(exists, `pickup order ${o.id}`).toBe(false);
  }
  expect(missed).toBe(0);
  expect(atKill, 'the kill came in the middle of the pull').toBeLessThan((await shipments()) - 20);
  // Pages read twice (the killed attempt's last ones) are already known, never started twice: the
  // shop's shipments are exactly its orders that have one. (Not "every order but the retry list":
  // an order whose shipment could not take a re-read page's news yet is read again next pull,
  // and is in the retry list with its shipment.)
  await waitFor(async () => ((await shipments()) === withShipment ? true : undefined), {
    what: `the shop's shipments, one per order that has one (${withShipment})`,
    timeoutMs: 10_000,
    intervalMs: 200,
  });
  expect(result.counts.started).toBeLessThanOrEqual(await shipments());
  second.child.kill('SIGTERM');
  await second.exited;
}, 180_000);

const millis = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  t ? Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : null;

/** Watches the pull's page reading: its last heartbeat before the kill, and when its retry was scheduled for. */
async function retryOfKilledAttempt(handle: WorkflowHandle): Promise<{ lastBeat: number; nextAttempt: number }> {
  let lastBeat: number | null = null;
  return waitFor(
    async () => {
      const pending = (await handle.describe()).raw.pendingActivities?.find((a) => a.activityType?.name === 'pullShopOrders');
      if (!pending) return undefined;
      lastBeat = millis(pending.lastHeartbeatTime) ?? lastBeat;
      return (pending.attempt ?? 0) >= 2 && lastBeat !== null ? { lastBeat, nextAttempt: millis(pending.scheduledTime)! } : undefined;
    },
    { what: "the killed attempt's retry", timeoutMs: 60_000, intervalMs: 250 },
  );
}
