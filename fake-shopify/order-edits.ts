/**
 * What a merchant does to an order in the Shopify admin, for the fake's programmatic face and
 * admin routes: edit the note, tags, email or shipping address, cancel, close (archive). Each
 * real change bumps updatedAt (never backwards) and is heard by the webhook emitter, as Shopify
 * fires orders/updated (and orders/cancelled) on them.
 */
import { z } from 'zod';
import { displayFulfillmentStatus } from './fo-state';
import { InvalidInputError, parseOrThrow } from './invalid';
import type { OrderRecord } from './model';
import { SeedAddress } from './seed';
import type { Store } from './store';

export const OrderEditSchema = z.strictObject({
  note: z.string().max(5000).nullable().optional(),
  /** Replaces the list; duplicates regardless of case are dropped, as tagsAdd does. */
  tags: z.array(z.string().min(1).max(255)).max(250).optional(),
  email: z.string().max(254).nullable().optional(),
  /** Merged into the current address: fields left out stay. */
  shippingAddress: SeedAddress.optional(),
});
export type OrderEdit = z.input<typeof OrderEditSchema>;

function uniqueTags(tags: string[]): string[] {
  const out: string[] = [];
  for (const tag of tags.map((t) => t.trim()).filter((t) => t !== ''))
    if (!out.some((t) => t.toLowerCase() === tag.toLowerCase())) out.push(tag);
  return out;
}

/** Applies an edit; only a real change bumps updatedAt (saving an unchanged order changes nothing). */
export function editOrder(store: Store, order: OrderRecord, raw: unknown): void {
  const edit = parseOrThrow(OrderEditSchema, 'order edit', raw);
  const before = JSON.stringify([order.note, order.tags, order.email, order.shippingAddress]);
  if (edit.note !== undefined) order.note = edit.note;
  if (edit.tags !== undefined) order.tags = uniqueTags(edit.tags);
  if (edit.email !== undefined) order.email = edit.email;
  if (edit.shippingAddress !== undefined) order.shippingAddress = { ...order.shippingAddress, ...edit.shippingAddress };
  // The FOs' destination follows the address, but whether Shopify bumps the FOs' updatedAt on an
  // address edit is unverified: the fake bumps the order's only.
  if (JSON.stringify([order.note, order.tags, order.email, order.shippingAddress]) !== before) store.touch(order);
}

/**
 * Cancels an order that nothing has been shipped from (Shopify refuses fulfilled and partly
 * fulfilled ones since 2018). Its unfinished FOs become CLOSED: Shopify's exact FO status after an
 * order cancel is unverified. The financial status stays (no refund is modelled).
 */
export function cancelOrder(store: Store, order: OrderRecord): void {
  const refuse = (message: string) => new InvalidInputError('cancel', [{ field: 'id', message }]);
  if (order.cancelledAt !== null) throw refuse('Order has already been cancelled.');
  if (['FULFILLED', 'PARTIALLY_FULFILLED'].includes(displayFulfillmentStatus(order)))
    throw refuse('Cannot cancel an order that has been fulfilled or partially fulfilled.');
  order.cancelledAt = store.stamp();
  const open = order.fulfillmentOrders.filter((fo) => fo.status !== 'CLOSED' && fo.status !== 'CANCELLED');
  for (const fo of open) fo.status = 'CLOSED';
  store.touch(order, open);
  order.cancelledAt = order.updatedAt;
  store.onChange?.(order, 'cancelled');
}

/** Closes (archives) an order: status:open stops matching it. Closing a closed order changes nothing. */
export function closeOrder(store: Store, order: OrderRecord): void {
  if (order.closed) return;
  order.closed = true;
  store.touch(order);
  order.closedAt = order.updatedAt;
}
