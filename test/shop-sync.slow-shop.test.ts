/**
 * A slow shop on a real Temporal dev server: a shop that answers within the connector's timeout
 * gets every event, in order, however long the first attempt's few seconds are; only the
 * delivery window's own end makes a delivery `expired`.
 */
import { randomBytes } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startShipment } from '../order-import/start-shipment';
import { startShopReceiver, type ShopReceiver } from '../shop-receiver/server';
import { loadShopConnectors } from '../shop-sync/connectors';
import { stateQuery, type ShipmentOutcome } from '../workflows/definitions';
import { type ShipmentInput } from '../domain/shipment';
import { saveFixture } from './helpers/fixtures';
import { startHarness, type Harness } from './helpers/harness';
import { order } from './helpers/orders';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

let env: TestWorkflowEnvironment;
let slow: ShopReceiver;
let slower: ShopReceiver;
let down: ShopReceiver;
let h: Harness;
let shortWindow: Harness;

beforeAll(async () => {
  env = await createTestEnv();
  // Every answer comes 4 s after the event is stored: past the first attempt's 3 s, inside the 15 s timeout.
  slow = await startShopReceiver({ secrets: [SECRET], faults: { slowMs: 4_000 } });
  slower = await startShopReceiver({ secrets: [SECRET] });
  down = await startShopReceiver({ secrets: [SECRET], faults: { down: true } });
  const webhook = (r: ShopReceiver, shop: string) => ({ type: 'webhook', url: r.webhookUrl(shop), secrets: [SECRET] });
  const shops = { maxBackoff: '1s', slow: webhook(slow, 'slow'), slower: webhook(slower, 'slower') };
  // Tracking moves one stage per poll: a known, small number of events.
  const fake = { trackingStepPolls: 1 };
  h = await startHarness({ env, fake, shopConnectors: loadShopConnectors({ SHOP_CONNECTORS: JSON.stringify(shops) }) });
  shortWindow = await startHarness({
    env,
    fake,
    shopConnectors: loadShopConnectors({
      SHOP_CONNECTORS: JSON.stringify({ deliveryWindow: '4s', maxBackoff: '1s', closed: webhook(down, 'closed') }),
    }),
  });
}, 60_000);
afterAll(async () => {
  await h?.stop();
  await shortWindow?.stop();
  await Promise.all([slow?.close(), slower?.close(), down?.close()]);
  await env?.teardown();
});

async function start(input: ShipmentInput, on: Harness): Promise<WorkflowHandle> {
  const started = await startShipment(on.env.client, on.taskQueue, input);
  return on.env.client.workflow.getHandle(started.workflowId);
}

/** Every event 1..n arrived, in order, none missing; a resend of one the shop had is only a duplicate. */
function expectEveryEventInOrder(receiver: ShopReceiver, orderId: string, outcome: ShipmentOutcome): void {
  const view = receiver.state().orders.find((o) => o.orderId === orderId)!;
  const n = outcome.shopSync!.emitted;
  expect(n).toBeGreaterThanOrEqual(3);
  expect(view.received).toEqual(Array.from({ length: n }, (_, i) => i + 1));
  expect(view).toMatchObject({ missing: [], gap: false, outOfOrder: false });
  expect(outcome.shopSync).toMatchObject({ status: 'up_to_date', delivered: n, failure: null });
}

/** The workflow's history records the hand-over: a first attempt (local activity marker) that failed, then the delivery activity. */
async function handedOver(handle: WorkflowHandle): Promise<boolean> {
  const history = (await handle.fetchHistory()).events ?? [];
  const failedFirst = history.findIndex((e) => e.markerRecordedEventAttributes?.failure);
  return (
    failedFirst >= 0 &&
    history.slice(failedFirst + 1).some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'deliverShopEvents')
  );
}

describe('a slow shop', () => {
  it('answering after 4 s (beyond the first attempt, inside the timeout) gets every event in order, and the shipment completes', async () => {
    const handle = await start(order('slow', 'SLOW-4'), h);
    const outcome = (await handle.result()) as ShipmentOutcome;
    expect(outcome.outcome).toBe('delivered');
    expectEveryEventInOrder(slow, 'SLOW-4', outcome);
    expect(await handedOver(handle)).toBe(true);
    await saveFixture(handle, 'shop-sync-slow-shop');
  });

  it('answering after 14 s, just inside the 15 s timeout, is waited for: nothing expires', async () => {
    await slower.setFaults({ slowMs: 14_000 });
    const handle = await start(order('slower', 'SLOW-14'), h);
    try {
      // The first attempt's request and the delivery activity's resend of event 1 have both arrived: the
      // resend is held 14 s; the events after it need not be.
      await waitFor(() => ((slower.state().orders.find((o) => o.orderId === 'SLOW-14')?.duplicates ?? 0) >= 1 ? true : undefined), {
        timeoutMs: 30_000,
        intervalMs: 50,
        what: 'the delivery activity to resend event 1 after the first attempt ran out of time',
      });
    } finally {
      await slower.setFaults({ slowMs: 0 });
    }
    const outcome = (await handle.result()) as ShipmentOutcome;
    expectEveryEventInOrder(slower, 'SLOW-14', outcome);
    const state = await handle.query(stateQuery);
    expect(state.shopSync?.status).toBe('up_to_date');
  }, 90_000);

  it('a shop that stays down past the delivery window is still marked expired when the window ends', async () => {
    const handle = await start(order('closed', 'SLOW-X'), shortWindow);
    const outcome = (await handle.result()) as ShipmentOutcome;
    expect(outcome.outcome).toBe('delivered');
    expect(outcome.shopSync).toMatchObject({ status: 'expired', delivered: 0 });
    expect(outcome.shopSync!.failure!.message).toMatch(/^not delivered within the delivery window \(4s\)/);
    await saveFixture(handle, 'shop-sync-window-expired');
  }, 60_000);
});
