/**
 * A webhook's pull reads the orders the webhook names, by id (issues 30 and 31): on the real dev
 * server with real workers, the real shop trigger (pullNow, as the worker wires it) and the fakes'
 * own webhooks over loopback. The shop's scheduled pull is made slow (its changes read answers
 * after SLOW_MS), so a named order that reaches its shipment while that pull still runs was read
 * by id, not behind it, and no pull from the cursor was started for it.
 */
import { createHmac } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shipmentWorkflowId } from '../domain/shipment';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import {
  applySchedule,
  importShops,
  pullNow,
  RecentSchedules,
  triggerPull,
  triggerShop,
  CURSOR_PULLS_PER_SHOP,
  NAMED_ORDER_PULLS_PER_SHOP,
} from '../shop-import/schedule';
import { loadShopConnectors } from '../platforms/connectors';
import { startShopTrigger, type ShopTrigger } from '../shop-trigger';
import { PULL_TOPICS } from '../shop-trigger/topics';
import { stateQuery, type ShipmentState } from '../workflow-definitions/shipment';
import { namedOrdersPullId, webhookPullId, type ShopPullResult } from '../workflow-definitions/shop-pull';
import { startHarness, type Harness } from './helpers/harness';
import { waitForPull } from './helpers/shop-pulls';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';
import { fakeShopifyEntry, fakeWooEntry } from './helpers/platforms';

const SECRET = 'webhook-by-id-secret';
/** Inside the connectors' default timeout: a scheduled pull that lasts, as under a backlog. */
// Long enough that the named orders' path (webhook, trigger, pull, read, start) fits well inside
// it on a loaded CI machine: at 10 s it once did not. The stores answer within `timeout` (30 s).
const SLOW_MS = 20_000;

let env: TestWorkflowEnvironment;
let shopify: FakeShopify;
let woo: FakeWooCommerce;
let h: Harness;
let trigger: ShopTrigger;

beforeAll(async () => {
  env = await createTestEnv();
  shopify = await startFakeShopify();
  woo = await startFakeWooCommerce();
  const imported = (prefix: string) => ({
    every: '1h',
    paused: true, // only the test's triggers pull
    overlap: '2m',
    firstPull: '1d',
    mapping: {
      shippingMethods: {
        Standard: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' },
        flat_rate: { courier: 'dpd-de', productCode: 'DPD_CLASSIC' },
      },
      orderIdPrefix: prefix,
      shipFrom: { address: { streetLines: ['Rua das Flores 10'], city: 'Porto', postalCode: '4050-262', countryCode: 'PT' } },
    },
  });
  const connectors = loadShopConnectors({
    SHOP_CONNECTORS: JSON.stringify({
      maxBackoff: '1s',
      'byid-shopify': fakeShopifyEntry(shopify.baseUrl, {
        webhookSecret: SECRET,
        timeout: '30s',
        import: imported('S-'),
      }),
      'byid-woo': fakeWooEntry(woo.baseUrl, {
        webhookSecret: SECRET,
        timeout: '30s',
        import: imported('W-'),
      }),
      // Never pulled by the tests before the last one: no cursor in its schedule.
      'byid-fresh': fakeWooEntry(woo.baseUrl, {
        timeout: '15s',
        import: imported('F-'),
      }),
    }),
  });
  h = await startHarness({ env, shopConnectors: connectors, fake: { trackingStepPolls: 1 } });
  // Labels are held back (429 + Retry-After) throughout: every shipment stays before its label.
  h.fake.setFaults({ rateLimitedRate: 1, rateLimitedRetryAfter: { minSeconds: 1, maxSeconds: 1 }, endpoints: ['POST /labels'] });
  const schedules = new RecentSchedules();
  trigger = await startShopTrigger({
    host: '127.0.0.1',
    port: 0,
    shops: (shop) => triggerShop(connectors, shop),
    // As worker/main.ts wires it.
    trigger: (shop, { signal, ...wanted }) =>
      h.env.client.withAbortSignal(signal, async () => void (await pullNow(h.env.client, shop, schedules, wanted))),
    logger: { info: () => undefined, warn: () => undefined, debug: () => undefined },
  });
  for (const topic of PULL_TOPICS.shopify)
    shopify.subscribeWebhook({ topic, address: trigger.hookUrl('shopify', 'byid-shopify'), secret: SECRET });
  for (const topic of PULL_TOPICS.woocommerce)
    await woo.createWebhook({ topic, deliveryUrl: trigger.hookUrl('woocommerce', 'byid-woo'), secret: SECRET });
  for (const connector of importShops(connectors)) await applySchedule(h.env.client, connector, h.taskQueue);
});
afterAll(async () => {
  await trigger?.close();
  await h?.stop();
  await shopify?.close();
  await woo?.close();
  await env?.teardown();
});

interface Platform {
  shop: string;
  place(): { id: string; orderId: string };
  cancel(id: string): void;
  /** The next read of the shop's changes answers after SLOW_MS; resolves once a pull has taken it. */
  slowNextRead(): Promise<void>;
}

const shopifyPlatform: Platform = {
  shop: 'byid-shopify',
  place() {
    const o = shopify.createOrder({ lineItems: [{ sku: 'TENT-2', quantity: 1, grams: 2400 }] });
    return { id: o.legacyResourceId, orderId: `S-${o.name.replace('#', '')}` };
  },
  cancel: (id) => void shopify.cancelOrder(id),
  async slowNextRead() {
    // The pull from the cursor's read, not a pull of named orders (`id:` terms) a late webhook makes.
    shopify.setFaults({ failNext: [{ operation: 'orders', search: { lacks: 'id:' }, kind: 'slow', delayMs: SLOW_MS }] });
    await waitFor(() => (shopify.setFaults({}).failNext.length === 0 ? true : undefined), { what: 'the slow read', timeoutMs: 10_000 });
  },
};

const wooPlatform: Platform = {
  shop: 'byid-woo',
  place() {
    const o = woo.createOrder({
      status: 'processing',
      lineItems: [{ sku: 'PORT-10', quantity: 1, weight: '1.5' }],
      shipping: { postcode: '1100-001', country: 'PT', city: 'Lisboa', address_1: 'Rua Nova 3' },
    });
    return { id: String(o.id), orderId: `W-${o.number}` };
  },
  cancel: (id) => void woo.editOrder(Number(id), { status: 'cancelled' }),
  async slowNextRead() {
    const slowBefore = woo.stats().slow;
    // The pull from the cursor's read, not a pull of named orders (`include=`) a late webhook makes.
    woo.setFaults({ failNext: [{ route: 'GET orders', params: { lacks: 'include=' }, kind: 'slow', delayMs: SLOW_MS }] });
    await waitFor(() => (woo.stats().slow > slowBefore ? true : undefined), { what: 'the slow read', timeoutMs: 10_000 });
  },
};

const stateOf = (p: Platform, orderId: string): Promise<ShipmentState> =>
  h.env.client.workflow.getHandle(shipmentWorkflowId({ shop: p.shop, orderId })).query(stateQuery);

/** What the server says of a workflow's latest run; null when it never ran. */
const describeRun = (workflowId: string) =>
  h.env.client.workflow
    .getHandle(workflowId)
    .describe()
    .catch(() => null);

/** The result of the run of `workflowId` started at `since` or later, or null if none started within `timeoutMs`. */
async function runSince(workflowId: string, since: number, timeoutMs = 15_000): Promise<ShopPullResult | null> {
  const run = await waitFor(
    async () => {
      const d = await describeRun(workflowId);
      return d && d.startTime.getTime() >= since ? d.runId : undefined;
    },
    { what: `a run of ${workflowId}`, timeoutMs, intervalMs: 100 },
  ).catch(() => null);
  return run === null ? null : ((await h.env.client.workflow.getHandle(workflowId, run).result()) as ShopPullResult);
}

/** The results of the shop's pulls of named orders (any slot) started at `since` or later, once one satisfies `done`. */
async function namedPullsSince(
  shop: string,
  since: number,
  done: (r: ShopPullResult) => boolean,
  timeoutMs = SLOW_MS + 5_000,
): Promise<ShopPullResult[]> {
  let seen: string[] = [];
  return waitFor(
    async () => {
      const results: ShopPullResult[] = [];
      seen = [];
      for (let slot = 0; slot < NAMED_ORDER_PULLS_PER_SHOP; slot++) {
        const handle = h.env.client.workflow.getHandle(namedOrdersPullId(shop, slot));
        const d = await describeRun(handle.workflowId);
        if (!d || d.startTime.getTime() < since) continue;
        seen.push(`slot ${slot} ${d.status.name} from ${d.startTime.getTime() - since} ms`);
        if (d.status.name !== 'COMPLETED') continue;
        const result = (await handle.result()) as ShopPullResult;
        results.push(result);
        seen.push(`slot ${slot} counts ${JSON.stringify(result.counts)}`);
      }
      return results.some(done) ? results : undefined;
    },
    { what: `a pull of named orders of ${shop}`, timeoutMs, intervalMs: 100 },
  ).catch((err: Error) => {
    // What the pulls of named orders did instead, for the next reader of a failure.
    throw new Error(`${err.message}; seen: ${seen.join('; ') || 'none started'}`);
  });
}

/** Whether any of the shop's pulls from the cursor for webhooks started at `since` or later. */
async function cursorPullsSince(shop: string, since: number): Promise<number> {
  let n = 0;
  for (let slot = 0; slot < CURSOR_PULLS_PER_SHOP; slot++) {
    const d = await describeRun(webhookPullId(shop, slot));
    if (d && d.startTime.getTime() >= since) n++;
  }
  return n;
}

/**
 * Until the shop's earlier webhooks are done with: no pull of named orders running and none
 * started for 2 s. A late one (the known order's own webhooks) reads `orders` too, and once took
 * the slow read meant for the scheduled pull, which then started the new order itself (ci13).
 */
async function quiet(shop: string): Promise<void> {
  await waitFor(
    async () => {
      let newest = 0;
      for (let slot = 0; slot < NAMED_ORDER_PULLS_PER_SHOP; slot++) {
        const d = await describeRun(namedOrdersPullId(shop, slot));
        if (!d) continue;
        if (d.status.name === 'RUNNING') return undefined;
        newest = Math.max(newest, d.startTime.getTime());
      }
      return Date.now() - newest >= 2_000 ? true : undefined;
    },
    { what: `no pull of named orders of ${shop} for 2 s`, timeoutMs: 60_000, intervalMs: 100 },
  );
}

/** A scheduled pull that answers only after SLOW_MS; resolves when it has taken the slow read, with its end awaited by the caller. */
async function slowScheduledPull(p: Platform): Promise<{ from: number; done: Promise<ShopPullResult> }> {
  await quiet(p.shop);
  const from = Date.now();
  await triggerPull(h.env.client, p.shop);
  await p.slowNextRead();
  return { from, done: waitForPull(h.env.client, p.shop, from) };
}

/** Signs and posts a webhook body to the trigger, as the platform would. */
async function deliver(p: Platform, topic: string, body: string): Promise<void> {
  const signature = createHmac('sha256', SECRET).update(body).digest('base64');
  const headers: Record<string, string> =
    p === shopifyPlatform
      ? { 'x-shopify-hmac-sha256': signature, 'x-shopify-topic': topic, 'x-shopify-event-id': `evt-${Math.random()}` }
      : { 'x-wc-webhook-signature': signature, 'x-wc-webhook-topic': topic };
  const res = await fetch(trigger.hookUrl(p === shopifyPlatform ? 'shopify' : 'woocommerce', p.shop), {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', ...headers },
  });
  expect(res.status).toBe(200);
}

describe.each([
  ['Shopify', shopifyPlatform],
  ['WooCommerce', wooPlatform],
])('%s', (_name, p) => {
  let known: { id: string; orderId: string };

  beforeAll(async () => {
    // A shipment of ours, waiting for its label, and a cursor to start from.
    known = p.place();
    const since = Date.now();
    await triggerPull(h.env.client, p.shop);
    await waitForPull(h.env.client, p.shop, since);
    await waitFor(async () => ((await stateOf(p, known.orderId).catch(() => null))?.phase === 'creating_label' ? true : undefined), {
      what: 'the known order before its label',
      timeoutMs: 20_000,
    });
  });

  it('a new order named by its webhook is imported while the scheduled pull still reads', async () => {
    const slow = await slowScheduledPull(p);
    const placed = p.place(); // its orders/create (order.created) webhook names it
    // Its shipment exists while the scheduled pull still waits for its read, and no pull from
    // the cursor ran: a pull of named orders started it. (Its count may read "already known":
    // an activity retried after its start, under load.)
    await waitFor(async () => ((await stateOf(p, placed.orderId).catch(() => null)) ? true : undefined), {
      what: `the shipment of ${placed.orderId}`,
      timeoutMs: SLOW_MS + 5_000,
      intervalMs: 100,
    }).catch(async (err: Error) => {
      const pulls = await namedPullsSince(p.shop, slow.from, () => true, 0).catch((e: Error) => e.message);
      throw new Error(`${err.message}; named pulls: ${JSON.stringify(pulls)}; trigger: ${JSON.stringify(trigger.stats().shops[p.shop])}`);
    });
    expect(Date.now()).toBeLessThan(slow.from + SLOW_MS);
    expect(await cursorPullsSince(p.shop, slow.from)).toBe(0);
    const pulled = await namedPullsSince(p.shop, slow.from, (r) => r.counts.started + r.counts.alreadyKnown >= 1);
    expect(pulled.reduce((n, r) => n + r.counts.rejected, 0)).toBe(0);
    expect((await slow.done).counts.alreadyKnown).toBeGreaterThanOrEqual(1);
  });

  it('a known order cancelled in the shop reaches its shipment by id while the scheduled pull still reads', async () => {
    const slow = await slowScheduledPull(p);
    p.cancel(known.id);
    const outcome = await waitFor(
      async () => {
        const s = await stateOf(p, known.orderId);
        return s.outcome ?? undefined;
      },
      { what: 'the shipment knowing of the cancel', timeoutMs: SLOW_MS + 5_000, intervalMs: 100 },
    );
    expect(outcome).toBe('cancelled_in_shop');
    expect(Date.now()).toBeLessThan(slow.from + SLOW_MS);
    expect(await cursorPullsSince(p.shop, slow.from)).toBe(0);
    await slow.done;
  });

  it("an id that is not the shop's order, or no id, changes nothing; a body with no id asks for a pull from the cursor", async () => {
    const since = Date.now();
    const shipments = (await h.env.client.workflow.count(`ShipmentShop = '${p.shop}'`)).count;
    const topic = p === shopifyPlatform ? 'orders/updated' : 'order.updated';
    await deliver(p, topic, JSON.stringify({ id: 987_654_321_012 }));
    // A pull for the order cancelled above may still come late; the foreign id's reads nothing.
    const pulled = await namedPullsSince(p.shop, since, (r) => r.counts.read === 0);
    expect(pulled.reduce((n, r) => n + r.counts.started, 0)).toBe(0);
    expect(await cursorPullsSince(p.shop, since)).toBe(0);

    const fallbackFrom = Date.now();
    await deliver(p, topic, JSON.stringify({ id: 'not-an-id; DROP TABLE' }));
    const fromCursor = await runSince(webhookPullId(p.shop, 0), fallbackFrom);
    // It re-reads every change since the cursor (the cancel above included): nothing new to start.
    expect(fromCursor?.counts).toMatchObject({ started: 0, rejected: 0 });
    expect(await runSince(namedOrdersPullId(p.shop, 0), fallbackFrom, 1_000)).toBeNull();
    expect((await h.env.client.workflow.count(`ShipmentShop = '${p.shop}'`)).count).toBe(shipments);
    expect(trigger.stats().shops[p.shop]).toMatchObject({ triggerFailures: 0 });
  });
});

it('a shop never pulled (its first pull under way): a named order is read by id at once; a body naming none buffers the schedule', async () => {
  const shop = 'byid-fresh';
  const placed = wooPlatform.place();
  const since = Date.now();
  const outcome = await pullNow(h.env.client, shop, new RecentSchedules(0), { orderIds: [placed.id], fromCursor: false });
  expect(outcome).toEqual({ namedOrders: true, cursor: null });
  expect((await runSince(namedOrdersPullId(shop, 0), since))?.counts).toMatchObject({ started: 1 });
  expect((await h.env.client.workflow.count(`ShipmentShop = '${shop}'`)).count).toBe(1);
  // No cursor yet: a pull from nothing reads import.firstPull back, which is the schedule's job.
  expect(await pullNow(h.env.client, shop)).toEqual({ namedOrders: false, cursor: 'buffered' });
});
