/** What a run left on the fake platforms that should be there once: the bench's duplicate count. */
import type { FakeShopify } from '../fake-shopify';
import type { FakeWooCommerce } from '../fake-woocommerce';

export interface DuplicateCounts {
  /** Shopify: fulfillments beyond one per order. */
  duplicateFulfillments: number;
  /** Shopify: fulfillment events with a status and time already on the fulfillment. */
  duplicateEvents: number;
  /** Shopify: events written after the fulfillment's DELIVERED one with another status. */
  eventsAfterDelivered: number;
  /** WooCommerce: tracking items beyond one per tracking number. */
  duplicateTrackingItems: number;
  /** WooCommerce: notes with a text already on the order (status-change notes excepted). */
  duplicateNotes: number;
  /** WooCommerce: "completed" e-mails beyond one per order. */
  duplicateCompletedEmails: number;
}

export function countDuplicates(
  shopify: FakeShopify,
  woo: FakeWooCommerce,
  orders: Array<{ shop: string; platformOrderId: string }>,
): DuplicateCounts {
  const counts: DuplicateCounts = {
    duplicateFulfillments: 0,
    duplicateEvents: 0,
    eventsAfterDelivered: 0,
    duplicateTrackingItems: 0,
    duplicateNotes: 0,
    duplicateCompletedEmails: 0,
  };
  for (const { shop, platformOrderId } of orders) {
    if (shop === 'shopify-shop') {
      const view = shopify.order(platformOrderId);
      if (!view) continue;
      counts.duplicateFulfillments += Math.max(0, view.fulfillments.filter((f) => f.status !== 'CANCELLED').length - 1);
      for (const f of view.fulfillments) {
        counts.duplicateEvents += repeats(f.events.map((e) => `${e.status}@${e.happenedAt}`));
        const delivered = f.events.findIndex((e) => e.status === 'DELIVERED');
        if (delivered >= 0) counts.eventsAfterDelivered += f.events.slice(delivered + 1).filter((e) => e.status !== 'DELIVERED').length;
      }
    } else {
      const view = woo.order(Number(platformOrderId));
      if (!view) continue;
      counts.duplicateTrackingItems += repeats(view.trackingItems.map((t) => t.tracking_number));
      counts.duplicateNotes += repeats(view.notes.map((n) => n.note).filter((n) => !n.startsWith('Order status changed')));
      counts.duplicateCompletedEmails += Math.max(0, view.emailsSent.filter((e) => e.template === 'customer_completed_order').length - 1);
    }
  }
  return counts;
}

function repeats(keys: string[]): number {
  return keys.length - new Set(keys).size;
}
