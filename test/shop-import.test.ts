/**
 * Orders pulled straight from the shop, on the real dev server against the local Shopify and
 * WooCommerce fakes over loopback: which orders become shipments (and which are skipped or
 * reported), the cursor kept in the schedule, the retry list, no feedback loop from the
 * write-back, nothing missed or doubled while orders change mid-pull, and a signed platform
 * webhook starting the pull.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowNotFoundError } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import { applySchedule, cursorOf, importShops, pullPhaseMs, triggerPull, triggerShop } from '../shop-import/schedule';
import { loadShopConnectors, type ShopConnectors } from '../platforms/connectors';
import { startShopTrigger, type ShopTrigger } from '../shop-trigger';
import { WORKFLOW_TYPE } from '../workflow-definitions/shipment';
import { shipmentWorkflowId, type ShipmentInput } from '../domain/shipment';
import { shopPullScheduleId } from '../workflow-definitions/shop-pull';
import { runCli } from './helpers/cli';
import { startHarness, type Harness } from './helpers/harness';
import { pullNow as pullShop, waitForPull as waitForShopPull } from './helpers/shop-pulls';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';

let env: TestWorkflowEnvironment;
let shopify: FakeShopify;
let woo: FakeWooCommerce;
let h: Harness;
let connectors: ShopConnectors;

const MAPPING = {
  shippingMethods: {
    Standard: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' },
    flat_rate: { courier: 'dpd-de', productCode: 'DPD_CLASSIC' },
  },
  units: { weight: 'kg', dimension: 'cm' },
};
const WOO_SHIP_FROM = { address: { streetLines: ['Rua das Flores 10'], city: 'Porto', postalCode: '4050-262', countryCode: 'PT' } };

function shopConnectors(shopifyUrl: string, wooUrl: string) {
  // Paused: only the tests' triggers pull, never a tick of the schedule in the middle of a test.
  const imported = (extra: Record<string, unknown> = {}) => ({ every: '1h', overlap: '2m', firstPull: '1d', paused: true, ...extra });
  return {
    maxBackoff: '1s',
    'pull-shopify': {
      type: 'shopify',
      storeDomain: 'fake-store.myshopify.com',
      adminUrl: shopifyUrl,
      accessToken: 'shpat_fake_dev_token',
      webhookSecret: 'fake-client-secret',
      timeout: '2s',
      import: imported({ mapping: { ...MAPPING, orderIdPrefix: 'S-' } }),
    },
    'pull-woo': {
      type: 'woocommerce',
      url: wooUrl,
      consumerKey: 'ck_fake_dev_key',
      consumerSecret: 'cs_fake_dev_secret',
      webhookSecret: 'woo-hook-secret',
      timeout: '2s',
      // Delivered orders stay `processing`: a completed order is not read by the pull, so the
      // no-feedback-loop test would find nothing to re-read once its parcel was delivered (ci, stop 39).
      deliveredStatus: null,
      import: imported({ pageSize: 5, mapping: { ...MAPPING, shipFrom: WOO_SHIP_FROM, orderIdPrefix: 'W-' } }),
    },
  };
}

beforeAll(async () => {
  env = await createTestEnv();
  shopify = await startFakeShopify();
  // A store ten hours ahead of UTC whose reads of one order bump its modified date (HPOS).
  woo = await startFakeWooCommerce({ timezone: 'Australia/Sydney', hpos: true });
  connectors = loadShopConnectors({ SHOP_CONNECTORS: JSON.stringify(shopConnectors(shopify.baseUrl, woo.baseUrl)) });
  h = await startHarness({ env, shopConnectors: connectors, fake: { trackingStepPolls: 1 } });
  for (const connector of importShops(connectors)) await applySchedule(h.env.client, connector, h.taskQueue);
});
afterAll(async () => {
  await h?.stop();
  await shopify?.close();
  await woo?.close();
  await env?.teardown();
});

const pullNow = (shop: string) => pullShop(h.env.client, shop);
const waitForPull = (shop: string, since: number) => waitForShopPull(h.env.client, shop, since);

/** The shipment's input as started (undefined when the order has no shipment). */
async function input(shop: string, orderId: string): Promise<ShipmentInput | undefined> {
  const handle = h.env.client.workflow.getHandle(shipmentWorkflowId({ shop, orderId }));
  try {
    const history = await handle.fetchHistory();
    const payload = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    return defaultPayloadConverter.fromPayload<ShipmentInput>(payload);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

async function shipmentCount(shop: string): Promise<number> {
  return (await h.env.client.workflow.count(`WorkflowType = '${WORKFLOW_TYPE}' AND ShipmentShop = '${shop}'`)).count;
}

describe('Shopify', () => {
  const ids: Record<string, string> = {};

  it('open orders with something to ship become shipments; on-hold ones are skipped; unmappable ones are reported and kept for the next pull', async () => {
    const make = (name: string, seed: Parameters<FakeShopify['createOrder']>[0]) =>
      (ids[name] = shopify.createOrder(seed).legacyResourceId);
    make('plain', {
      lineItems: [
        { sku: 'TENT-2', quantity: 1, grams: 2400, price: '189.00' },
        { sku: 'MAT-1', quantity: 2, grams: 500 },
      ],
    });
    make('onHold', { lineItems: [{ sku: 'TENT-2', quantity: 1, grams: 2400 }], fulfillmentOrderStatus: 'ON_HOLD' });
    make('pigeon', { lineItems: [{ sku: 'MAT-1', quantity: 1, grams: 500 }], shippingLine: { title: 'Carrier pigeon' } });
    make('noCountry', { lineItems: [{ sku: 'MAT-1', quantity: 1, grams: 500 }], shippingAddress: { countryCodeV2: null } });

    // The newest change the pull can read: taken before it, since the started shipment's write-back
    // (its fulfillment) changes the order again while this test goes on.
    const newest = shopify
      .orders()
      .map((o) => o.updatedAt)
      .sort()
      .at(-1);
    const result = await pullNow('pull-shopify');
    expect(result.counts).toEqual({ read: 4, started: 1, alreadyKnown: 0, skipped: 1, rejected: 2, changed: 0 });
    expect(result.rejections.map((r) => [r.platformOrderId, r.reasons.map((x) => x.field)])).toEqual(
      expect.arrayContaining([
        [ids.pigeon, ['shippingMethod']],
        [ids.noCountry, ['shipTo.countryCode']],
      ]),
    );

    const plain = shopify.order(ids.plain!)!;
    const started = await input('pull-shopify', `S-${plain.name.replace('#', '')}`);
    expect(started?.platformOrderId).toBe(ids.plain);
    const request = started!.labelRequest;
    expect(request.courier).toBe('dhl-express');
    expect(request.shipment.shipFrom?.address?.countryCode).toBe('DE'); // the fulfillment order's location
    expect(request.shipment.parcels?.[0]?.weight).toBe(3.4); // 2.4 kg + 2 × 0.5 kg, converted from grams
    expect(request.shipment.parcels?.[0]?.items?.[0]).toMatchObject({
      quantity: 1,
      unitPrice: { amount: 189, currency: 'EUR' },
      unitWeight: 2.4,
    });

    // The schedule holds the cursor and the two orders to read again. A first pull's cursor is the
    // start of its window (firstPull, a day before the newest change here), so the next pull reads
    // that window again with the fulfilled orders it left out (firstPullCursor).
    const cursor = cursorOf(await h.env.client.schedule.getHandle(shopPullScheduleId('pull-shopify')).describe());
    expect(cursor.retry.sort()).toEqual([ids.pigeon, ids.noCountry].sort());
    expect(Date.parse(newest!) - Date.parse(cursor.since!)).toBeCloseTo(86_400_000, -5);
  });

  it('an edited order from the retry list goes through on the next pull; the others stay', async () => {
    shopify.editOrder(ids.noCountry!, { shippingAddress: { countryCodeV2: 'AT', city: 'Wien', zip: '1010' } });
    const result = await pullNow('pull-shopify');
    expect(result.counts.started).toBe(1);
    const fixed = shopify.order(ids.noCountry!)!;
    expect((await input('pull-shopify', `S-${fixed.name.replace('#', '')}`))?.labelRequest.shipment.shipTo?.address?.countryCode).toBe(
      'AT',
    );
    const cursor = cursorOf(await h.env.client.schedule.getHandle(shopPullScheduleId('pull-shopify')).describe());
    expect(cursor.retry).toEqual([ids.pigeon]);
  });

  it('no feedback loop: the fulfillment the write-back creates does not make the order a second shipment', async () => {
    await waitFor(() => (shopify.order(ids.plain!)!.fulfillments.length > 0 ? true : undefined), {
      what: 'the fulfillment',
      timeoutMs: 30_000,
    });
    const before = await shipmentCount('pull-shopify');
    const result = await pullNow('pull-shopify');
    expect(result.counts.started).toBe(0);
    expect(await shipmentCount('pull-shopify')).toBe(before);
  });
});

describe('WooCommerce (store at UTC+10, HPOS)', () => {
  it('processing orders become shipments; local pickup and orders on hold are skipped; weights come from the products', async () => {
    const shipped = woo.createOrder({ status: 'processing', lineItems: [{ sku: 'PORT-10', quantity: 2, weight: '1.5' }] });
    woo.createOrder({
      status: 'processing',
      lineItems: [{ sku: 'PORT-10', quantity: 1 }],
      shippingMethod: { methodId: 'local_pickup', methodTitle: 'Local pickup' },
    });
    const held = woo.createOrder({ status: 'on-hold', lineItems: [{ sku: 'PORT-10', quantity: 1 }] });
    woo.createOrder({ status: 'pending', lineItems: [{ sku: 'PORT-10', quantity: 1 }] }); // awaiting payment: not read
    const result = await pullNow('pull-woo');
    expect(result.counts).toMatchObject({ read: 3, started: 1, skipped: 2, rejected: 0 });
    const started = await input('pull-woo', `W-${shipped.number}`);
    expect(started?.platformOrderId).toBe(String(shipped.id));
    expect(started?.labelRequest.courier).toBe('dpd-de');
    expect(started?.labelRequest.shipment.shipFrom?.address?.city).toBe('Porto');
    expect(started?.labelRequest.shipment.parcels?.[0]?.weight).toBe(3);
    // The cursor is the store's GMT modified time of the newest order read, not its local one.
    const cursor = cursorOf(await h.env.client.schedule.getHandle(shopPullScheduleId('pull-woo')).describe());
    expect(cursor.since).toBe(`${woo.order(held.id)!.date_modified_gmt.slice(0, 19)}Z`);
  });

  it('no feedback loop: the tracking item and notes the write-back adds are read again and are already known', async () => {
    await waitFor(() => (woo.orders().some((o) => o.trackingItems.length > 0 && o.status === 'processing') ? true : undefined), {
      what: 'a processing order with a tracking item',
      timeoutMs: 30_000,
    });
    const before = await shipmentCount('pull-woo');
    const result = await pullNow('pull-woo');
    expect(result.counts.started).toBe(0);
    expect(result.counts.alreadyKnown).toBeGreaterThan(0);
    expect(await shipmentCount('pull-woo')).toBe(before);
  });

  it('orders edited and created while a pull pages through them: each one exactly one shipment', async () => {
    const made = Array.from({ length: 40 }, () => woo.createOrder({ status: 'processing', lineItems: [{ sku: 'PORT-10', quantity: 1 }] }));
    woo.setFaults({ latencyMs: 150 });
    // Bounded: on a loaded machine an unbounded stream of edits can outrun the pull (it chases
    // the orders that move to the end) and, left running after a timeout, leaks into later tests.
    let editing = true;
    const edits = (async () => {
      for (let i = 0; editing && i < 40; i++) {
        woo.editOrder(made[i % 10]!.id, { customerNote: `edit ${i}` }); // the early ones move to the end
        if (i % 5 === 0) made.push(woo.createOrder({ status: 'processing', lineItems: [{ sku: 'PORT-10', quantity: 1 }] }));
        await sleep(120);
      }
    })();
    try {
      await pullNow('pull-woo');
    } finally {
      editing = false;
      await edits;
      woo.setFaults({ latencyMs: 0 });
    }
    await pullNow('pull-woo'); // the orders created at the end of the first pull
    for (const o of made) {
      const started = await input('pull-woo', `W-${o.number}`);
      expect(started?.platformOrderId, `order ${o.id}`).toBe(String(o.id));
    }
  });
});

describe('platform webhooks', () => {
  let trigger: ShopTrigger;
  beforeAll(async () => {
    trigger = await startShopTrigger({
      host: '127.0.0.1',
      port: 0,
      shops: (shop) => triggerShop(connectors, shop),
      trigger: (shop) => triggerPull(h.env.client, shop),
      logger: { info: () => undefined, warn: () => undefined, debug: () => undefined },
    });
  });
  afterAll(() => trigger?.close());

  it("a signed Shopify orders/create delivery starts the shop's pull: the new order becomes a shipment without a schedule tick", async () => {
    shopify.subscribeWebhook({ topic: 'orders/create', address: trigger.hookUrl('shopify', 'pull-shopify') });
    const since = Date.now();
    const created = shopify.createOrder({ lineItems: [{ sku: 'MAT-1', quantity: 1, grams: 500 }] });
    await waitForPull('pull-shopify', since);
    expect((await input('pull-shopify', `S-${created.name.replace('#', '')}`))?.platformOrderId).toBe(created.legacyResourceId);
    expect(trigger.stats().totals.verified).toBeGreaterThan(0);
  });
});

describe('command line', () => {
  const cliEnv = () => ({
    TEMPORAL_ADDRESS: h.env.address,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: h.taskQueue,
    ...h.shippingEnv,
    SHOP_CONNECTORS: JSON.stringify(shopConnectors(shopify.baseUrl, woo.baseUrl)),
  });

  it('import --from reads the shop through the file pipeline: started, then already known; skipped counted; the cursor untouched', async () => {
    const placed = [1, 2].map(() => woo.createOrder({ status: 'processing', lineItems: [{ sku: 'PORT-10', quantity: 1 }] }));
    woo.createOrder({
      status: 'processing',
      lineItems: [{ sku: 'PORT-10', quantity: 1 }],
      shippingMethod: { methodId: 'local_pickup', methodTitle: 'Local pickup' },
    });
    const cursorBefore = cursorOf(await h.env.client.schedule.getHandle(shopPullScheduleId('pull-woo')).describe());
    const first = await runCli(['import', '--from', 'pull-woo', '--since', '10m', '--json'], { env: cliEnv() });
    expect(first.code, first.stderr).toBe(0);
    const summary = JSON.parse(first.stdout);
    expect(summary.format).toBe('woocommerce');
    expect(summary.counts.started).toBe(2);
    expect(summary.skipped).toBeGreaterThanOrEqual(1);
    for (const o of placed) expect((await input('pull-woo', `W-${o.number}`))?.platformOrderId).toBe(String(o.id));
    const again = await runCli(['import', '--from', 'pull-woo', '--since', '10m', '--json'], { env: cliEnv() });
    expect(JSON.parse(again.stdout).counts).toMatchObject({ started: 0, failed: 0, rejected: 0 });
    expect(cursorOf(await h.env.client.schedule.getHandle(shopPullScheduleId('pull-woo')).describe())).toEqual(cursorBefore);
  });

  it('import --from names what is wrong: an unknown shop, a bad --since, a file beside it', async () => {
    const env = cliEnv();
    const unknown = await runCli(['import', '--from', 'nope'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--from nope: no such shop in SHOP_CONNECTORS \(shops with import settings: pull-shopify, pull-woo\)/);
    const since = await runCli(['import', '--from', 'pull-woo', '--since', 'yesterday'], { env });
    expect(since.code).toBe(2);
    expect(since.stderr).toMatch(/--since must be an ISO 8601 time/);
    const both = await runCli(['import', '--from', 'pull-woo', 'examples/orders.ndjson'], { env });
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--from reads a shop: give no file/);
  });

  it('schedule describe, pause, resume, trigger; an unknown shop is exit 4', async () => {
    const env = cliEnv();
    const described = await runCli(['schedule', 'describe', 'pull-shopify', '--json'], { env });
    expect(described.code, described.stderr).toBe(0);
    const view = JSON.parse(described.stdout);
    expect(view).toMatchObject({ scheduleId: 'shop-pull-pull-shopify', everySeconds: 3600, paused: true });
    expect(view.cursor.since).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(view.recentPulls.length).toBeGreaterThan(0);
    expect((await runCli(['schedule', 'resume', 'pull-shopify'], { env })).code).toBe(0);
    expect((await h.env.client.schedule.getHandle(shopPullScheduleId('pull-shopify')).describe()).state.paused).toBe(false);
    expect((await runCli(['schedule', 'pause', 'pull-shopify', '--note', 'stocktaking'], { env })).code).toBe(0);
    const paused = await runCli(['schedule', 'describe', 'pull-shopify'], { env });
    expect(paused.stdout).toMatch(/PAUSED \(stocktaking\)/);
    expect((await runCli(['schedule', 'resume', 'pull-shopify'], { env })).code).toBe(0);
    expect((await h.env.client.schedule.getHandle(shopPullScheduleId('pull-shopify')).describe()).state.paused).toBe(false);
    const missing = await runCli(['schedule', 'trigger', 'no-such-shop'], { env });
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/no pull schedule for shop no-such-shop/);
  });
});

describe('the schedules', () => {
  it('each shop pulls at its own second within the interval; applying again changes nothing; an older spec is brought to it, keeping cursor and pause', async () => {
    const phase = async (shop: string) =>
      (await h.env.client.schedule.getHandle(shopPullScheduleId(shop)).describe()).spec.intervals?.[0]?.offset ?? 0;
    const [shopifyPhase, wooPhase] = [await phase('pull-shopify'), await phase('pull-woo')];
    expect(shopifyPhase).toBe(pullPhaseMs('pull-shopify', 3_600_000));
    expect(wooPhase).toBe(pullPhaseMs('pull-woo', 3_600_000));
    expect(shopifyPhase).not.toBe(wooPhase);
    const woo = importShops(connectors).find((c) => c.shop === 'pull-woo')!;
    expect(await applySchedule(h.env.client, woo, h.taskQueue)).toBe('unchanged');

    // A schedule made before the phase: every shop on the hour.
    const handle = h.env.client.schedule.getHandle(shopPullScheduleId('pull-woo'));
    await handle.update((previous) => ({ ...previous, spec: { intervals: [{ every: '1h' }] } }));
    const before = await handle.describe();
    expect(await applySchedule(h.env.client, woo, h.taskQueue)).toBe('updated');
    const after = await handle.describe();
    expect(after.spec.intervals?.[0]).toMatchObject({ every: 3_600_000, offset: wooPhase });
    expect(cursorOf(after)).toEqual(cursorOf(before));
    expect(after.state.paused).toBe(before.state.paused);
  });

  it('the phase is within the interval, whole seconds, and spread', () => {
    const phases = Array.from({ length: 200 }, (_, i) => pullPhaseMs(`shop-${i}`, 300_000));
    for (const p of phases) expect(p >= 0 && p < 300_000 && p % 1000 === 0).toBe(true);
    expect(new Set(phases).size).toBeGreaterThan(120); // 200 shops in 300 seconds: about 146 distinct when uniform
    expect(pullPhaseMs('any', 1_000)).toBe(0);
  });
});

describe('import settings', () => {
  it('are validated with the JSON path of each problem; WooCommerce needs a ship-from address', () => {
    const config = shopConnectors('http://127.0.0.1:1', 'http://127.0.0.1:2');
    const broken = {
      ...config,
      'pull-shopify': { ...config['pull-shopify'], import: { every: '5s', mapping: { shippingMethods: { Express: { courier: 'dhl' } } } } },
      'pull-woo': { ...config['pull-woo'], import: { mapping: {} } },
    };
    expect(() => loadShopConnectors({ SHOP_CONNECTORS: JSON.stringify(broken) })).toThrow(
      /SHOP_CONNECTORS\.pull-shopify\.import\.every: .*[\s\S]*SHOP_CONNECTORS\.pull-shopify\.import\.mapping\.shippingMethods\.Express\.productCode: is required[\s\S]*SHOP_CONNECTORS\.pull-woo\.import: mapping\.shipFrom\.address is required/,
    );
  });
});
