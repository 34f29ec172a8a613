/**
 * The stores the import bench pulls from: a fake Shopify with a Plus-like bucket and a fake
 * WooCommerce ten or eleven hours ahead of UTC (Australia/Sydney) whose order reads bump the
 * modified date (HPOS), each with generated orders; the connector entries with `import` settings
 * that point the worker at them; and which orders still need a label.
 */
import { startFakeShopify, type FakeOrderView, type FakeShopify } from '../fake-shopify';
import { startFakeWooCommerce, type FakeWooCommerce, type FakeWooOrderView } from '../fake-woocommerce';

export const SHOPIFY_SHOP = 'import-shopify';
export const WOO_SHOP = 'import-woo';
export const WOO_TIMEZONE = 'Australia/Sydney';
/** A Plus-like store: 5,000 orders at about 20 points each take over half an hour at the Standard plan's half (50/s). */
export const PLUS_BUCKET = { maximumAvailable: 10_000, restoreRate: 1_000 };
/** The secret both fakes sign their webhooks with, and the trigger verifies. */
export const HOOK_SECRET = 'bench-import-hook-secret';
/** Generated orders are placed over the day before the run (inside every pull's first reach). */
const PLACED_OVER_MS = 86_400_000;
/** How far back a shop's first pull reads (the plain script's first run reaches as far). */
export const FIRST_PULL = '2d';
export const FIRST_PULL_MS = 2 * 86_400_000;
/** Skipped orders on Shopify: picked up or on hold (WooCommerce's generator makes ~5 % local pickup). */
const SHOPIFY_NOT_OURS = { pickUpRate: 0.03, onHoldRate: 0.02 };

export interface ImportStores {
  shopify: FakeShopify;
  woo: FakeWooCommerce;
  close(): Promise<void>;
}

/** Both stores with `orders` generated orders each, the same from `seed` on every call. */
export async function startImportStores(orders: number, seed: number): Promise<ImportStores> {
  const shopify = await startFakeShopify({ bucket: PLUS_BUCKET, seed });
  const woo = await startFakeWooCommerce({ timezone: WOO_TIMEZONE, hpos: true, seed });
  const now = Date.now();
  // One label per order: an order over two locations is reported, not imported (the tests cover that).
  shopify.generateOrders({
    count: orders,
    seed,
    createdFrom: iso(now - PLACED_OVER_MS),
    createdTo: iso(now - 60_000),
    splitRate: 0,
    ...SHOPIFY_NOT_OURS,
  });
  // The generator's sticker sheet has no weight, which the import reports instead of guessing: give it one
  // first (a completed order, so not one to label), so every order that needs a label can be imported.
  woo.createOrder({ status: 'completed', lineItems: [{ sku: 'GEN-STICKERS', quantity: 1, weight: '0.02' }] });
  woo.generateOrders({ count: orders, seed, spreadSeconds: PLACED_OVER_MS / 1000 });
  return { shopify, woo, close: async () => void (await Promise.all([shopify.close(), woo.close()])) };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The store's offset from UTC now, e.g. "+11:00" (Sydney keeps daylight saving time). */
export function utcOffset(timeZone: string): string {
  const name = new Intl.DateTimeFormat('en', { timeZone, timeZoneName: 'longOffset' })
    .formatToParts(new Date())
    .find((p) => p.type === 'timeZoneName');
  return name?.value.replace('GMT', '') || '+00:00';
}

const SERVICE = { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' };
const WOO_SHIP_FROM = { address: { streetLines: ['Rua das Flores 10'], city: 'Porto', postalCode: '4050-262', countryCode: 'PT' } };

/** A Shopify shop pulled by the worker; `settings` are its `import` settings beside the mapping. */
export function shopifyEntry(adminUrl: string, settings: Record<string, unknown>) {
  return {
    type: 'shopify',
    storeDomain: 'fake-store.myshopify.com',
    adminUrl,
    accessToken: 'shpat_fake_dev_token',
    webhookSecret: HOOK_SECRET,
    timeout: '5s',
    import: { firstPull: FIRST_PULL, ...settings, mapping: { defaultService: SERVICE, orderIdPrefix: 'S-' } },
  };
}

export function wooEntry(url: string, settings: Record<string, unknown>) {
  return {
    type: 'woocommerce',
    url,
    consumerKey: 'ck_fake_dev_key',
    consumerSecret: 'cs_fake_dev_secret',
    webhookSecret: HOOK_SECRET,
    timeout: '5s',
    import: { firstPull: FIRST_PULL, ...settings, mapping: { defaultService: SERVICE, shipFrom: WOO_SHIP_FROM, orderIdPrefix: 'W-' } },
  };
}

/**
 * Whether a Shopify order needs a label from us: open, not cancelled, with a fulfillment order
 * to ship that is not held (one this run's write-back fulfilled counts: it needed the label).
 */
export function shopifyNeedsLabel(o: FakeOrderView): boolean {
  if (o.cancelledAt !== null || o.closed) return false;
  return o.fulfillmentOrders.some((fo) => fo.deliveryMethod === 'SHIPPING' && !['ON_HOLD', 'SCHEDULED', 'CANCELLED'].includes(fo.status));
}

/** A processing WooCommerce order that is not picked up in store. */
export function wooNeedsLabel(o: FakeWooOrderView): boolean {
  return o.status === 'processing' && !['local_pickup', 'pickup_location'].includes(o.shippingMethod.methodId);
}
