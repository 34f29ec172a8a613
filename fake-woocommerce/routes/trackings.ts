/**
 * The Shipment Tracking extension's routes under /wc-shipment-tracking/v3, answered as its
 * REST controller does: create is 201 with Location and never deduplicates; an unknown
 * provider is stored and answered with an empty tracking_provider and tracking_link (no error);
 * delete answers the deleted item. Its error codes are its own, not wc/v3's.
 */
import { ParamCheck } from '../params';
import { PROVIDERS } from '../providers';
import { missingParams, ok, wpError, type Reply } from '../replies';
import type { StoredOrder } from '../store';
import { addTracking, deleteTracking, trackingJson } from '../tracking';
import type { RouteContext } from './context';

const invalidOrder = (): Reply => wpError(404, 'woocommerce_rest_order_invalid_id', 'Invalid order ID.');
const invalidTracking = (): Reply => wpError(404, 'woocommerce_rest_order_shipment_tracking_invalid_id', 'Invalid shipment tracking ID.');

function orderOf(ctx: RouteContext): StoredOrder | undefined {
  return ctx.state.store.orders.get(ctx.match.id!);
}

export function listTrackings(ctx: RouteContext): Reply {
  const refused = ctx.permit();
  if (refused) return refused;
  const order = orderOf(ctx);
  if (!order) return invalidOrder();
  return ok(order.tracking.map((t) => trackingJson(order, t, ctx.state.json().apiRoot)));
}

export function getTracking(ctx: RouteContext): Reply {
  const refused = ctx.permit();
  if (refused) return refused;
  const order = orderOf(ctx);
  if (!order) return invalidOrder();
  const item = order.tracking.find((t) => t.tracking_id === ctx.match.itemId);
  return item ? ok(trackingJson(order, item, ctx.state.json().apiRoot)) : invalidTracking();
}

export function removeTracking(ctx: RouteContext): Reply {
  const refused = ctx.permit();
  if (refused) return refused;
  const order = orderOf(ctx);
  if (!order) return invalidOrder();
  const item = order.tracking.find((t) => t.tracking_id === ctx.match.itemId);
  if (!item) return invalidTracking();
  const answer = trackingJson(order, item, ctx.state.json().apiRoot);
  deleteTracking(ctx.state.store, order, item.tracking_id);
  ctx.state.traffic.writeApplied('DELETE shipment-tracking');
  return ok(answer);
}

export function postTracking(ctx: RouteContext): Reply {
  const p = new ParamCheck(ctx.params);
  if (!p.has('tracking_number')) return missingParams(['tracking_number']);
  const input = {
    number: p.string('tracking_number') ?? '',
    provider: p.string('tracking_provider') ?? '',
    customProvider: p.string('custom_tracking_provider') ?? '',
    customLink: p.string('custom_tracking_link') ?? '',
    dateShipped: p.string('date_shipped') ?? '',
  };
  const bad = p.answer() ?? ctx.permit();
  if (bad) return bad;
  if (ctx.params.tracking_id)
    return wpError(400, 'woocommerce_rest_shop_order_shipment_tracking_exists', 'Cannot create existing order shipment tracking.');
  const order = orderOf(ctx);
  if (!order) return invalidOrder();
  const item = addTracking(ctx.state.store, order, input);
  ctx.state.traffic.writeApplied('POST shipment-trackings');
  const body = trackingJson(order, item, ctx.state.json().apiRoot);
  const location = `${ctx.state.json().apiRoot}/wc-shipment-tracking/v3/orders/${order.id}/shipment-trackings/${item.tracking_id}`;
  return ok(body, 201, { location });
}

/** Public: no credentials needed (a wrong key still fails, as for every wc-… route). */
export function listProviders(): Reply {
  return ok(PROVIDERS);
}
