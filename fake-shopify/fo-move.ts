/**
 * fulfillmentOrderMove: the merchant (or an app) reassigns a fulfillment order's unfulfilled
 * lines to another location, as Shopify's Admin API documents it:
 * - all of its lines, none of them fulfilled: the fulfillment order itself gets the new
 *   `assignedLocation` (moved and original are the same fulfillment order);
 * - some of its lines (`fulfillmentOrderLineItems`, each with a quantity), or an order some of
 *   whose lines are fulfilled: a new fulfillment order at the new location holds the moved
 *   lines, the original keeps the rest (and closes when nothing is left to fulfil in it);
 * - fulfilled lines never move; a closed fulfillment order cannot be moved.
 * The payload: movedFulfillmentOrder, originalFulfillmentOrder, remainingFulfillmentOrder
 * (deprecated: null here), userErrors. The order's updatedAt moves (orders/updated fires).
 * The userErrors' wording is the fake's own: the documentation lists the failures, not their text.
 */
import { LOCATIONS } from './defaults';
import { settle } from './fo-state';
import type { UserError } from './fulfil';
import type { FoLineRecord, FulfillmentOrderRecord } from './model';
import type { Store } from './store';

export interface MoveLineInput {
  id: string;
  quantity: number;
}

export interface MoveResult {
  movedFulfillmentOrder: FulfillmentOrderRecord | null;
  originalFulfillmentOrder: FulfillmentOrderRecord | null;
  remainingFulfillmentOrder: null;
  userErrors: UserError[];
}

const failed = (field: string[], message: string): MoveResult => ({
  movedFulfillmentOrder: null,
  originalFulfillmentOrder: null,
  remainingFulfillmentOrder: null,
  userErrors: [{ field, message }],
});

export function fulfillmentOrderMove(store: Store, id: string, newLocationId: string, lineItems?: MoveLineInput[] | null): MoveResult {
  const fo = store.fulfillmentOrder(id);
  if (!fo) return failed(['id'], 'Fulfillment order does not exist.');
  if (fo.status === 'CLOSED' || fo.status === 'CANCELLED')
    return failed(['id'], `Fulfillment order ${id} is ${fo.status.toLowerCase()} and cannot be moved.`);
  if (!LOCATIONS.some((l) => l.id === newLocationId)) return failed(['newLocationId'], 'Location does not exist.');
  // What moves: the lines named, or every unfulfilled one.
  const moving = new Map<string, number>();
  if (lineItems && lineItems.length > 0) {
    for (const item of lineItems) {
      const line = fo.lines.find((l) => l.id === item.id);
      const already = moving.get(item.id) ?? 0;
      if (!line || !Number.isInteger(item.quantity) || item.quantity < 1 || already + item.quantity > line.remainingQuantity)
        return failed(['fulfillmentOrderLineItems'], 'Invalid fulfillment order line item quantity requested.');
      moving.set(item.id, already + item.quantity);
    }
  } else {
    for (const l of fo.lines) if (l.remainingQuantity > 0) moving.set(l.id, l.remainingQuantity);
  }
  if (moving.size === 0) return failed(['id'], `Fulfillment order ${id} has no line left to move.`);
  const order = store.order(fo.orderId)!;
  const nothingFulfilled = fo.lines.every((l) => l.remainingQuantity === l.totalQuantity);
  const everything = fo.lines.every((l) => (moving.get(l.id) ?? 0) === l.remainingQuantity);
  if (nothingFulfilled && everything) {
    fo.locationId = newLocationId;
    store.touch(order, [fo]);
    return { movedFulfillmentOrder: fo, originalFulfillmentOrder: fo, remainingFulfillmentOrder: null, userErrors: [] };
  }
  const movedLines: FoLineRecord[] = [];
  for (const line of fo.lines) {
    const quantity = moving.get(line.id) ?? 0;
    if (quantity === 0) continue;
    line.totalQuantity -= quantity;
    line.remainingQuantity -= quantity;
    movedLines.push({
      id: store.newId('FulfillmentOrderLineItem').id,
      lineItem: line.lineItem,
      totalQuantity: quantity,
      remainingQuantity: quantity,
    });
  }
  fo.lines = fo.lines.filter((l) => l.totalQuantity > 0);
  // Nothing left to fulfil in the original: closed (its fulfilled lines stay with it).
  if (fo.lines.every((l) => l.remainingQuantity === 0)) fo.status = 'CLOSED';
  else settle(fo);
  const moved: FulfillmentOrderRecord = {
    id: store.newId('FulfillmentOrder').id,
    orderId: fo.orderId,
    status: fo.status === 'ON_HOLD' || fo.status === 'SCHEDULED' ? fo.status : 'OPEN',
    locationId: newLocationId,
    deliveryMethod: fo.deliveryMethod,
    lines: movedLines,
    createdAt: store.stamp(),
    updatedAt: store.stamp(),
  };
  store.addFulfillmentOrder(order, moved);
  store.touch(order, [fo, moved]);
  return { movedFulfillmentOrder: moved, originalFulfillmentOrder: fo, remainingFulfillmentOrder: null, userErrors: [] };
}
