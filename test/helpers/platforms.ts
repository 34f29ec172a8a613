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
