/**
 * The order checked with its shop right before its label (import.checkBeforeLabel, on by
 * default): a merchant's cancel or edit that no pull has told the shipment yet still reaches the
 * label, on the real dev server with a real worker, both local fakes over loopback, and labels
 * held back by the shipping API (429 + Retry-After) while the merchant acts. No pull runs after
 * the merchant's change in these tests: only the check can find it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import { applySchedule, importShops } from '../shop-import/schedule';
import { loadShopConnectors } from '../platforms/connectors';
import { parcelWorkflowId, shipmentWorkflowId } from '../domain/shipment';
import { stateQuery, type ShipmentOutcome, type ShipmentState } from '../workflow-definitions/shipment';
import { startHarness, type Harness } from './helpers/harness';
import { pullNow } from './helpers/shop-pulls';
import { saveFixture } from './helpers/fixtures';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';
import { holdLabelsBack, labelsHeldBack } from './helpers/held-back';
import { PORTO_SHIP_FROM, fakeShopifyEntry, fakeWooEntry } from './helpers/platforms';

let env: TestWorkflowEnvironment;
let shopify: FakeShopify;
let woo: FakeWooCommerce;
let h: Harness;

beforeAll(async () => {
  env = await createTestEnv();
  shopify = await startFakeShopify();
  woo = await startFakeWooCommerce();
  const imported = (mapping: Record<string, unknown>) => ({
    every: '1h',
    paused: true, // only the test's triggers pull
    overlap: '2m',
    firstPull: '1d',
    mapping: {
      shippingMethods: {
        Standard: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' },
        flat_rate: { courier: 'dpd-de', productCode: 'DPD_CLASSIC' },
      },
      ...mapping,
    },
  });
  const connectors = loadShopConnectors({
    SHOP_CONNECTORS: JSON.stringify({
      maxBackoff: '1s',
      'check-shopify': fakeShopifyEntry(shopify.baseUrl, {
        import: imported({ orderIdPrefix: 'CS-' }),
      }),
      'check-woo': fakeWooEntry(woo.baseUrl, {
        import: imported({
          orderIdPrefix: 'CW-',
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

interface Platform {
  shop: string;
  key: string;
  place(postalCode?: string): { id: string; orderId: string; number: string };
  cancel(id: string): void;
  moveTo(id: string, postalCode: string): void;
  hold(id: string): void;
  release(id: string): void;
  setDown(down: boolean): void;
}

const shopifyPlatform: Platform = {
  shop: 'check-shopify',
  key: 'shopify',
  place(postalCode = '51147') {
    const o = shopify.createOrder({ lineItems: [{ sku: 'TENT-2', quantity: 1, grams: 2400 }], shippingAddress: { zip: postalCode } });
    return { id: o.legacyResourceId, orderId: `CS-${o.name.replace('#', '')}`, number: o.name };
  },
  cancel: (id) => void shopify.cancelOrder(id),
  moveTo: (id, zip) => void shopify.editOrder(id, { shippingAddress: { zip } }),
  hold: (id) => void shopify.holdOrder(id),
  release: (id) => void shopify.releaseHold(id),
  setDown: (down) => void shopify.setFaults({ down }),
};

const wooPlatform: Platform = {
  shop: 'check-woo',
  key: 'woocommerce',
  place(postcode = '1100-001') {
    const o = woo.createOrder({
      status: 'processing',
      lineItems: [{ sku: 'PORT-10', quantity: 1, weight: '1.5' }],
      shipping: { postcode, country: 'PT', city: 'Lisboa', address_1: 'Rua Nova 3' },
    });
    return { id: String(o.id), orderId: `CW-${o.number}`, number: o.number };
  },
  cancel: (id) => void woo.editOrder(Number(id), { status: 'cancelled' }),
  moveTo: (id, postcode) => void woo.editOrder(Number(id), { shipping: { postcode } }),
  hold: (id) => void woo.editOrder(Number(id), { status: 'on-hold' }),
  release: (id) => void woo.editOrder(Number(id), { status: 'processing' }),
  setDown: (down) => void woo.setFaults({ down }),
};

const handleOf = (p: Platform, orderId: string) => h.env.client.workflow.getHandle(shipmentWorkflowId({ shop: p.shop, orderId }));
const stateOf = (p: Platform, orderId: string): Promise<ShipmentState> => handleOf(p, orderId).query(stateQuery);
const labelsOf = (order: { number: string }) => h.fake.labels().filter((l) => l.customerOrderNumber === order.number);

/** Pulled, then its label held back: the shipment knows the order as placed. */
async function placedAndWaiting(p: Platform, postalCode?: string) {
  const order = p.place(postalCode);
  expect((await pullNow(h.env.client, p.shop)).counts.started).toBe(1);
  await waitFor(
    async () =>
      (await stateOf(p, order.orderId)).phase === 'creating_label' && labelsHeldBack(h.fake, order.number) >= 1 ? true : undefined,
    {
      what: `${order.orderId} waiting for its label`,
      timeoutMs: 20_000,
      intervalMs: 100,
    },
  );
  // The platforms' modified times are to the second: the merchant acts a second after the read, as any merchant does.
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  return order;
}

describe.each([
  ['Shopify', shopifyPlatform],
  ['WooCommerce', wooPlatform],
])('%s', (_name, p) => {
  it('an order cancelled in the shop that no pull has told yet gets no label: the check stops it (cancelled_in_shop)', async () => {
    const release = holdLabelsBack(h.fake);
    let order: { id: string; orderId: string; number: string };
    try {
      order = await placedAndWaiting(p);
      p.cancel(order.id);
    } finally {
      release();
    }
    const outcome = (await handleOf(p, order.orderId).result()) as ShipmentOutcome;
    expect(outcome).toMatchObject({ outcome: 'cancelled_in_shop', labelId: null });
    expect(labelsOf(order)).toEqual([]);
    const state = await stateOf(p, order.orderId);
    expect(state.shopOrder?.changes.at(-1)?.action).toMatch(/found checking with the shop before the label/);
    await saveFixture(handleOf(p, order.orderId), `shop-check-${p.key}-cancelled-at-label`);
  });

  it('an address corrected in the shop that no pull has told yet is the label’s address', async () => {
    const release = holdLabelsBack(h.fake);
    let order: { id: string; orderId: string; number: string };
    try {
      order = await placedAndWaiting(p);
      p.moveTo(order.id, '20095');
    } finally {
      release();
    }
    await waitFor(async () => ((await stateOf(p, order.orderId)).labelId ? true : undefined), {
      what: `${order.orderId} labelled`,
      timeoutMs: 20_000,
    });
    expect(labelsOf(order).map((l) => [l.status, l.shipToPostalCode])).toEqual([['created', '20095']]);
    expect((await stateOf(p, order.orderId)).revision).toBe(2);
  });

  it('a hold the check found, released in the shop: the next pull tells the release, though its facts are the import’s', async () => {
    const release = holdLabelsBack(h.fake);
    let order: { id: string; orderId: string; number: string };
    try {
      order = await placedAndWaiting(p);
      p.hold(order.id);
      await waitFor(async () => ((await stateOf(p, order.orderId)).phase === 'held_in_shop' ? true : undefined), {
        what: `${order.orderId} held, found by the check`,
        timeoutMs: 20_000,
      });
    } finally {
      release();
    }
    // The release brings back the very facts the import read (and the pull's worker remembers);
    // the pull must tell them all the same: the shipment learnt the hold from the check.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    p.release(order.id);
    expect((await pullNow(h.env.client, p.shop)).counts.changed).toBe(1);
    await waitFor(async () => ((await stateOf(p, order.orderId)).labelId ? true : undefined), {
      what: `${order.orderId} labelled after its release`,
      timeoutMs: 20_000,
    });
    expect(labelsOf(order).map((l) => l.status)).toEqual(['created']);
  });

  it('a store that cannot answer the check does not stop the label: it goes on unchecked', async () => {
    const release = holdLabelsBack(h.fake);
    let order: { id: string; orderId: string; number: string };
    try {
      order = await placedAndWaiting(p);
      p.setDown(true);
    } finally {
      release();
    }
    try {
      await waitFor(async () => ((await stateOf(p, order.orderId)).labelId ? true : undefined), {
        what: `${order.orderId} labelled with its store down`,
        timeoutMs: 20_000,
      });
    } finally {
      p.setDown(false);
    }
    expect(labelsOf(order).map((l) => l.status)).toEqual(['created']);
  });
});

describe('an order at two locations (Shopify)', () => {
  it('cancelled in the shop while both labels are held back, no pull after: each parcel’s check stops its label', async () => {
    const release = holdLabelsBack(h.fake);
    const o = shopify.createOrder({ lineItems: [1, 2].map((i) => ({ sku: `PART-${i}`, quantity: 1, grams: 300 })), splitLocations: true });
    const order = { id: o.legacyResourceId, orderId: `CS-${o.name.replace('#', '')}`, number: o.name };
    const workflowId = shipmentWorkflowId({ shop: shopifyPlatform.shop, orderId: order.orderId });
    try {
      expect((await pullNow(h.env.client, shopifyPlatform.shop)).counts.started).toBe(1);
      for (const location of ['1', '2'])
        await waitFor(
          async () => {
            const s: ShipmentState | null = await h.env.client.workflow
              .getHandle(parcelWorkflowId(workflowId, location))
              .query(stateQuery)
              .catch(() => null); // not started yet
            return s?.phase === 'creating_label' ? s : undefined;
          },
          { what: `parcel ${location} waiting for its label`, timeoutMs: 40_000, intervalMs: 100 },
        );
      await waitFor(async () => (labelsHeldBack(h.fake, order.number) >= 2 ? true : undefined), {
        what: 'both parcels’ labels held back',
        timeoutMs: 40_000,
      });
      await new Promise((resolve) => setTimeout(resolve, 1_100)); // a second after the read, as placedAndWaiting
      shopify.cancelOrder(order.id);
    } finally {
      release();
    }
    const outcome = (await h.env.client.workflow.getHandle(workflowId).result()) as ShipmentOutcome;
    expect(outcome.parcels!.map((p) => p.outcome)).toEqual(['cancelled_in_shop', 'cancelled_in_shop']);
    expect(labelsOf(order)).toEqual([]);
    expect(shopify.order(order.id)!.fulfillments).toEqual([]);
  });
});
