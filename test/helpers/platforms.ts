/** A SHOP_CONNECTORS entry for the local fake Shopify (its dev token); `more`: the test's own fields (import, timeout, …). */
export function fakeShopifyEntry(adminUrl: string, more: Record<string, unknown> = {}) {
  return {
    type: 'shopify',
    storeDomain: 'fake-store.myshopify.com',
    adminUrl,
    accessToken: 'shpat_fake_dev_token',
    timeout: '2s',
    ...more,
  };
}

/** A SHOP_CONNECTORS entry for the local fake WooCommerce (its dev keys); `more`: the test's own fields. */
export function fakeWooEntry(url: string, more: Record<string, unknown> = {}) {
  return { type: 'woocommerce', url, consumerKey: 'ck_fake_dev_key', consumerSecret: 'cs_fake_dev_secret', timeout: '2s', ...more };
}

/** Where the WooCommerce tests' orders ship from (their stores name no warehouse). */
export const PORTO_SHIP_FROM = {
  address: { streetLines: ['Rua das Flores 10'], city: 'Porto', postalCode: '4050-262', countryCode: 'PT' },
};

/** The connector entries tests use for the local Shopify and WooCommerce fakes (their dev credentials). */
export function platformConnectors(shopifyUrl: string, wooUrl: string, extra: Record<string, unknown> = {}) {
  return { maxBackoff: '1s', 'shopify-shop': fakeShopifyEntry(shopifyUrl), 'woo-shop': fakeWooEntry(wooUrl), ...extra };
}

/**
 * Fulfils every fulfillment order of a fake-shopify order as the admin or another app would (no
 * tracking, no shipment of ours): Shopify's `fulfillmentCreate` over HTTP with the fake's dev
 * token, one fulfillment per fulfillment order (one fulfillment ships from one location).
 */
export async function fulfilShopifyOrder(baseUrl: string, order: { fulfillmentOrders: Array<{ id: string }> }): Promise<void> {
  for (const fo of order.fulfillmentOrders) {
    const res = await fetch(`${baseUrl}/admin/api/2026-10/graphql.json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-shopify-access-token': 'shpat_fake_dev_token' },
      body: JSON.stringify({
        query: 'mutation F($f: FulfillmentInput!) { fulfillmentCreate(fulfillment: $f) { userErrors { message } } }',
        variables: { f: { lineItemsByFulfillmentOrder: [{ fulfillmentOrderId: fo.id }] } },
      }),
    });
    const body = (await res.json()) as { data?: { fulfillmentCreate?: { userErrors: Array<{ message: string }> } } };
    const errors = body.data?.fulfillmentCreate?.userErrors;
    if (!errors || errors.length > 0) throw new Error(`fulfillmentCreate: ${JSON.stringify(body)}`);
  }
}
