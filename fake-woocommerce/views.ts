/** The merchant's view of an order for tests and the admin routes (not an API shape). */
import { gmtWall } from './clock';
import type { StoredOrder } from './store';
import { trackingView } from './tracking';
import type { FakeWooOrderView } from './types';

export function orderView(order: StoredOrder): FakeWooOrderView {
  return {
    id: order.id,
    number: String(order.id),
    status: order.status,
    date_created_gmt: gmtWall(order.createdAt),
    date_modified_gmt: gmtWall(order.modifiedAt),
    shippingMethod: { ...order.shippingMethod },
    statusHistory: order.statusHistory.map((h) => ({ from: h.from, to: h.to, at: gmtWall(h.at) })),
    emailsSent: order.emails.map((e) => ({
      ...e,
      at: gmtWall(e.at),
      ...(e.trackingItems ? { trackingItems: e.trackingItems.map((t) => ({ ...t })) } : {}),
    })),
    notes: order.notes.map((n) => ({
      id: n.id,
      note: n.note,
      customer_note: n.customerNote,
      added_by: n.author,
      date_created_gmt: gmtWall(n.at),
    })),
    trackingItems: order.tracking.map((t) => trackingView(order, t)),
  };
}
