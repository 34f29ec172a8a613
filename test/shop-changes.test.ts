/**
 * The shop talks back: a merchant's cancel, refund, hold and address edit reach the shipment in
 * flight, on the real dev server with a real worker, against the local Shopify and WooCommerce
 * fakes and the fake shipping API over loopback. Labels are held back by the API (429 +
 * Retry-After on POST /labels) while the merchant acts, as in the reproduction.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import { applySchedule, importShops } from '../shop-import/schedule';
import { loadShopConnectors } from '../platforms/connectors';
import { shipmentWorkflowId } from '../domain/shipment';
import { stateQuery, type ShipmentOutcome, type ShipmentState } from '../workflow-definitions/shipment';
import { startHarness, type Harness } from './helpers/harness';
import { pullNow } from './helpers/shop-pulls';
import { runCli } from './helpers/cli';
import { saveFixture } from './helpers/fixtures';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';
import { holdLabelsBack, labelsHeldBack } from './helpers/held-back';
import { PORTO_SHIP_FROM, fakeShopifyEntry, fakeWooEntry } from './helpers/platforms';

let env: TestWorkflowEnvironment;
let shopify: FakeShopify;
let woo: FakeWooCommerce;
let h: Harness;

const MAPPING = {
  shippingMethods: {
    Standard: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' },
    flat_rate: { courier: 'dpd-de', productCode: 'DPD_CLASSIC' },
  },
};

beforeAll(async () => {
  env = await createTestEnv();
  shopify = await startFakeShopify();
  woo = await startFakeWooCommerce();
  const imported = (mapping: Record<string, unknown>) => ({
    every: '1h',
    paused: true, // only the test's triggers pull: no tick of the schedule mid-test
    overlap: '2m',
    firstPull: '1d',
    // These tests follow what the pull tells; the label's own check (shop-check-before-label.test.ts) would race it.
    checkBeforeLabel: false,
    mapping: { ...MAPPING, ...mapping },
  });
  const connectors = loadShopConnectors({
    SHOP_CONNECTORS: JSON.stringify({
      maxBackoff: '1s',
      'talk-shopify': fakeShopifyEntry(shopify.baseUrl, {
        import: imported({ orderIdPrefix: 'S-' }),
      }),
      'talk-woo': fakeWooEntry(woo.baseUrl, {
        import: imported({
          orderIdPrefix: 'W-',
          shipFrom: PORTO_SHIP_FROM,
        }),
      }),
    }),
  });
  h = await startHarness({ env, shopConnectors: connectors, fake: { trackingStepPolls: 1 } });
  for (const connector of importShops(connectors)) await applySchedule(h.env.client, connector, h.taskQueue);
});
afterAll(async () => {
  await h?.stop();
  await shopify?.close();
  await woo?.close();
  await env?.teardown();
});

/** What a test does to an order on either platform, as its merchant would. */
interface Platform {
  shop: string;
  /** Names its replay fixtures. */
  key: string;
  /** The order's id on the platform, its shipment's orderId, and the label's customerOrderNumber. */
  place(postalCode?: string): { id: string; orderId: string; number: string };
  cancel(id: string): void;
  hold(id: string): void;
  release(id: string): void;
  moveTo(id: string, postalCode: string): void;
  /** Writes our connector made to the order: fulfillments and their events, or tracking items and notes (not the merchant's status notes). */
  writes(id: string): number;
}

const shopifyPlatform: Platform = {
  shop: 'talk-shopify',
  key: 'shopify',
  place(postalCode = '51147') {
    const o = shopify.createOrder({ lineItems: [{ sku: 'TENT-2', quantity: 1, grams: 2400 }], shippingAddress: { zip: postalCode } });
    return { id: o.legacyResourceId, orderId: `S-${o.name.replace('#', '')}`, number: o.name };
  },
  cancel: (id) => void shopify.cancelOrder(id),
  hold: (id) => void shopify.holdOrder(id),
  release: (id) => void shopify.releaseHold(id),
  moveTo: (id, zip) => void shopify.editOrder(id, { shippingAddress: { zip } }),
  writes: (id) => shopify.order(id)!.fulfillments.reduce((n, f) => n + 1 + f.events.length, 0),
};

const wooPlatform: Platform = {
  shop: 'talk-woo',
  key: 'woocommerce',
  place(postcode = '1100-001') {
    const o = woo.createOrder({
      status: 'processing',
      lineItems: [{ sku: 'PORT-10', quantity: 1, weight: '1.5' }],
      shipping: { postcode, country: 'PT', city: 'Lisboa', address_1: 'Rua Nova 3' },
    });
    return { id: String(o.id), orderId: `W-${o.number}`, number: o.number };
  },
  cancel: (id) => void woo.editOrder(Number(id), { status: 'cancelled' }),
  hold: (id) => void woo.editOrder(Number(id), { status: 'on-hold' }),
  release: (id) => void woo.editOrder(Number(id), { status: 'processing' }),
  moveTo: (id, postcode) => void woo.editOrder(Number(id), { shipping: { postcode } }),
  writes: (id) => {
    const o = woo.order(Number(id))!;
    return o.trackingItems.length + o.notes.filter((n) => !n.note.startsWith('Order status changed')).length;
  },
};

const handleOf = (p: Platform, orderId: string) => h.env.client.workflow.getHandle(shipmentWorkflowId({ shop: p.shop, orderId }));
const stateOf = (p: Platform, orderId: string): Promise<ShipmentState> => handleOf(p, orderId).query(stateQuery);
const labelsOf = (order: { number: string }) => h.fake.labels().filter((l) => l.customerOrderNumber === order.number);

async function waitForPhase(
  p: Platform,
  orderId: string,
  phase: ShipmentState['phase'],
  extra: (s: ShipmentState) => boolean = () => true,
) {
  return waitFor(
    async () => {
      const s = await stateOf(p, orderId);
      return s.phase === phase && extra(s) ? s : undefined;
    },
    { what: `${orderId} ${phase}`, timeoutMs: 20_000, intervalMs: 100 },
  );
}

describe.each([
  ['Shopify', shopifyPlatform],
  ['WooCommerce', wooPlatform],
])('%s', (_name, p) => {
  it('an order cancelled while its label is held back stops without a label (cancelled_in_shop)', async () => {
    const release = holdLabelsBack(h.fake);
    try {
      const order = p.place();
      expect((await pullNow(h.env.client, p.shop)).counts.started).toBe(1);
      await waitForPhase(p, order.orderId, 'creating_label', () => labelsHeldBack(h.fake, order.number) >= 1);
      p.cancel(order.id);
      expect((await pullNow(h.env.client, p.shop)).counts.changed).toBe(1);
      const outcome = (await handleOf(p, order.orderId).result()) as ShipmentOutcome;
      expect(outcome).toMatchObject({ outcome: 'cancelled_in_shop', labelId: null });
      expect(labelsOf(order).filter((l) => l.status === 'created')).toEqual([]);
      expect(p.writes(order.id)).toBe(0);
      await saveFixture(handleOf(p, order.orderId), `shop-changes-${p.key}-cancelled-before-label`);
    } finally {
      release();
    }
  });

  it('a held order waits (held_in_shop), takes the address corrected meanwhile, and goes on when released', async () => {
    const release = holdLabelsBack(h.fake);
    const order = p.place();
    try {
      await pullNow(h.env.client, p.shop);
      await waitForPhase(p, order.orderId, 'creating_label', () => labelsHeldBack(h.fake, order.number) >= 1);
      p.hold(order.id);
      await pullNow(h.env.client, p.shop);
      const held = await waitForPhase(p, order.orderId, 'held_in_shop');
      expect(held.shopOrder).toMatchObject({ facts: { status: 'on_hold' }, heldSince: expect.any(String) });
      p.moveTo(order.id, '20095');
      await pullNow(h.env.client, p.shop);
    } finally {
      release();
    }
    await new Promise((resolve) => setTimeout(resolve, 1500)); // the API answers again: still no label while held
    expect((await stateOf(p, order.orderId)).phase).toBe('held_in_shop');
    p.release(order.id);
    await pullNow(h.env.client, p.shop);
    const tracking = await waitForPhase(p, order.orderId, 'tracking');
    expect(tracking.revision).toBe(2); // the held-back request of revision 1 never names the new address
    expect(labelsOf(order).map((l) => [l.status, l.shipToPostalCode])).toEqual([['created', '20095']]);
    await handleOf(p, order.orderId).result();
    await saveFixture(handleOf(p, order.orderId), `shop-changes-${p.key}-held-moved-released`);
  });

  it('no feedback loop: our own writes (fulfillment or tracking item, events or notes, the delivered status) are no change', async () => {
    const order = p.place();
    await pullNow(h.env.client, p.shop);
    const outcome = (await handleOf(p, order.orderId).result()) as ShipmentOutcome;
    expect(outcome.outcome).toBe('delivered');
    await waitFor(() => (p.writes(order.id) >= 2 ? true : undefined), { what: 'the write-back', timeoutMs: 10_000 });
    const before = (await handleOf(p, order.orderId).fetchHistory()).events!.length;
    const again = await pullNow(h.env.client, p.shop);
    expect(again.counts.changed).toBe(0);
    expect((await handleOf(p, order.orderId).fetchHistory()).events!.length).toBe(before);
  });
});

describe('after the label', () => {
  it('WooCommerce: an order cancelled after its label is marked for an operator, written to no more, and tracked to the end', async () => {
    const p = wooPlatform;
    h.fake.setFaults({ latencyMs: 0 });
    const order = p.place();
    await pullNow(h.env.client, p.shop);
    await waitForPhase(p, order.orderId, 'tracking');
    await waitFor(() => (p.writes(order.id) >= 1 ? true : undefined), { what: 'the tracking item', timeoutMs: 10_000 });
    p.cancel(order.id);
    await pullNow(h.env.client, p.shop);
    const writes = p.writes(order.id);
    const outcome = (await handleOf(p, order.orderId).result()) as ShipmentOutcome;
    expect(outcome.outcome).toBe('delivered');
    const state = await stateOf(p, order.orderId);
    expect(state.shopOrder).toMatchObject({ attention: 'cancelled_in_shop', facts: { status: 'cancelled' } });
    expect(p.writes(order.id)).toBe(writes);
    expect(woo.order(Number(order.id))!.status).toBe('cancelled'); // not completed by our delivered status
    const marked = await h.env.client.workflow.count(`ShipmentShopChange = 'cancelled_in_shop' AND ShipmentShop = '${p.shop}'`);
    expect(marked.count).toBeGreaterThanOrEqual(1);
    // Ended since: still listed by `attention` for the recent window (the parcel may need recalling).
    const cliEnv = { TEMPORAL_ADDRESS: h.env.address, TEMPORAL_NAMESPACE: 'default', ...h.shippingEnv };
    const attention = await runCli(['attention', '--json'], { env: cliEnv });
    expect(JSON.parse(attention.stdout).shipments).toContainEqual(
      expect.objectContaining({ reason: 'cancelled_in_shop', orderId: order.orderId }),
    );
    await saveFixture(handleOf(p, order.orderId), 'shop-changes-woocommerce-cancelled-after-label');
  });

  it("WooCommerce: an address corrected after the label is marked address_changed, with the shop's label request on offer", async () => {
    const p = wooPlatform;
    const order = p.place();
    await pullNow(h.env.client, p.shop);
    await waitForPhase(p, order.orderId, 'tracking');
    p.moveTo(order.id, '4000-123');
    expect((await pullNow(h.env.client, p.shop)).counts.changed).toBe(1);
    const state = await stateOf(p, order.orderId);
    expect(state.shopOrder!.attention).toBe('address_changed');
    expect(state.shopOrder!.offer?.shipment.shipTo?.address?.postalCode).toBe('4000-123');
    expect(labelsOf(order).map((l) => l.shipToPostalCode)).toEqual(['1100-001']); // nothing voided, no second label by itself
    // The operator finds it with list --shop-change, and status says what changed.
    const cliEnv = { TEMPORAL_ADDRESS: h.env.address, TEMPORAL_NAMESPACE: 'default', ...h.shippingEnv };
    const listed = await runCli(['list', '--shop-change', 'address_changed', '--shop', p.shop, '--json'], { env: cliEnv });
    expect(JSON.parse(listed.stdout).shipments.map((x: { orderId: string }) => x.orderId)).toContain(order.orderId);
    const status = await runCli(['status', p.shop, order.orderId], { env: cliEnv });
    expect(status.stdout).toMatch(/Shop change +address_changed: the merchant changed the order after its label/);
    // ... and `attention` lists it, with what to do.
    const attention = await runCli(['attention', '--json'], { env: cliEnv });
    expect(attention.code).toBe(1);
    expect(JSON.parse(attention.stdout).shipments).toContainEqual(
      expect.objectContaining({
        reason: 'changed_in_shop',
        orderId: order.orderId,
        next: expect.stringMatching(/redirect it with the courier/),
      }),
    );
    await handleOf(p, order.orderId).result();
    await saveFixture(handleOf(p, order.orderId), 'shop-changes-woocommerce-address-after-label');
  });
});
