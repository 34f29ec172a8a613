/**
 * One platform order, one id. Shopify names an order `gid://shopify/Order/5504` in GraphQL and
 * `5504` as its legacy id; both reach us (a file, a pull, a webhook), and the pulls read the legacy
 * form, so that is the one kept. WooCommerce's ids are digits already. Plain functions: the
 * workflow bundle imports them.
 */
const SHOPIFY_ORDER_GID = 'gid://shopify/Order/';

export function canonicalPlatformOrderId(id: string): string {
  return isShopifyOrderGid(id) ? id.slice(SHOPIFY_ORDER_GID.length) : id;
}

/** Whether an id is in Shopify's GraphQL form (which a WooCommerce order never has). */
export function isShopifyOrderGid(id: string): boolean {
  return id.startsWith(SHOPIFY_ORDER_GID);
}
