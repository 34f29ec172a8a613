/**
 * Order changes with WooCommerce's side effects: a status change records its history, writes
 * the "Order status changed from … to …." note and sends the customer email that transition
 * triggers (the completed email shows the tracking items of that moment, when the Shipment
 * Tracking extension is installed to render them); a customer note emails the customer.
 * A note is a comment, not an order field: WC_Order::add_order_note inserts a comment and does
 * not save the order, so adding one leaves date_modified alone and fires no order.updated.
 * The caller saves the order (store.save) once its changes are made, as WooCommerce does.
 */
import { STATUS_LABELS, type WooStatus } from './defaults';
import { InvalidWooInputError } from './inputs';
import type { StoredNote, StoredOrder, WooStore } from './store';
import { trackingView } from './tracking';
import type { FakeWooEmailTemplate } from './types';

export interface ActionContext {
  store: WooStore;
  /** Display name of the API key's user (author of manual notes). */
  apiUserName: string;
  shipmentTracking: boolean;
}

/** The customer email each transition sends (WC_Email_* triggers), by `from>to`, `*` any from. */
function customerEmailFor(from: WooStatus, to: WooStatus): FakeWooEmailTemplate | null {
  if (to === 'completed') return 'customer_completed_order';
  if (to === 'refunded') return 'customer_refunded_order';
  if (to === 'on-hold' && ['pending', 'failed', 'cancelled'].includes(from)) return 'customer_on_hold_order';
  if (to === 'processing' && ['pending', 'failed', 'cancelled', 'on-hold'].includes(from)) return 'customer_processing_order';
  return null;
}

export function addNote(ctx: ActionContext, order: StoredOrder, text: string, customerNote: boolean, byUser: boolean): StoredNote {
  const note: StoredNote = {
    id: ctx.store.noteId(),
    note: text,
    customerNote,
    author: byUser ? ctx.apiUserName : 'system',
    at: ctx.store.nowSec(),
  };
  order.notes.push(note);
  if (customerNote) order.emails.push({ template: 'customer_note', at: note.at, to: order.billing.email ?? '', note: text });
  return note;
}

/** Sets the status, unsaved; false when it already had it (then nothing happens, as in WooCommerce). */
export function setStatus(ctx: ActionContext, order: StoredOrder, to: WooStatus): boolean {
  const from = order.status;
  if (from === to) return false;
  const at = ctx.store.nowSec();
  order.status = to;
  order.statusHistory.push({ from, to, at });
  if (to === 'completed') order.completedAt = at;
  if ((to === 'processing' || to === 'completed') && order.paidAt === null) order.paidAt = at;
  // REST updates are manual (set_status(…, true)), so the note carries the API user's name.
  addNote(ctx, order, `Order status changed from ${STATUS_LABELS[from]} to ${STATUS_LABELS[to]}.`, false, true);
  const template = customerEmailFor(from, to);
  if (template !== null) {
    const email = { template, at, to: order.billing.email ?? '' };
    const withTracking = template === 'customer_completed_order';
    order.emails.push(
      withTracking ? { ...email, trackingItems: ctx.shipmentTracking ? order.tracking.map((t) => trackingView(order, t)) : [] } : email,
    );
  }
  return true;
}

/** What an edit in the admin (or another plugin) may change; see editOrder. */
export interface OrderEdit {
  customerNote?: string;
  shipping?: Partial<Record<string, string>>;
  status?: WooStatus;
  lineItems?: Array<{ id: number; quantity: number }>;
}

/**
 * An edit saved outside the REST API (the merchant in the admin, another plugin): one save, so
 * date_modified moves (per the store's modifiedOnSave) and order.updated fires once.
 */
export function editOrder(ctx: ActionContext, order: StoredOrder, edit: OrderEdit): void {
  let postFields = false;
  if (edit.customerNote !== undefined && edit.customerNote !== order.customerNote) {
    order.customerNote = edit.customerNote;
    postFields = true;
  }
  for (const [field, value] of Object.entries(edit.shipping ?? {})) if (value !== undefined) order.shipping[field] = value;
  const unknown = (edit.lineItems ?? []).find(({ id }) => !order.lineItems.some((l) => l.id === id));
  if (unknown)
    throw new InvalidWooInputError('order edit', [{ field: 'lineItems', message: `no line item ${unknown.id} in order ${order.id}` }]);
  for (const { id, quantity } of edit.lineItems ?? []) order.lineItems.find((l) => l.id === id)!.quantity = quantity;
  order.lineItems = order.lineItems.filter((l) => l.quantity > 0);
  if (edit.status !== undefined) postFields = setStatus(ctx, order, edit.status) || postFields;
  ctx.store.save(order, postFields);
}
