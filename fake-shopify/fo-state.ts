/**
 * The fulfillment-order state machine and the order's aggregated fulfillment status.
 * OPEN → IN_PROGRESS once part is fulfilled → CLOSED when nothing remains; ON_HOLD (a merchant's
 * hold, holds-and-refunds.ts, or the seed), SCHEDULED and CANCELLED (the seed) block fulfillment.
 */
import type { FulfillmentOrderRecord, OrderRecord } from './model';

const FULFILLABLE = new Set(['OPEN', 'IN_PROGRESS']);

export function isFulfillable(fo: FulfillmentOrderRecord): boolean {
  return FULFILLABLE.has(fo.status);
}

/** Moves an FO on after quantities fell: CLOSED at zero remaining, IN_PROGRESS when partly done. */
export function settle(fo: FulfillmentOrderRecord): void {
  if (!isFulfillable(fo)) return;
  const remaining = fo.lines.reduce((sum, l) => sum + l.remainingQuantity, 0);
  const started = fo.lines.some((l) => l.remainingQuantity < l.totalQuantity);
  if (remaining === 0) fo.status = 'CLOSED';
  else if (started) fo.status = 'IN_PROGRESS';
}

/** Order.displayFulfillmentStatus from its FOs (cancelled FOs do not count). */
export function displayFulfillmentStatus(order: OrderRecord): string {
  const live = order.fulfillmentOrders.filter((fo) => fo.status !== 'CANCELLED');
  const total = live.reduce((sum, fo) => sum + fo.lines.reduce((s, l) => s + l.totalQuantity, 0), 0);
  const remaining = live.reduce((sum, fo) => sum + fo.lines.reduce((s, l) => s + l.remainingQuantity, 0), 0);
  if (total > 0 && remaining === 0) return 'FULFILLED';
  if (remaining < total) return 'PARTIALLY_FULFILLED';
  const waiting = live.filter((fo) => fo.lines.some((l) => l.remainingQuantity > 0));
  if (waiting.length > 0 && waiting.every((fo) => fo.status === 'ON_HOLD')) return 'ON_HOLD';
  if (waiting.length > 0 && waiting.every((fo) => fo.status === 'SCHEDULED')) return 'SCHEDULED';
  return 'UNFULFILLED';
}
