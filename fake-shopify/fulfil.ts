/**
 * fulfillmentCreate: checks the request the way Shopify does (one order, one location, a
 * fulfillable status, quantities within what remains) and answers a problem as a userError
 * with HTTP 200. No idempotency: the same call twice on an open FO makes two fulfillments.
 */
import { buildTracking, type TrackingInput } from './carriers';
import { isFulfillable, settle } from './fo-state';
import type { FoLineRecord, FulfillmentOrderRecord, FulfillmentRecord, OriginAddress } from './model';
import type { Store } from './store';

export interface UserError {
  field: string[] | null;
  message: string;
}

export interface FulfillmentInput {
  lineItemsByFulfillmentOrder: Array<{
    fulfillmentOrderId: string;
    fulfillmentOrderLineItems?: Array<{ id: string; quantity: number }> | null;
  }>;
  notifyCustomer?: boolean | null;
  originAddress?: Partial<OriginAddress> | null;
  trackingInfo?: TrackingInput | null;
}

type Picked = Array<{ fo: FulfillmentOrderRecord; line: FoLineRecord; quantity: number }>;

export type CreateResult = { fulfillment: FulfillmentRecord; userErrors: [] } | { fulfillment: null; userErrors: UserError[] };

const QUANTITY_ERROR = 'Invalid fulfillment order line item quantity requested.';

function fail(field: string[], message: string): CreateResult {
  return { fulfillment: null, userErrors: [{ field, message }] };
}

export function fulfillmentCreate(store: Store, input: FulfillmentInput): CreateResult {
  const groups = input.lineItemsByFulfillmentOrder;
  if (groups.length === 0)
    return fail(['fulfillment', 'lineItemsByFulfillmentOrder'], 'Line items by fulfillment order must not be empty.');
  const fos: FulfillmentOrderRecord[] = [];
  for (const [i, group] of groups.entries()) {
    const fo = store.fulfillmentOrder(group.fulfillmentOrderId);
    const field = ['fulfillment', 'lineItemsByFulfillmentOrder', String(i), 'fulfillmentOrderId'];
    if (!fo) return fail(field, `Fulfillment order ${group.fulfillmentOrderId} does not exist.`);
    if (fos.includes(fo)) return fail(field, `Fulfillment order ${fo.id} is listed more than once.`);
    fos.push(fo);
  }
  if (new Set(fos.map((fo) => fo.orderId)).size > 1) return fail(['fulfillment'], 'All fulfillment orders must belong to the same order.');
  if (new Set(fos.map((fo) => fo.locationId)).size > 1) {
    return fail(['fulfillment'], 'All fulfillment orders must be assigned to the same location.');
  }
  const blocked = fos.find((fo) => !isFulfillable(fo));
  if (blocked)
    return fail(['fulfillment'], `Fulfillment order ${blocked.id} has an unfulfillable status= ${blocked.status.toLowerCase()}.`);
  const picked = pick(groups, fos);
  if (typeof picked === 'string') return fail(['fulfillment'], picked);
  return { fulfillment: apply(store, input, fos, picked), userErrors: [] };
}

/** The lines and quantities to fulfil, or the userError message. */
function pick(groups: FulfillmentInput['lineItemsByFulfillmentOrder'], fos: FulfillmentOrderRecord[]): Picked | string {
  const picked: Picked = [];
  for (const [i, group] of groups.entries()) {
    const fo = fos[i]!;
    if (group.fulfillmentOrderLineItems == null) {
      for (const line of fo.lines) if (line.remainingQuantity > 0) picked.push({ fo, line, quantity: line.remainingQuantity });
      continue;
    }
    for (const { id, quantity } of group.fulfillmentOrderLineItems) {
      const line = fo.lines.find((l) => l.id === id);
      if (!line) return `Fulfillment order line item ${id} does not belong to fulfillment order ${fo.id}.`;
      const already = picked.filter((p) => p.line === line).reduce((sum, p) => sum + p.quantity, 0);
      if (quantity <= 0 || already + quantity > line.remainingQuantity) return QUANTITY_ERROR;
      picked.push({ fo, line, quantity });
    }
  }
  return picked.length === 0 ? QUANTITY_ERROR : picked;
}

function apply(store: Store, input: FulfillmentInput, fos: FulfillmentOrderRecord[], picked: Picked): FulfillmentRecord {
  const order = store.order(fos[0]!.orderId)!;
  for (const p of picked) p.line.remainingQuantity -= p.quantity;
  fos.forEach(settle);
  store.touch(order, fos);
  const { id, legacy } = store.newId('Fulfillment');
  const fulfillment: FulfillmentRecord = {
    id,
    legacyResourceId: legacy,
    name: `${order.name}-F${order.fulfillments.length + 1}`,
    orderId: order.id,
    locationId: fos[0]!.locationId,
    status: 'SUCCESS',
    displayStatus: 'FULFILLED',
    createdAt: order.updatedAt,
    updatedAt: order.updatedAt,
    deliveredAt: null,
    estimatedDeliveryAt: null,
    inTransitAt: null,
    notifyCustomer: input.notifyCustomer ?? false,
    originAddress: origin(input.originAddress),
    tracking: buildTracking(input.trackingInfo),
    events: [],
    lines: picked.map((p) => ({ foLineId: p.line.id, quantity: p.quantity })),
  };
  store.addFulfillment(order, fulfillment);
  return fulfillment;
}

function origin(a: Partial<OriginAddress> | null | undefined): OriginAddress | null {
  if (!a) return null;
  const { address1 = null, address2 = null, city = null, countryCode = '', provinceCode = null, zip = null } = a;
  return { address1, address2, city, countryCode, provinceCode, zip };
}
