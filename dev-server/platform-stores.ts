/**
 * The demo's platform shops: a fake Shopify store and a fake WooCommerce store, each with a few
 * seeded orders (the ids examples/platform-orders.ndjson names), and the connector entries that
 * wire the example shops to them with the fakes' dev credentials.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { PULL_TOPICS } from '../shop-trigger/topics';
import { PLATFORM_SHOPS } from './example-shops';

/** The fake Shopify app's client secret: Shopify signs an app's webhooks with it. */
const SHOPIFY_WEBHOOK_SECRET = 'fake-client-secret';
/** A WooCommerce webhook's secret is the merchant's choice: a fresh one per run. */
const WOO_WEBHOOK_SECRET = randomBytes(24).toString('base64url');

/**
 * How the demo shops' orders become label requests: the fakes' shipping methods, and order ids
 * prefixed as in examples/platform-orders.ndjson, so an order imported from that file and pulled
 * from the store is one shipment.
 */
const IMPORT = {
  shopify: {
    every: '1m',
    mapping: {
      shippingMethods: {
        Standard: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' },
        Express: { courier: 'dhl-express', productCode: 'EXPRESS_WORLDWIDE' },
      },
      defaultService: { courier: 'dpd-de', productCode: 'DPD_CLASSIC' },
      shipFrom: { contact: { firstName: 'Erik', lastName: 'Lindqvist', phone: '+49 40 5550 3344' } },
      parcelDimension: { length: 40, width: 30, height: 20 },
      orderIdPrefix: 'OO-',
    },
  },
  woocommerce: {
    every: '1m',
    mapping: {
      shippingMethods: { flat_rate: { courier: 'dpd-de', productCode: 'DPD_CLASSIC' } },
      defaultService: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' },
      shipFrom: {
        contact: { firstName: 'Inês', lastName: 'Costa', phone: '+351 22 555 0101' },
        address: { streetLines: ['Rua das Flores 10'], city: 'Porto', postalCode: '4050-262', countryCode: 'PT' },
      },
      orderIdPrefix: 'PW-',
    },
  },
};

/** Orders each fake store starts with: examples/platform-orders.ndjson names the first ones. */
const SEEDED_ORDERS = 6;

export interface PlatformStores {
  shopifyUrl: string;
  wooCommerceUrl: string;
  /** SHOP_CONNECTORS entries for the platform shops. */
  connectors: Record<string, unknown>;
}

type StartChild = (
  name: string,
  script: string,
  args: string[],
) => { waitForLine(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray | undefined> };

/** Each store keeps its orders in `dataDir` across restarts, and seeds them only when it starts empty. */
export async function startPlatformStores(
  ports: { shopify: number; wooCommerce: number },
  start: StartChild,
  dataDir: string,
): Promise<PlatformStores> {
  const seed = ['--seed-orders', String(SEEDED_ORDERS)];
  const stateFile = (name: string) => ['--state-file', path.join(dataDir, name)];
  const shopify = start('shopify', 'fake-shopify', [
    '--port',
    String(ports.shopify),
    '--shop-name',
    'Oslo Outdoor (fake Shopify)',
    ...seed,
    ...stateFile('fake-shopify.json'),
  ]);
  const woo = start('woocommerce', 'fake-woocommerce', [
    '--port',
    String(ports.wooCommerce),
    '--store-name',
    'Porto Wines (fake WooCommerce)',
    ...seed,
    ...stateFile('fake-woocommerce.json'),
  ]);
  const [shopifyLine, wooLine] = await Promise.all([
    shopify.waitForLine(/fake Shopify listening on (\S+)/, 60_000),
    woo.waitForLine(/fake WooCommerce listening on (\S+)/, 60_000),
  ]);
  if (!shopifyLine) throw new Error('the fake Shopify store did not print "fake Shopify listening on <url>" within 60 s');
  if (!wooLine) throw new Error('the fake WooCommerce store did not print "fake WooCommerce listening on <url>" within 60 s');
  const shopifyUrl = shopifyLine[1]!;
  const wooCommerceUrl = wooLine[1]!;
  return {
    shopifyUrl,
    wooCommerceUrl,
    connectors: {
      [PLATFORM_SHOPS.shopify]: {
        type: 'shopify',
        storeDomain: `${PLATFORM_SHOPS.shopify}.myshopify.com`,
        adminUrl: shopifyUrl,
        accessToken: 'shpat_fake_dev_token',
        webhookSecret: SHOPIFY_WEBHOOK_SECRET,
        import: IMPORT.shopify,
      },
      [PLATFORM_SHOPS.woocommerce]: {
        type: 'woocommerce',
        url: wooCommerceUrl,
        consumerKey: 'ck_fake_dev_key',
        consumerSecret: 'cs_fake_dev_secret',
        webhookSecret: WOO_WEBHOOK_SECRET,
        import: IMPORT.woocommerce,
      },
    },
  };
}

/** Each fake store sends its orders' webhooks to the worker's trigger endpoint. */
export async function subscribeStoreWebhooks(stores: PlatformStores, triggerUrl: string): Promise<void> {
  const hook = (platform: string, shop: string) => `${triggerUrl}/hooks/${platform}/${encodeURIComponent(shop)}`;
  for (const topic of PULL_TOPICS.shopify) {
    await adminPost(`${stores.shopifyUrl}/_fake/webhooks`, {
      topic,
      address: hook('shopify', PLATFORM_SHOPS.shopify),
      secret: SHOPIFY_WEBHOOK_SECRET,
    });
  }
  for (const topic of PULL_TOPICS.woocommerce) {
    await adminPost(`${stores.wooCommerceUrl}/_fake/webhooks`, {
      topic,
      deliveryUrl: hook('woocommerce', PLATFORM_SHOPS.woocommerce),
      secret: WOO_WEBHOOK_SECRET,
    });
  }
}

async function adminPost(url: string, body: unknown): Promise<void> {
  const answer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!answer.ok) throw new Error(`POST ${url} answered ${answer.status}: ${(await answer.text()).slice(0, 300)}`);
}

/** What the fake stores call the next order placed in them (their ids count up), for the banner's commands. */
export interface NextOrders {
  shopify?: { id: string; number: number };
  wooCommerce?: number;
}

export async function nextOrders(stores: PlatformStores): Promise<NextOrders> {
  const shopify = await readJson<{ orders?: Array<{ legacyResourceId?: unknown; name?: unknown }> }>(`${stores.shopifyUrl}/_fake/orders`);
  const woo = await readJson<Array<{ id?: unknown }>>(`${stores.wooCommerceUrl}/_fake/orders`);
  const ids = (shopify?.orders ?? []).map((o) => Number(o.legacyResourceId)).filter(Number.isSafeInteger);
  const numbers = (shopify?.orders ?? []).map((o) => Number(String(o.name).replace('#', ''))).filter(Number.isSafeInteger);
  const wooIds = (Array.isArray(woo) ? woo : []).map((o) => o.id).filter((id): id is number => typeof id === 'number');
  return {
    ...(ids.length && numbers.length ? { shopify: { id: String(Math.max(...ids) + 1), number: Math.max(...numbers) + 1 } } : {}),
    ...(wooIds.length ? { wooCommerce: Math.max(...wooIds) + 1 } : {}),
  };
}

/** A fake store's admin answer; undefined when it cannot give one (the banner then leaves those commands out). */
async function readJson<T>(url: string): Promise<T | undefined> {
  try {
    const answer = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    return answer.ok ? ((await answer.json()) as T) : undefined;
  } catch {
    return undefined;
  }
}
