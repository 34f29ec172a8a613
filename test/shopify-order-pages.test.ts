/**
 * Reading a Shopify order larger than the page query in pages (platforms/shopify/whole-order.ts),
 * over HTTP against the local fake, which pages connections as Shopify documents (first/after,
 * pageInfo.hasNextPage/endCursor): every fulfillment order and line arrives, each query stays
 * under Shopify's 1,000-point cap, the bounds of the import settings hold, and a store whose
 * pages do not move on is one rejection. Then the split into parcels and their mapping.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { ShopifyClient } from '../platforms/shopify/client';
import { buildShopifyConnector } from '../platforms/shopify/build';
import { ShopifyConnectorConfig } from '../platforms/shopify/settings';
import { changesQuery, eligibleQuery, readShopifyPage } from '../platforms/shopify/read';
import { readWholeOrder } from '../platforms/shopify/whole-order';
import { Order as OrderSchema, ORDER_FIELDS, type Order } from '../platforms/shopify/order-fields';
import { z } from 'zod';
import { isRefused, type PlatformOrder, type ReadOrder } from '../domain/platform-order';
import { mapOrder } from '../shop-import/mapping';
import { labelIdempotencyKey } from '../activities/shipping-api';
import { shipmentEventId } from '../domain/events';
import { ImportMapping } from '../config/shop-import';
import { seenOf } from '../shop-import/facts';
import { fulfilShopifyOrder } from './helpers/platforms';

let shopify: FakeShopify;
let client: ShopifyClient;

beforeAll(async () => {
  shopify = await startFakeShopify();
  // A Plus store's bucket: the reads here are not paced by the restore rate.
  shopify.setBucket({ maximumAvailable: 20_000, restoreRate: 1_000 });
  const config = ShopifyConnectorConfig.parse({
    type: 'shopify',
    storeDomain: 'fake-store.myshopify.com',
    adminUrl: shopify.baseUrl,
    accessToken: 'shpat_fake_dev_token',
  });
  client = new ShopifyClient(
    buildShopifyConnector(
      'pages',
      config,
      (f) => (f === 'accessToken' ? 'shpat_fake_dev_token' : null),
      () => true,
    ),
  );
});
afterAll(async () => {
  await shopify?.close();
});

const lines = (n: number) => Array.from({ length: n }, (_, i) => ({ sku: `L-${i}`, quantity: 1 + (i % 3), grams: 10 }));
const WIDE = { fulfillmentOrders: 50, lines: 1000 };

async function read(id: string, size = WIDE, query = eligibleQuery(null, [id])): Promise<ReadOrder> {
  const { orders } = await readShopifyPage(
    client,
    { query, first: 5, after: null },
    size,
    new AbortController().signal,
    30_000,
    Date.now(),
  );
  expect(orders).toHaveLength(1);
  return orders[0]!;
}

describe('an order larger than the page query', () => {
  it('7 fulfillment orders of 30 lines (210) arrive whole, every query under 1,000 requested points', async () => {
    const id = shopify.createOrder({ lineItems: lines(210), fulfillmentOrderCount: 7 }).legacyResourceId;
    const costs: number[] = [];
    const order = (await read(id)) as PlatformOrder;
    expect(isRefused(order)).toBe(false);
    expect(order.lines.map((l) => l.sku)).toEqual(expect.arrayContaining(Array.from({ length: 210 }, (_, i) => `L-${i}`)));
    expect(order.lines).toHaveLength(210);
    expect(order.parcels!.map((p) => [p.location, p.lines.length])).toEqual([
      ['1', 120],
      ['2', 90],
    ]);
    expect(order.problem).toBeNull();
    for (const cost of (client as unknown as { costs: Map<string, number> }).costs.values()) costs.push(cost);
    expect(Math.max(...costs)).toBeLessThan(1000);
  });

  it('beyond import.maxFulfillmentOrders or maxOrderLines: one rejection naming the setting', async () => {
    const id = shopify.createOrder({ lineItems: lines(60), fulfillmentOrderCount: 6 }).legacyResourceId;
    const fos = await read(id, { fulfillmentOrders: 5, lines: 1000 });
    expect(fos).toMatchObject({
      refused: true,
      problem: { field: 'fulfillmentOrders', message: expect.stringMatching(/more than 5 fulfillment orders .*maxFulfillmentOrders/) },
    });
    const few = await read(id, { fulfillmentOrders: 50, lines: 59 });
    expect(few).toMatchObject({ refused: true, problem: { message: expect.stringMatching(/more than 59 lines .*maxOrderLines/) } });
    expect(await read(id, { fulfillmentOrders: 6, lines: 60 })).toMatchObject({ platformOrderId: id });
  });

  it('a store that says there is more but gives no cursor (or nothing) is one rejection, not an endless read', async () => {
    const page = (hasNextPage: boolean, nodes: unknown[], endCursor: string | null) => ({ pageInfo: { hasNextPage, endCursor }, nodes });
    const first = await shopifyOrderNode();
    let calls = 0;
    const stuck = {
      call: async () => {
        calls++;
        return { order: { ...first, fulfillmentOrders: page(true, [], 'same') } };
      },
    } as unknown as ShopifyClient;
    const result = await readWholeOrder(stuck, first, WIDE, new AbortController().signal, 1000);
    expect(result).toMatchObject({ refused: true, problem: { message: 'the store pages its fulfillment orders without moving on' } });
    expect(calls).toBe(1);
    const noCursor = {
      call: async () => ({ order: { ...first, fulfillmentOrders: page(true, first.fulfillmentOrders.nodes, null) } }),
    } as unknown as ShopifyClient;
    expect(await readWholeOrder(noCursor, first, WIDE, new AbortController().signal, 1000)).toMatchObject({ refused: true });
  });
});

describe('parcels', () => {
  const mapping = ImportMapping.parse({ shippingMethods: { Standard: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' } } });

  it("two locations map to one label request each (its location's ship-from and lines); one location has no parcels in its record", async () => {
    const split = (await read(shopify.createOrder({ lineItems: lines(3), splitLocations: true }).legacyResourceId)) as PlatformOrder;
    const mapped = mapOrder('pages', split, mapping);
    if (!mapped.ok) throw new Error(JSON.stringify(mapped.problems));
    expect(
      mapped.record.parcels!.map((p) => [
        p.location,
        p.name,
        p.labelRequest.shipment.shipFrom!.address!.city,
        p.labelRequest.shipment.parcels![0]!.items!.length,
      ]),
    ).toEqual([
      ['1', 'Main warehouse', 'Hamburg', 2],
      ['2', 'Second warehouse', 'München', 1],
    ]);
    expect(mapped.record.labelRequest).toEqual(mapped.record.parcels![0]!.labelRequest);
    const one = mapOrder('pages', (await read(shopify.createOrder({ lineItems: lines(3) }).legacyResourceId)) as PlatformOrder, mapping);
    expect(one.ok && one.record.parcels).toBeUndefined();
  });

  it("a parcel's key and event ids name its location; an order of one location keeps its own exactly", () => {
    const order = { shop: 'pages', orderId: 'P-1', revision: 2 };
    expect(labelIdempotencyKey(order)).toBe('pages:P-1:r2');
    expect(labelIdempotencyKey({ ...order, location: '77' })).toBe('pages:P-1@77:r2');
    // `@` inside an id is encoded: order "P-1@77" of one location never shares the parcel's key.
    expect(labelIdempotencyKey({ ...order, orderId: 'P-1@77' })).toBe('pages:P-1%4077:r2');
    const long = { ...order, orderId: 'X'.repeat(120) };
    const hashed = [
      labelIdempotencyKey(long),
      labelIdempotencyKey({ ...long, location: '1' }),
      labelIdempotencyKey({ ...long, location: '2' }),
    ];
    expect(new Set(hashed).size).toBe(3);
    for (const key of hashed) expect(key).toMatch(/^sha256-[0-9a-f]{64}:r2$/);
    const event = { shop: 'pages', orderId: 'P-1', sequence: 1 };
    const ids = [
      shipmentEventId(event),
      shipmentEventId({ ...event, parcel: { location: '1' } }),
      shipmentEventId({ ...event, parcel: { location: '2' } }),
    ];
    expect(new Set(ids).size).toBe(3);
  });

  it("a parcel's problem names the parcel", async () => {
    const id = shopify.createOrder({
      lineItems: [
        { sku: 'A', quantity: 1, grams: 10 },
        { sku: 'B', quantity: 1, grams: 0 },
      ],
      splitLocations: true,
    }).legacyResourceId;
    const mapped = mapOrder('pages', (await read(id)) as PlatformOrder, mapping);
    expect(mapped).toMatchObject({ ok: false, problems: [{ field: 'parcels[1].lines[0].weight' }] });
  });
});

describe('a fulfilled order, read again by the changes query', () => {
  const mapping = ImportMapping.parse({ shippingMethods: { Standard: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' } } });
  const changed = async (id: string) => (await read(id, WIDE, `${changesQuery(null)} id:${id}`)) as PlatformOrder;
  const requests = (order: PlatformOrder) => {
    const mapped = mapOrder('pages', order, mapping);
    if (!mapped.ok) throw new Error(JSON.stringify(mapped.problems));
    return mapped.record.parcels!.map((p) => p.labelRequest);
  };

  it('is skipped, keeps its facts through writes like ours, and offers its shipped parcels to the edited address', async () => {
    const id = shopify.createOrder({ lineItems: lines(3), splitLocations: true }).legacyResourceId;
    const open = await changed(id);
    await fulfilShopifyOrder(shopify.baseUrl, shopify.order(id)!);
    shopify.editOrder(id, { note: 'Shipping label rejected', tags: ['label-rejected'] });
    const shipped = await changed(id);
    expect(shopify.order(id)!.displayFulfillmentStatus).toBe('FULFILLED');
    expect(shipped.skip).toMatch(/^fulfilled: read again only for changes/);
    expect(shipped.modifiedAt > open.modifiedAt || shipped.modifiedAt === open.modifiedAt).toBe(true);
    // What change detection compares is what the shipment started from: nothing differs.
    expect(seenOf(shipped).facts).toEqual(seenOf(open).facts);
    expect(requests(shipped)).toEqual(requests(open));
    // No longer eligible: the import's own query does not list it.
    expect(
      (
        await readShopifyPage(
          client,
          { query: eligibleQuery(null, [id]), first: 5, after: null },
          WIDE,
          new AbortController().signal,
          30_000,
          Date.now(),
        )
      ).orders,
    ).toEqual([]);

    shopify.editOrder(id, { shippingAddress: { zip: '20095' } });
    const edited = await changed(id);
    expect(seenOf(edited).facts).toEqual({ ...seenOf(open).facts, address: expect.not.stringMatching(seenOf(open).facts.address) });
    expect(requests(edited).map((r) => [r.shipment.shipTo!.address!.postalCode, r.shipment.parcels![0]!.items!.length])).toEqual([
      ['20095', 2],
      ['20095', 1],
    ]);
  });

  it('an order with a fulfillment order still held is not taken for fulfilled', async () => {
    const id = shopify.createOrder({ lineItems: lines(2), splitLocations: true }).legacyResourceId;
    const [first, second] = shopify.order(id)!.fulfillmentOrders;
    shopify.holdOrder(id, { fulfillmentOrderId: second!.id });
    await fulfilShopifyOrder(shopify.baseUrl, { fulfillmentOrders: [first!] });
    const order = await changed(id);
    expect(order.skip).toMatch(/^nothing left to ship/);
    expect(order.merchant.status).toBe('on_hold');
  });
});

/** A well-formed order as the page query reads it, for the scripted stores above. */
async function shopifyOrderNode(): Promise<Order> {
  const id = shopify.createOrder({ lineItems: lines(2) }).legacyResourceId;
  const operation = {
    name: 'scriptedOrder',
    estimatedCost: 120,
    document: `query ScriptedOrder($id: ID!) { order(id: $id) { ${ORDER_FIELDS(2, 10)} } }`,
    data: z.object({ order: OrderSchema }),
  };
  return (await client.call(operation, { id: `gid://shopify/Order/${id}` }, new AbortController().signal, 30_000)).order;
}
