/**
 * Platform connectors on a real Temporal dev server against the local Shopify and WooCommerce
 * fakes over loopback: what each event writes, exactly once although neither platform
 * de-duplicates (writes that commit and then drop the connection), and nothing downgraded.
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startShipment } from '../order-import/start-shipment';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import { loadShopConnectors } from '../platforms/connectors';
import { stateQuery, type ShipmentOutcome } from '../workflow-definitions/shipment';
import { type ShipmentInput } from '../domain/shipment';
import { startHarness, type Harness } from './helpers/harness';
import { order } from './helpers/orders';
import { saveFixture } from './helpers/fixtures';
import { platformConnectors } from './helpers/platforms';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';

let env: TestWorkflowEnvironment;
let shopify: FakeShopify;
let woo: FakeWooCommerce;
let h: Harness;

beforeAll(async () => {
  env = await createTestEnv();
  shopify = await startFakeShopify();
  woo = await startFakeWooCommerce();
  const shopConnectors = loadShopConnectors({ SHOP_CONNECTORS: JSON.stringify(platformConnectors(shopify.baseUrl, woo.baseUrl)) });
  // Tracking moves one stage per poll: every stage reaches the shop, whatever the timing.
  h = await startHarness({ env, shopConnectors, fake: { trackingStepPolls: 1 } });
});
afterAll(async () => {
  await h?.stop();
  await shopify?.close();
  await woo?.close();
  await env?.teardown();
});

async function start(input: ShipmentInput): Promise<WorkflowHandle> {
  const started = await startShipment(h.env.client, h.taskQueue, input);
  return h.env.client.workflow.getHandle(started.workflowId);
}

function shopifyOrder(): string {
  return shopify.createOrder({
    lineItems: [
      { sku: 'BEAN-1', quantity: 2 },
      { sku: 'MUG-1', quantity: 1 },
    ],
  }).legacyResourceId;
}

function wooOrder(): number {
  return woo.createOrder({ status: 'processing', lineItems: [{ sku: 'BEAN-1', quantity: 2 }] }).id;
}

/** The shipment's end once the shop has every event. */
async function finished(handle: WorkflowHandle): Promise<ShipmentOutcome> {
  const outcome = (await handle.result()) as ShipmentOutcome;
  expect(outcome.shopSync).toMatchObject({ status: 'up_to_date' });
  expect(outcome.shopSync!.delivered).toBe(outcome.shopSync!.emitted);
  return outcome;
}

/** Events of a fulfillment as status@time, each once: a repeat is a duplicate write. */
function expectNoRepeatedEvents(events: Array<{ status: string; happenedAt: string }>): void {
  const keys = events.map((e) => `${e.status}@${e.happenedAt}`);
  expect(new Set(keys).size, keys.join(', ')).toBe(keys.length);
}

describe('Shopify', () => {
  it('a delivered shipment: one fulfillment with the label tracking, its events in order, ending DELIVERED; the id kept in state', async () => {
    const id = shopifyOrder();
    const handle = await start({ ...order('shopify-shop', 'S-1'), platformOrderId: id });
    const outcome = await finished(handle);
    expect(outcome.outcome).toBe('delivered');
    const view = shopify.order(id)!;
    expect(view.fulfillments).toHaveLength(1);
    const [fulfillment] = view.fulfillments;
    expect(fulfillment!.trackingInfo).toEqual([expect.objectContaining({ company: 'DHL Express', number: outcome.trackingNumber })]);
    expect(view.fulfillmentOrders.every((fo) => fo.status === 'CLOSED')).toBe(true);
    const statuses = fulfillment!.events.map((e) => e.status);
    expect(statuses.at(-1)).toBe('DELIVERED');
    expect(statuses).toContain('IN_TRANSIT');
    expectNoRepeatedEvents(fulfillment!.events);
    const state = await handle.query(stateQuery);
    expect(state.shopSync?.platform).toEqual({ fulfillmentId: fulfillment!.id });
  });

  it('writes that commit and then drop the connection make no second fulfillment and no repeated event', async () => {
    shopify.setFaults({ commitThenDropRate: 0.3 });
    try {
      const ids = Array.from({ length: 4 }, () => shopifyOrder());
      const handles = await Promise.all(ids.map((id, i) => start({ ...order('shopify-shop', `S-DROP-${i}`), platformOrderId: id })));
      await Promise.all(handles.map((handle) => finished(handle)));
      expect(shopify.stats().dropped).toBeGreaterThan(0);
      await saveFixture(handles[0]!, 'shop-platform-shopify-commit-then-drop');
      for (const id of ids) {
        const view = shopify.order(id)!;
        expect(view.fulfillments, `order ${id}`).toHaveLength(1);
        expectNoRepeatedEvents(view.fulfillments[0]!.events);
        expect(view.fulfillments[0]!.events.at(-1)?.status).toBe('DELIVERED');
      }
    } finally {
      shopify.setFaults({ commitThenDropRate: 0 });
    }
  });

  it("a development store's small bucket: deliveries pace themselves from throttleStatus instead of being throttled", async () => {
    shopify.setBucket({ maximumAvailable: 40, restoreRate: 20 });
    shopify.resetStats();
    try {
      const ids = Array.from({ length: 3 }, () => shopifyOrder());
      const handles = await Promise.all(ids.map((id, i) => start({ ...order('shopify-shop', `S-PACE-${i}`), platformOrderId: id })));
      await Promise.all(handles.map((handle) => finished(handle)));
      const stats = shopify.stats();
      // The first calls of a worker do not know the bucket yet; after that it is paced.
      expect(stats.throttled, JSON.stringify(stats)).toBeLessThanOrEqual(2);
      expect(stats.requests).toBeGreaterThan(20); // the bucket was really the limit
      for (const id of ids) expect(shopify.order(id)!.fulfillments).toHaveLength(1);
    } finally {
      shopify.setBucket({ maximumAvailable: 2000, restoreRate: 100 });
    }
  });

  it('a rejected label tags the order and notes the carrier wording once', async () => {
    const id = shopifyOrder();
    const handle = await start({ ...order('shopify-shop', 'S-REJ', { postalCode: '00000' }), platformOrderId: id });
    const view = await waitFor(
      () => {
        const v = shopify.order(id)!;
        return v.tags.includes('label-rejected') && v.note ? v : undefined;
      },
      { timeoutMs: 20_000, what: 'the rejection on the order' },
    );
    expect(view.note).toMatch(/^Shipping label rejected \(revision 1\): /);
    expect(view.fulfillments).toHaveLength(0);
    await handle.terminate('test over');
  });

  it('a shipment of a Shopify shop without platformOrderId stops its delivery, naming the field', async () => {
    const handle = await start(order('shopify-shop', 'S-NOID'));
    const state = await waitFor(
      async () => {
        const s = await handle.query(stateQuery);
        return s.shopSync?.status === 'failed' ? s : undefined;
      },
      { timeoutMs: 20_000, what: 'delivery stopped' },
    );
    expect(state.shopSync?.failure?.message).toContain('needs a platformOrderId');
    await saveFixture(handle, 'shop-platform-no-platform-order-id');
    await handle.terminate('test over');
  });
});

describe('WooCommerce', () => {
  it('a delivered shipment: one tracking item, one note per change, completed once with the tracking in its e-mail', async () => {
    const id = wooOrder();
    const outcome = await finished(await start({ ...order('woo-shop', 'W-1'), platformOrderId: String(id) }));
    expect(outcome.outcome).toBe('delivered');
    const view = woo.order(id)!;
    expect(view.trackingItems).toEqual([expect.objectContaining({ tracking_number: outcome.trackingNumber, tracking_provider: 'DHL' })]);
    expect(view.status).toBe('completed');
    const completed = view.emailsSent.filter((e) => e.template === 'customer_completed_order');
    expect(completed).toHaveLength(1);
    const notes = view.notes.map((n) => n.note);
    expect(new Set(notes).size).toBe(notes.length);
    expect(notes.some((n) => n.startsWith('Delivered'))).toBe(true);
    expect(view.notes.filter((n) => n.customer_note)).toEqual([]);
  });

  it('writes that commit and then drop the connection make no second tracking item and no repeated note', async () => {
    woo.setFaults({ commitThenDropRate: 0.3 });
    try {
      const ids = Array.from({ length: 4 }, () => wooOrder());
      const handles = await Promise.all(ids.map((id, i) => start({ ...order('woo-shop', `W-DROP-${i}`), platformOrderId: String(id) })));
      await Promise.all(handles.map((handle) => finished(handle)));
      expect(woo.stats().droppedAfterCommit).toBeGreaterThan(0);
      await saveFixture(handles[0]!, 'shop-platform-woocommerce-commit-then-drop');
      for (const id of ids) {
        const view = woo.order(id)!;
        expect(view.trackingItems, `order ${id}`).toHaveLength(1);
        const notes = view.notes.map((n) => n.note);
        expect(new Set(notes).size, notes.join(' | ')).toBe(notes.length);
        expect(view.emailsSent.filter((e) => e.template === 'customer_completed_order')).toHaveLength(1);
      }
    } finally {
      woo.setFaults({ commitThenDropRate: 0 });
    }
  });

  it('a rejected label: a private note and on-hold; without the Shipment Tracking extension the tracking becomes a note', async () => {
    const rejectedId = wooOrder();
    const rejected = await start({ ...order('woo-shop', 'W-REJ', { postalCode: '00000' }), platformOrderId: String(rejectedId) });
    const view = await waitFor(
      () => {
        const v = woo.order(rejectedId)!;
        return v.status === 'on-hold' ? v : undefined;
      },
      { timeoutMs: 20_000, what: 'the order on hold' },
    );
    expect(view.notes.filter((n) => n.note.startsWith('Shipping label rejected'))).toEqual([
      expect.objectContaining({ customer_note: false }),
    ]);
    await rejected.terminate('test over');

    woo.setShipmentTracking(false);
    try {
      const id = wooOrder();
      const outcome = await finished(await start({ ...order('woo-shop', 'W-NOEXT'), platformOrderId: String(id) }));
      const plain = woo.order(id)!;
      expect(plain.trackingItems).toEqual([]);
      // The note ends with the event's reference, which tells it from the same words of another event.
      expect(plain.notes.map((n) => n.note)).toContainEqual(
        expect.stringMatching(new RegExp(`^Shipped with DHL, tracking number ${outcome.trackingNumber}\\. \\(ref [0-9a-f]{8}\\)$`)),
      );
    } finally {
      woo.setShipmentTracking(true);
    }
  });
});
