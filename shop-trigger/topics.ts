/**
 * The platform webhook topics that should reach this endpoint: a new order, and a merchant's
 * change to one (cancel, refund, hold, release, edit), so the shop's pull reads it at once and its
 * shipment hears of it (docs/shop-import.md, "When the merchant changes an order").
 */
export const PULL_TOPICS = {
  shopify: [
    'orders/create',
    'orders/updated',
    'orders/cancelled',
    'refunds/create',
    'fulfillment_orders/placed_on_hold',
    'fulfillment_orders/hold_released',
  ],
  woocommerce: ['order.created', 'order.updated'],
} as const;
