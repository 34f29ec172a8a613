/**
 * A platform order → the facts its shipment compares (domain/shop-order.ts): the merchant's
 * status, and digests of the shipping address and the lines with their locations. Digests, so a
 * shipment's input and history hold no second copy of the address; sha256, so two different
 * addresses never compare equal in practice.
 */
import { createHash } from 'node:crypto';
import type { ShopOrderSeen } from '../domain/shop-order';
import type { PlatformOrder } from '../domain/platform-order';

export function seenOf(order: PlatformOrder): ShopOrderSeen {
  const a = order.shipTo;
  const address = a ? [a.firstName, a.lastName, a.company, ...a.streetLines, a.city, a.state, a.postalCode, a.countryCode, a.phone] : [];
  const lines = order.merchant.lines
    .map((l) => [l.item, l.quantity, l.location])
    .sort((x, y) => (JSON.stringify(x) < JSON.stringify(y) ? -1 : 1));
  return {
    facts: { status: order.merchant.status, address: digest(address), lines: digest(lines) },
    modifiedAt: order.modifiedAt,
    ...(order.readAt !== undefined ? { readAt: order.readAt } : {}),
  };
}

function digest(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 32);
}
