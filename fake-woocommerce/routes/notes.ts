/**
 * /wc/v3/orders/{id}/notes: list (newest first, `type` any|customer|internal), one note,
 * create (201 with Location), and delete (only with force=true: notes cannot be trashed). No dedupe: the same note twice is two notes, two emails if they
 * are customer notes. The error codes differ per route, as in WooCommerce's controllers.
 */
import { addNote } from '../order-actions';
import { noteJson } from '../order-json';
import { ParamCheck } from '../params';
import { missingParams, ok, wpError, type Reply } from '../replies';
import type { StoredNote, StoredOrder } from '../store';
import type { RouteContext } from './context';

const invalidOrder = (code: string): Reply => wpError(404, code, 'Invalid order ID.');

export function listNotes(ctx: RouteContext): Reply {
  const p = new ParamCheck(ctx.params);
  const type = p.oneOf('type', ['any', 'customer', 'internal'] as const) ?? 'any';
  const bad = p.answer() ?? ctx.permit();
  if (bad) return bad;
  const { state } = ctx;
  const order = state.store.orders.get(ctx.match.id!);
  if (!order) return invalidOrder('woocommerce_rest_shop_order_invalid_id');
  const notes = order.notes
    .filter((n) => type === 'any' || n.customerNote === (type === 'customer'))
    .sort((a, b) => b.at - a.at || b.id - a.id);
  return ok(notes.map((n) => noteJson(order, n, state.json())));
}

/** The route's order and note, or the answer WooCommerce gives when either is not there (or the caller may not). */
function orderNote(ctx: RouteContext): { order: StoredOrder; note: StoredNote } | Reply {
  const order = ctx.state.store.orders.get(ctx.match.id!);
  const refused = order ? ctx.permit() : null;
  if (refused) return refused;
  if (!order) return invalidOrder('woocommerce_rest_order_invalid_id');
  const note = order.notes.find((n) => n.id === Number(ctx.match.itemId));
  return note ? { order, note } : wpError(404, 'woocommerce_rest_invalid_id', 'Invalid resource ID.');
}

export function getNote(ctx: RouteContext): Reply {
  const found = orderNote(ctx);
  return 'order' in found ? ok(noteJson(found.order, found.note, ctx.state.json())) : found;
}

export function postNote(ctx: RouteContext): Reply {
  const p = new ParamCheck(ctx.params);
  if (!p.has('note')) return missingParams(['note']);
  const text = p.string('note');
  const customerNote = p.boolean('customer_note') ?? false;
  const byUser = p.boolean('added_by_user') ?? false;
  const bad = p.answer() ?? ctx.permit();
  if (bad) return bad;
  const { state } = ctx;
  const order = state.store.orders.get(ctx.match.id!);
  if (!order) return invalidOrder('woocommerce_rest_order_invalid_id');
  const note = addNote(state.actions(), order, text!, customerNote, byUser);
  state.traffic.writeApplied('POST notes');
  const location = `${state.json().apiRoot}/wc/v3/orders/${order.id}/notes/${note.id}`;
  return ok(noteJson(order, note, state.json()), 201, { location });
}

export function removeNote(ctx: RouteContext): Reply {
  const force = new ParamCheck(ctx.params).boolean('force') ?? false;
  const found = orderNote(ctx);
  if (!('order' in found)) return found;
  if (!force)
    return wpError(501, 'woocommerce_rest_trash_not_supported', "The resource does not support trashing. Set 'force=true' to delete.");
  const { order, note } = found;
  const answer = noteJson(order, note, ctx.state.json());
  order.notes = order.notes.filter((n) => n !== note);
  ctx.state.traffic.writeApplied('DELETE note');
  return ok(answer);
}
