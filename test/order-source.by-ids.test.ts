/**
 * `OrderSource.byIds`: the orders of named platform ids as the platform has them now, in any
 * status, over real HTTP to both local fakes; an id the platform does not list is left out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import { importShops } from '../shop-import/schedule';
import { isRefused, type PlatformOrder } from '../domain/platform-order';
import { OrderSource, type ImportConnector } from '../platforms/order-source';
import { PlatformConnections } from '../platforms/connections';
import { loadShopConnectors } from '../platforms/connectors';

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
});
