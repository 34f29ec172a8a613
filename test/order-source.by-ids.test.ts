/**
 * `OrderSource.byIds`: the orders of named platform ids as the platform has them now, in any
 * status, over real HTTP to both local fakes; an id the platform does not list is left out. Each
 * reading says when it was read (`readAt`), which orders two readings of one second.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import { importShops } from '../shop-import/schedule';
import { isRefused, type PlatformOrder } from '../domain/platform-order';
import { OrderSource, type ImportConnector } from '../platforms/order-source';
import { PlatformConnections } from '../platforms/connections';
import { loadShopConnectors } from '../platforms/connectors';
import { changeOf } from '../shop-import/changes';
import { seenOf } from '../shop-import/facts';
import { shopChangeRefusalOf } from '../domain/shipment-machine/shop';
import { readStamp } from '../platforms/read-clock';

let shopify: FakeShopify;
let woo: FakeWooCommerce;
let connectors: ImportConnector[];

beforeAll(async () => {
  shopify = await startFakeShopify();
  woo = await startFakeWooCommerce();
  const imported = { every: '1h', paused: true, mapping: { shippingMethods: { Standard: { courier: 'dhl-express', productCode: 'X' } } } };
  connectors = importShops(
    loadShopConnectors({
      SHOP_CONNECTORS: JSON.stringify({
        's-shop': {
          type: 'shopify',
          storeDomain: 'fake-store.myshopify.com',
          adminUrl: shopify.baseUrl,
          accessToken: 'shpat_fake_dev_token',
          import: imported,
        },
        'w-shop': {
          type: 'woocommerce',
          url: woo.baseUrl,
          consumerKey: 'ck_fake_dev_key',
          consumerSecret: 'cs_fake_dev_secret',
          import: {
            ...imported,
            mapping: {
              ...imported.mapping,
              shipFrom: { address: { streetLines: ['Rua 1'], city: 'Porto', postalCode: '4050-262', countryCode: 'PT' } },
            },
          },
        },
      }),
    }),
  );
});
afterAll(async () => {
  await shopify?.close();
  await woo?.close();
});

const statusOf = (orders: PlatformOrder[], id: string) => orders.find((o) => o.platformOrderId === id)?.merchant.status;
const read = async (shop: string, ids: string[]) => {
  const orders = await new OrderSource(new PlatformConnections()).byIds(
    connectors.find((c) => c.shop === shop)!,
    ids,
    AbortSignal.timeout(10_000),
  );
  expect(orders.filter(isRefused)).toEqual([]);
  return orders as PlatformOrder[];
};

describe('OrderSource.byIds', () => {
  it('Shopify: open, held, cancelled and refunded orders are read as they are now, past one search of 10 ids', async () => {
    const place = () => shopify.createOrder({ lineItems: [{ sku: 'TENT-2', quantity: 1, grams: 2400 }] }).legacyResourceId;
    const ids = Array.from({ length: 12 }, place);
    shopify.holdOrder(ids[1]!);
    shopify.cancelOrder(ids[2]!);
    shopify.refundOrder(ids[11]!);
    const orders = await read('s-shop', [...ids, '999999999']);
    expect(orders.map((o) => o.platformOrderId).sort()).toEqual([...ids].sort());
    expect([statusOf(orders, ids[0]!), statusOf(orders, ids[1]!), statusOf(orders, ids[2]!), statusOf(orders, ids[11]!)]).toEqual([
      'open',
      'on_hold',
      'cancelled',
      'refunded',
    ]);
  });

  it('WooCommerce: processing, on-hold and cancelled orders are read as they are now', async () => {
    const place = () => String(woo.createOrder({ status: 'processing', lineItems: [{ sku: 'PORT-10', quantity: 1, weight: '1.5' }] }).id);
    const ids = [place(), place(), place()];
    woo.editOrder(Number(ids[1]), { status: 'on-hold' });
    woo.editOrder(Number(ids[2]), { status: 'cancelled' });
    const orders = await read('w-shop', [...ids, '999999']);
    expect(orders.map((o) => o.platformOrderId).sort()).toEqual([...ids].sort());
    expect(ids.map((id) => statusOf(orders, id))).toEqual(['open', 'on_hold', 'cancelled']);
  });

  it.each(['s-shop', 'w-shop'])(
    '%s: each reading carries when it was read, later readings later, into the change the shipment is told',
    async (shop) => {
      const id =
        shop === 's-shop'
          ? shopify.createOrder({ lineItems: [{ sku: 'TENT-2', quantity: 1, grams: 2400 }] }).legacyResourceId
          : String(woo.createOrder({ status: 'processing', lineItems: [{ sku: 'PORT-10', quantity: 1, weight: '1.5' }] }).id);
      const [first] = await read(shop, [id]);
      const [second] = await read(shop, [id]);
      expect(Date.parse(second!.readAt!)).toBeGreaterThan(Date.parse(first!.readAt!));
      const connector = connectors.find((c) => c.shop === shop)!;
      expect(changeOf(shop, second!, connector.import.mapping)).toMatchObject({ readAt: second!.readAt, modifiedAt: second!.modifiedAt });
    },
  );

  it('WooCommerce, two readings within one second (its times are to the second): the one read earlier is stale to a shipment that took the later', async () => {
    const frozen = Date.now();
    const store = await startFakeWooCommerce({ now: () => frozen });
    try {
      const [connector] = importShops(
        loadShopConnectors({
          SHOP_CONNECTORS: JSON.stringify({
            'w-frozen': {
              type: 'woocommerce',
              url: store.baseUrl,
              consumerKey: 'ck_fake_dev_key',
              consumerSecret: 'cs_fake_dev_secret',
              import: {
                every: '1h',
                paused: true,
                mapping: {
                  shippingMethods: { Standard: { courier: 'dhl-express', productCode: 'X' } },
                  shipFrom: { address: { streetLines: ['Rua 1'], city: 'Porto', postalCode: '4050-262', countryCode: 'PT' } },
                },
              },
            },
          }),
        }),
      );
      const id = store.createOrder({ status: 'processing', lineItems: [{ sku: 'PORT-10', quantity: 1, weight: '1.5' }] }).id;
      const source = new OrderSource(new PlatformConnections());
      const readOne = async () => (await source.byIds(connector!, [String(id)], AbortSignal.timeout(10_000)))[0] as PlatformOrder;
      const earlier = await readOne();
      store.editOrder(id, { status: 'cancelled' });
      const later = await readOne();
      expect(later.modifiedAt).toBe(earlier.modifiedAt);
      expect(later.merchant.status).toBe('cancelled');
      const known = seenOf(later);
      // The schedule's reading arrives after the webhook's later one: refused, whatever the order of arrival.
      expect(shopChangeRefusalOf({ ended: false, known }, seenOf(earlier))).toMatch(/^stale: read at /);
      expect(shopChangeRefusalOf({ ended: false, known: seenOf(earlier) }, known)).toBeNull();
    } finally {
      await store.close();
    }
  });
});

describe('readStamp', () => {
  it('is strictly increasing within a process, with a clock that stands still or steps back', () => {
    const stamps = [readStamp(5_000), readStamp(5_000), readStamp(4_000), readStamp(6_000)].map(Date.parse);
    for (let i = 1; i < stamps.length; i++) expect(stamps[i]).toBeGreaterThan(stamps[i - 1]!);
  });
});
