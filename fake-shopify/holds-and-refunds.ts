/**
 * Two more things a merchant does to an order in the Shopify admin after it was placed: hold
 * its fulfillment orders (fulfillmentOrderHold) and release them (fulfillmentOrderReleaseHold),
 * and refund items not shipped yet (refundCreate with restock "cancel"). Each bumps the order's
 * updatedAt and fires its webhooks: fulfillment_orders/placed_on_hold and
 * fulfillment_orders/hold_released per FO, refunds/create, and orders/updated.
 * Whether Shopify bumps the order's own updatedAt on a hold is unverified: the fake does, and the
 * pull is woken by the FO topics anyway.
 */
import { z } from 'zod';
import { isFulfillable, settle } from './fo-state';
import { InvalidInputError, parseOrThrow } from './invalid';
import type { FulfillmentOrderRecord, OrderRecord } from './model';
import type { Store } from './store';

export const HoldSchema = z.strictObject({
  /** One FO by global id; default every FO of the order that can be fulfilled. */
  fulfillmentOrderId: z.string().max(100).optional(),
  /** FulfillmentHoldReason; only shown. */
  reason: z.enum(['AWAITING_PAYMENT', 'HIGH_RISK_OF_FRAUD', 'INCORRECT_ADDRESS', 'INVENTORY_OUT_OF_STOCK', 'OTHER']).optional(),
});
export type HoldRequest = z.input<typeof HoldSchema>;

export const RefundSchema = z.strictObject({
  /** Items to refund (not yet shipped) by SKU; default every item not shipped yet. */
  lines: z
    .array(z.strictObject({ sku: z.string().min(1).max(255), quantity: z.number().int().min(1).max(10_000) }))
    .min(1)
    .max(250)
    .optional(),
});
export type RefundRequest = z.input<typeof RefundSchema>;

const refuse = (action: string, message: string) => new InvalidInputError(action, [{ field: 'id', message }]);

function chosen(order: OrderRecord, id: string | undefined, wanted: (fo: FulfillmentOrderRecord) => boolean): FulfillmentOrderRecord[] {
  const fos = order.fulfillmentOrders.filter((fo) => (id === undefined || fo.id === id) && wanted(fo));
  if (id !== undefined && fos.length === 0 && !order.fulfillmentOrders.some((fo) => fo.id === id))
    throw new InvalidInputError('hold', [{ field: 'fulfillmentOrderId', message: `no fulfillment order ${id} in ${order.name}` }]);
  return fos;
}

/** OPEN or IN_PROGRESS FOs → ON_HOLD (Shopify refuses a hold on a closed FO). */
export function holdOrder(store: Store, order: OrderRecord, raw: unknown): void {
  const request = parseOrThrow(HoldSchema, 'hold', raw ?? {});
  const fos = chosen(order, request.fulfillmentOrderId, isFulfillable);
  if (fos.length === 0) throw refuse('hold', `${order.name} has no open fulfillment order to hold`);
  for (const fo of fos) fo.status = 'ON_HOLD';
  store.touch(order, fos);
  store.onChange?.(order, 'placed_on_hold');
}

/** ON_HOLD FOs → OPEN, or IN_PROGRESS when part of them was fulfilled before the hold. */
export function releaseHold(store: Store, order: OrderRecord, raw: unknown): void {
  const request = parseOrThrow(HoldSchema, 'release', raw ?? {});
  const fos = chosen(order, request.fulfillmentOrderId, (fo) => fo.status === 'ON_HOLD');
  if (fos.length === 0) throw refuse('release', `${order.name} has no fulfillment order on hold`);
  for (const fo of fos) {
    fo.status = 'OPEN';
    settle(fo);
  }
  store.touch(order, fos);
  store.onChange?.(order, 'hold_released');
}

/**
 * Refunds items not shipped yet: they leave their fulfillment orders (an FO with nothing left
 * closes) and the order becomes REFUNDED when nothing at all is left to ship or shipped, else
 * PARTIALLY_REFUNDED. Refunding shipped items (a return) is not modelled.
 */
export function refundOrder(store: Store, order: OrderRecord, raw: unknown): void {
  const request = parseOrThrow(RefundSchema, 'refund', raw ?? {});
  const open = order.fulfillmentOrders.filter((fo) => fo.status !== 'CLOSED' && fo.status !== 'CANCELLED');
  const wanted = request.lines ?? unshippedBySku(open);
  const touched = new Set<FulfillmentOrderRecord>();
  for (const { sku, quantity } of wanted) {
    let left = quantity;
    for (const fo of open) {
      for (const line of fo.lines.filter((l) => l.lineItem.sku === sku && l.remainingQuantity > 0)) {
        const take = Math.min(left, line.remainingQuantity);
        line.remainingQuantity -= take;
        line.totalQuantity -= take;
        left -= take;
        if (take > 0) touched.add(fo);
      }
    }
    if (left > 0) throw refuse('refund', `${order.name} has not ${quantity} unshipped of ${sku} to refund`);
  }
  if (touched.size === 0) throw refuse('refund', `${order.name} has nothing unshipped to refund`);
  for (const fo of touched) if (fo.lines.every((l) => l.remainingQuantity === 0)) fo.status = 'CLOSED';
  const anyLeft = order.fulfillmentOrders.some((fo) => fo.status !== 'CANCELLED' && fo.lines.some((l) => l.totalQuantity > 0));
  order.financialStatus = anyLeft ? 'PARTIALLY_REFUNDED' : 'REFUNDED';
  store.touch(order, [...touched]);
  store.onChange?.(order, 'refunded');
}

function unshippedBySku(fos: FulfillmentOrderRecord[]): Array<{ sku: string; quantity: number }> {
  const bySku = new Map<string, number>();
  for (const line of fos.flatMap((fo) => fo.lines))
    bySku.set(line.lineItem.sku, (bySku.get(line.lineItem.sku) ?? 0) + line.remainingQuantity);
  return [...bySku].filter(([, quantity]) => quantity > 0).map(([sku, quantity]) => ({ sku, quantity }));
}
