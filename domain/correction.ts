/**
 * Does corrected label data belong to the shipment it is sent to? An operator fixing a rejected
 * label may change the courier, the product, the parcels or an address; what names the order
 * (its customer order number, its references, the shop) and the shop's sender stay. Data that
 * names another order was almost always meant for it: a label file pasted into the wrong
 * command. Plain values only: the shipment workflow's update validator runs this.
 */
import type { LabelRequestWithoutKey } from '../shipping-api/contract';
import type { OrderIdentity } from './shipment';

/** One thing the corrected data says that the shipment does not. */
export interface CorrectionMismatch {
  field: string;
  message: string;
}

/**
 * What in `corrected` names another order than `shipment`'s (whose current label request is
 * `current`). `claimed` is the order a whole import record names, when the data came as one.
 * Empty when the data belongs to the shipment.
 */
export function correctionMismatches(
  shipment: OrderIdentity,
  current: LabelRequestWithoutKey,
  corrected: LabelRequestWithoutKey,
  claimed?: Partial<OrderIdentity>,
): CorrectionMismatch[] {
  const out: CorrectionMismatch[] = [];
  const differs = (field: string, theirs: string | undefined, ours: string | undefined, what = 'the shipment has') => {
    if (theirs !== undefined && ours !== undefined && theirs !== ours) {
      out.push({ field, message: `is ${JSON.stringify(theirs)}, ${what} ${JSON.stringify(ours)}` });
    }
  };
  differs('shop', claimed?.shop, shipment.shop);
  differs('orderId', claimed?.orderId, shipment.orderId);
  differs('order.customerOrderNumber', corrected.order?.customerOrderNumber, current.order?.customerOrderNumber);
  const [theirs, ours] = [corrected.order?.orderNumbers, current.order?.orderNumbers];
  differs('order.orderNumbers.platformOrderNumber', theirs?.platformOrderNumber, ours?.platformOrderNumber);
  if (theirs?.referenceNumbers && ours?.referenceNumbers && !sameSet(theirs.referenceNumbers, ours.referenceNumbers)) {
    out.push({ field: 'order.orderNumbers.referenceNumbers', message: 'are not the shipment’s' });
  }
  out.push(...senderMismatches(current, corrected));
  return out;
}

/** The sender is the shop: its contact (named, not shown: personal data) and its country. */
function senderMismatches(current: LabelRequestWithoutKey, corrected: LabelRequestWithoutKey): CorrectionMismatch[] {
  const [theirs, ours] = [corrected.shipment.shipFrom, current.shipment.shipFrom];
  const out: CorrectionMismatch[] = [];
  const notTheShops = (field: string, a: string | undefined, b: string | undefined) => {
    if (a !== undefined && b !== undefined && normal(a) !== normal(b)) out.push({ field, message: 'is not the shop’s sender' });
  };
  notTheShops('shipment.shipFrom.contact.email', theirs?.contact?.email, ours?.contact?.email);
  notTheShops('shipment.shipFrom.contact (name)', fullName(theirs?.contact), fullName(ours?.contact));
  const [theirCountry, ourCountry] = [theirs?.address?.countryCode, ours?.address?.countryCode];
  if (theirCountry !== undefined && ourCountry !== undefined && theirCountry !== ourCountry) {
    out.push({ field: 'shipment.shipFrom.address.countryCode', message: `is ${theirCountry}, the shop’s sender is in ${ourCountry}` });
  }
  return out;
}

/** The refusal's text: each mismatch named, so the operator sees which file this was. */
export function describeMismatches(mismatches: CorrectionMismatch[]): string {
  return `the corrected data belongs to another order: ${mismatches.map((m) => `${m.field} ${m.message}`).join('; ')}`;
}

function fullName(contact: { firstName?: string; lastName?: string } | undefined): string | undefined {
  if (contact?.firstName === undefined && contact?.lastName === undefined) return undefined;
  return `${contact.firstName ?? ''} ${contact.lastName ?? ''}`;
}

function normal(text: string): string {
  return text.trim().replace(/\s+/g, ' ').toLowerCase();
}

function sameSet(a: string[], b: string[]): boolean {
  const set = new Set(a);
  return set.size === new Set(b).size && b.every((x) => set.has(x));
}
