/**
 * Which store changes fire which webhooks. A created order fires orders/create, orders/paid when
 * it is paid, and fulfillment_orders/order_routing_complete per FO. A change fires orders/updated
 * (a cancel orders/cancelled first, a refund refunds/create, a hold or release
 * fulfillment_orders/placed_on_hold or hold_released per FO it moved), as Shopify does for edits,
 * fulfillments, tracking, events, tags and notes. Changes are gathered until the current task ends, so the body shows the
 * finished change (fulfillmentCreate bumps updatedAt before it adds the fulfillment) and the
 * mutations of one request make one event per order: whether Shopify coalesces so is unverified.
 */
import { isFulfillable } from './fo-state';
import type { FulfillmentOrderRecord, OrderRecord } from './model';
import type { OrderChange, Store } from './store';
import { holdPayload, orderPayload, refundPayload, routingPayload } from './webhook-payload';
import type { WebhookEmitter } from './webhooks';

/** A hold's or release's topic, sent for each FO in the state it moved to. */
const HOLD_TOPICS = [
  ['placed_on_hold', 'fulfillment_orders/placed_on_hold', (fo: FulfillmentOrderRecord) => fo.status === 'ON_HOLD'],
  ['hold_released', 'fulfillment_orders/hold_released', isFulfillable],
] as const;

export function fireWebhooksOnChanges(store: Store, emitter: WebhookEmitter): void {
  const changed = new Map<OrderRecord, Set<OrderChange>>();
  const flush = () => {
    const batch = [...changed];
    changed.clear();
    for (const [order, changes] of batch) {
      if (changes.has('cancelled')) emitter.trigger('orders/cancelled', () => orderPayload(order));
      if (changes.has('refunded')) emitter.trigger('refunds/create', () => refundPayload(order));
      for (const [change, topic, now] of HOLD_TOPICS) {
        if (changes.has(change)) for (const fo of order.fulfillmentOrders.filter(now)) emitter.trigger(topic, () => holdPayload(fo));
      }
      emitter.trigger('orders/updated', () => orderPayload(order));
    }
  };
  store.onChange = (order, change) => {
    if (!emitter.listening()) return;
    if (change === 'created') return created(emitter, order);
    if (changed.size === 0) queueMicrotask(flush);
    const changes = changed.get(order) ?? new Set<OrderChange>();
    changes.add(change);
    changed.set(order, changes);
  };
}

function created(emitter: WebhookEmitter, order: OrderRecord): void {
  emitter.trigger('orders/create', () => orderPayload(order));
  if (order.financialStatus === 'PAID') emitter.trigger('orders/paid', () => orderPayload(order));
  for (const fo of order.fulfillmentOrders) emitter.trigger('fulfillment_orders/order_routing_complete', () => routingPayload(fo));
}
