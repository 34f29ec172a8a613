/** The connector entries tests use for the local Shopify and WooCommerce fakes (their dev credentials). */
export function platformConnectors(shopifyUrl: string, wooUrl: string, extra: Record<string, unknown> = {}) {
  return {
    maxBackoff: '1s',
    'shopify-shop': {
      type: 'shopify',
      storeDomain: 'fake-store.myshopify.com',
      adminUrl: shopifyUrl,
      accessToken: 'shpat_fake_dev_token',
      timeout: '2s',
    },
    'woo-shop': { type: 'woocommerce', url: wooUrl, consumerKey: 'ck_fake_dev_key', consumerSecret: 'cs_fake_dev_secret', timeout: '2s' },
    ...extra,
  };
}
