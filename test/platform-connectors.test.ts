/**
 * The platform connectors' write logic against the local fakes over loopback, without Temporal:
 * one event at a time, as the delivery activity hands it over.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeShipmentEvent, type ShipmentEventInput } from '../domain/events';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import { loadShopConnectors, type ShopifyConnector, type WooCommerceConnector } from '../platforms/connectors';
import { PlatformConnections } from '../platforms/connections';
import type { PlatformRefs } from '../platforms/connection/result';
import { platformConnectors } from './helpers/platforms';

let shopify: FakeShopify;
let woo: FakeWooCommerce;
let tokyo: FakeWooCommerce;
let platforms: PlatformConnections;
let connectors: ReturnType<typeof loadShopConnectors>;

beforeAll(async () => {
  shopify = await startFakeShopify();
  woo = await startFakeWooCommerce();
  tokyo = await startFakeWooCommerce({ timezone: FAR_ZONE.name });
  const site = (url: string, extra = {}) => ({ ...platformConnectors('', url)['woo-shop'], ...extra });
  connectors = loadShopConnectors({
    SHOP_CONNECTORS: JSON.stringify({
      ...platformConnectors(shopify.baseUrl, woo.baseUrl),
      'woo-tokyo': site(tokyo.baseUrl),
      // A provider name the store's Shipment Tracking extension does not list.
      'woo-unlisted': site(woo.baseUrl, { providers: { 'dhl-express': 'DHL Parcel Nowhere' } }),
    }),
  });
  platforms = new PlatformConnections();
});
afterAll(async () => {
  await Promise.all([shopify?.close(), woo?.close(), tokyo?.close()]);
});

const MINUTE = 60_000;
/** A zone whose date differs from UTC's at this hour: +14 h from 10:00 UTC on, −11 h before. */
const FAR_ZONE =
  new Date().getUTCHours() >= 10
    ? { name: 'Pacific/Kiritimati', offsetMs: 14 * 60 * MINUTE }
    : { name: 'Pacific/Pago_Pago', offsetMs: -11 * 60 * MINUTE };
const at = (ms: number) => new Date(ms).toISOString();

/** Delivers one event of order `orderId` through the shop's connector, keeping the refs it learns. */
async function deliver(
  shop: string,
  platformOrderId: string,
  refs: PlatformRefs,
  event: Omit<ShipmentEventInput, 'shop' | 'orderId'>,
  location?: string,
) {
  const connector = connectors.connectorFor(shop) as ShopifyConnector | WooCommerceConnector;
  const full = makeShipmentEvent({ ...event, shop, orderId: `O-${platformOrderId}` } as ShipmentEventInput);
  return platforms.for(connector).deliver({
    event: full,
    platformOrderId,
    courier: 'dhl-express',
    refs,
    ...(location !== undefined ? { location } : {}),
    signal: new AbortController().signal,
    maxWaitMs: 5_000,
  });
}

function labelCreated(sequence: number, occurredAt: string, trackingNumber = `JD${sequence}${Date.now()}`) {
  return {
    type: 'label.created' as const,
    sequence,
    occurredAt,
    data: {
      labelId: 'lbl-1',
      revision: 1,
      courier: 'dhl-express',
      customerOrderNumber: 'C-1',
      courierOrderNumber: null,
      trackingNumber,
      labelUrl: null,
    },
  };
}

function trackingUpdated(
  sequence: number,
  occurredAt: string,
  tag: string,
  subtag: string,
  checkpointTime: string | null,
  trackingNumber: string,
) {
  return {
    type: 'tracking.updated' as const,
    sequence,
    occurredAt,
    data: {
      tag,
      subtag,
      subtagMessage: null,
      trackingNumber,
      lastCheckpoint:
        checkpointTime === null
          ? null
          : { checkpointTime, location: 'Oslo hub', city: 'Oslo', countryRegion: 'NO', message: 'Picked up', tag, subtag },
    },
  };
}

describe('Shopify', () => {
  it('no scan lost to our own stamp: InfoReceived without a checkpoint, then a scan timed before that poll, are both written', async () => {
    const id = shopify.createOrder({ lineItems: [{ sku: 'BEAN-1', quantity: 1 }] }).legacyResourceId;
    const refs: PlatformRefs = {};
    const t0 = Date.now(); // the label: 10:00
    const number = `JD-STAMP-${t0}`;
    expect(await deliver('shopify-shop', id, refs, labelCreated(1, at(t0), number))).toMatchObject({ kind: 'delivered' });
    // InfoReceived without a checkpoint, seen by the poll at 10:05.
    await deliver('shopify-shop', id, refs, trackingUpdated(2, at(t0 + 5 * MINUTE), 'InfoReceived', 'InfoReceived_001', null, number));
    // The carrier's pickup scan, timed 10:02.
    await deliver(
      'shopify-shop',
      id,
      refs,
      trackingUpdated(3, at(t0 + 6 * MINUTE), 'InTransit', 'InTransit_001', at(t0 + 2 * MINUTE), number),
    );
    const events = shopify.order(id)!.fulfillments[0]!.events;
    expect(events.map((e) => e.status)).toEqual(['CONFIRMED', 'CARRIER_PICKED_UP']);
    // A scan older than a real one is still late.
    await deliver('shopify-shop', id, refs, trackingUpdated(4, at(t0 + 7 * MINUTE), 'InTransit', 'InTransit_002', at(t0 + MINUTE), number));
    expect(shopify.order(id)!.fulfillments[0]!.events).toHaveLength(2);
  });
});

describe('Shopify: a parcel of a split order whose fulfillment answer was lost', () => {
  // The label has no tracking number yet (the carrier gives it later): the fulfillment goes without one.
  const untrackedLabel = () => labelCreated(1, at(Date.now()), null as unknown as string);

  it.each([
    ['the other location still open', false],
    ['the other location fulfilled without tracking too', true],
  ])('is adopted by the next attempt (%s): its tracking and events reach it, no second fulfillment', async (_case, otherFirst) => {
    const order = shopify.createOrder({
      lineItems: [
        { sku: 'A', quantity: 1 },
        { sku: 'B', quantity: 1 },
      ],
      splitLocations: true,
    });
    const id = order.legacyResourceId;
    const other: PlatformRefs = {};
    if (otherFirst) expect(await deliver('shopify-shop', id, other, untrackedLabel(), '2')).toMatchObject({ kind: 'delivered' });
    shopify.setFaults({ failNext: [{ operation: 'fulfillmentCreate', kind: 'commit-then-drop' }] });
    const refs: PlatformRefs = {};
    // Applied by the store, the answer lost: the attempt ends unsure, the next one reads what the store has.
    expect(await deliver('shopify-shop', id, refs, untrackedLabel(), '1')).not.toMatchObject({ kind: 'delivered' });
    expect(await deliver('shopify-shop', id, refs, untrackedLabel(), '1')).toMatchObject({ kind: 'delivered' });
    const view = shopify.order(id)!;
    const atOne = view.fulfillments.filter((f) => f.locationId === 'gid://shopify/Location/1');
    expect(atOne).toHaveLength(1);
    expect(refs.fulfillmentId).toBe(atOne[0]!.id);
    // The carrier's number comes with the first scan: written to this parcel's fulfillment, not lost.
    const number = `JD-SPLIT-${Date.now()}`;
    await deliver('shopify-shop', id, refs, trackingUpdated(2, at(Date.now()), 'InTransit', 'InTransit_001', at(Date.now()), number), '1');
    const after = shopify.order(id)!.fulfillments.find((f) => f.id === atOne[0]!.id)!;
    expect(after.trackingInfo.map((t) => t.number)).toEqual([number]);
    expect(after.events.map((e) => e.status)).toEqual(['CARRIER_PICKED_UP']);
    expect(shopify.order(id)!.fulfillments).toHaveLength(otherFirst ? 2 : 1);
  });
});

describe('WooCommerce', () => {
  it("date_shipped is the store's date, not UTC's (a store 14 h ahead or 11 h behind, whichever differs now)", async () => {
    const id = String(tokyo.createOrder({ status: 'processing', lineItems: [{ sku: 'A', quantity: 1 }] }).id);
    await deliver('woo-tokyo', id, {}, labelCreated(1, at(Date.now())));
    const [item] = tokyo.order(Number(id))!.trackingItems;
    const storeDay = new Date(Date.now() + FAR_ZONE.offsetMs).toISOString().slice(0, 10);
    expect(storeDay).not.toBe(new Date().toISOString().slice(0, 10));
    expect(item!.date_shipped).toBe(storeDay);
  });

  it('a mapped provider the extension does not list is written as a custom provider, never as an empty one', async () => {
    const id = String(woo.createOrder({ status: 'processing', lineItems: [{ sku: 'A', quantity: 1 }] }).id);
    await deliver('woo-unlisted', id, {}, labelCreated(1, at(Date.now())));
    const listed = String(woo.createOrder({ status: 'processing', lineItems: [{ sku: 'A', quantity: 1 }] }).id);
    await deliver('woo-shop', listed, {}, labelCreated(1, at(Date.now())));
    expect(woo.order(Number(id))!.trackingItems).toEqual([expect.objectContaining({ tracking_provider: 'DHL Parcel Nowhere' })]);
    expect(woo.order(Number(listed))!.trackingItems).toEqual([
      expect.objectContaining({ tracking_provider: 'DHL', tracking_link: expect.stringContaining('https://') }),
    ]);
  });

  it('an order the merchant cancelled or refunded gets nothing written: no tracking item, no note, no status', async () => {
    for (const status of ['cancelled', 'refunded'] as const) {
      const id = String(woo.createOrder({ status, lineItems: [{ sku: 'A', quantity: 1 }] }).id);
      const number = `JD-${status}-${Date.now()}`;
      for (const event of [
        labelCreated(1, at(Date.now()), number),
        trackingUpdated(2, at(Date.now()), 'Delivered', 'Delivered_001', at(Date.now()), number),
      ])
        expect(await deliver('woo-shop', id, {}, event)).toMatchObject({ kind: 'delivered' });
      const view = woo.order(Number(id))!;
      expect({ status: view.status, items: view.trackingItems, notes: view.notes }).toEqual({ status, items: [], notes: [] });
    }
  });

  it("a copy of our tracking item or note that a slow host applied late is found on the next event's read and deleted", async () => {
    const id = String(woo.createOrder({ status: 'processing', lineItems: [{ sku: 'A', quantity: 1 }] }).id);
    const refs: PlatformRefs = {};
    const number = `JD-COPY-${Date.now()}`;
    const event2 = trackingUpdated(2, at(Date.now()), 'InTransit', 'InTransit_002', at(Date.now()), number);
    await deliver('woo-shop', id, refs, labelCreated(1, at(Date.now()), number));
    await deliver('woo-shop', id, refs, event2);
    // What a write sent again before the first landed leaves behind: the same item and the same note twice.
    await deliver('woo-shop', id, {}, labelCreated(1, at(Date.now()), number)); // adopts: no copy
    const view = woo.order(Number(id))!;
    expect(view.trackingItems).toHaveLength(1);
    const note = view.notes.find((n) => n.note.startsWith('Tracking'))!.note;
    expect(note).toMatch(/ \(ref [0-9a-f]{8}\)$/);
    const site = `${woo.baseUrl}/wp-json`;
    const auth = { authorization: `Basic ${Buffer.from('ck_fake_dev_key:cs_fake_dev_secret').toString('base64')}` };
    const post = (path: string, body: unknown) =>
      fetch(`${site}/${path}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await post(`wc-shipment-tracking/v3/orders/${id}/shipment-trackings`, { tracking_number: number, tracking_provider: 'DHL' });
    await post(`wc/v3/orders/${id}/notes`, { note });
    expect(woo.order(Number(id))!.trackingItems).toHaveLength(2);

    await deliver('woo-shop', id, refs, trackingUpdated(3, at(Date.now()), 'Delivered', 'Delivered_001', at(Date.now()), number));
    const after = woo.order(Number(id))!;
    expect(after.trackingItems.map((t) => t.tracking_id)).toEqual([refs.trackingItemId]);
    expect(after.notes.filter((n) => n.note === note)).toHaveLength(1);
  });
});
