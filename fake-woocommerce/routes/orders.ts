/**
 * GET and PUT /wc/v3/orders/{id}. A read under HPOS bumps date_modified (WooCommerce issue
 * #41226); an update applies the simple fields, then the status with its note and email, and
 * saves once: date_modified moves (see ModifiedOnSave) and order.updated fires. Missing order:
 * 404 on read but 400 on update, as WooCommerce answers.
 */
import { ORDER_STATUSES } from '../defaults';
import { setStatus } from '../order-actions';
import { orderJson } from '../order-json';
import { ParamCheck } from '../params';
import { ok, wpError, type Reply } from '../replies';
import type { RouteContext } from './context';

const invalidId = (status: number): Reply => wpError(status, 'woocommerce_rest_shop_order_invalid_id', 'Invalid ID.');

export function getOrder(ctx: RouteContext): Reply {
  const { state } = ctx;
  const order = state.store.orders.get(ctx.match.id!);
  if (!order) return invalidId(404);
  const refused = ctx.permit();
  if (refused) return refused;
  // The quirk is on viewing one order; it is not known to fire order.updated, so it does not here.
  if (state.hpos) state.store.touch(order);
  return ok(orderJson(order, state.json()));
}

export function putOrder(ctx: RouteContext): Reply {
  const p = new ParamCheck(ctx.params);
  const status = p.oneOf('status', ORDER_STATUSES);
  const customerNote = p.string('customer_note');
  const billing = p.stringFields('billing');
  const shipping = p.stringFields('shipping');
  const meta = metaUpdates(p, ctx.params.meta_data);
  const bad = p.answer();
  if (bad) return bad;
  const { state } = ctx;
  const order = state.store.orders.get(ctx.match.id!);
  if (!order) return invalidId(400);
  const refused = ctx.permit();
  if (refused) return refused;

  // The customer note is the posts table's post_excerpt: a "post field" for ModifiedOnSave.
  let postFields = customerNote !== undefined && customerNote !== order.customerNote;
  if (customerNote !== undefined) order.customerNote = customerNote;
  if (billing) Object.assign(order.billing, billing);
  if (shipping) Object.assign(order.shipping, shipping);
  for (const { key, value } of meta ?? []) {
    const existing = order.meta.find((m) => m.key === key);
    if (existing) existing.value = value;
    else order.meta.push({ id: state.store.metaId(), key, value });
  }
  if (status !== undefined) postFields = setStatus(state.actions(), order, status) || postFields;
  // Saved even when nothing changed: under HPOS that still stamps date_modified.
  state.store.save(order, postFields);
  state.traffic.writeApplied('PUT order');
  return ok(orderJson(order, state.json()));
}

/** meta_data: an array of `{key, value}` objects (an `id` is accepted and ignored). */
function metaUpdates(p: ParamCheck, raw: unknown): Array<{ key: string; value: unknown }> | undefined {
  if (raw === undefined) return undefined;
  if (!Array.isArray(raw)) return p.fail('meta_data', 'rest_invalid_type', 'meta_data is not of type array.');
  const items = raw as unknown[];
  const bad = items.findIndex((m) => m === null || typeof m !== 'object' || typeof (m as { key?: unknown }).key !== 'string');
  if (bad >= 0) return p.fail('meta_data', 'rest_invalid_type', `meta_data[${bad}] is not of type object.`);
  return items.map((m) => ({ key: (m as { key: string }).key, value: (m as { value?: unknown }).value ?? '' }));
}
