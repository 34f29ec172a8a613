/**
 * The demo's platform shops: a fake Shopify store and a fake WooCommerce store, each with a few
 * seeded orders (the ids examples/platform-orders.ndjson names), and the connector entries that
 * wire the example shops to them with the fakes' dev credentials.
 */
import { PLATFORM_SHOPS } from './example-shops';

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

export async function startPlatformStores(ports: { shopify: number; wooCommerce: number }, start: StartChild): Promise<PlatformStores> {
  const seed = ['--seed-orders', String(SEEDED_ORDERS)];
  const shopify = start('shopify', 'fake-shopify', [
    '--port',
    String(ports.shopify),
    '--shop-name',
    'Oslo Outdoor (fake Shopify)',
    ...seed,
  ]);
  const woo = start('woocommerce', 'fake-woocommerce', [
    '--port',
    String(ports.wooCommerce),
    '--store-name',
    'Porto Wines (fake WooCommerce)',
    ...seed,
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
      },
      [PLATFORM_SHOPS.woocommerce]: {
        type: 'woocommerce',
        url: wooCommerceUrl,
        consumerKey: 'ck_fake_dev_key',
        consumerSecret: 'cs_fake_dev_secret',
      },
    },
  };
}
