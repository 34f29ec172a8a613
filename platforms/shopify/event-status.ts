/**
 * Which Shopify fulfillment event a tracking change becomes. Tracking tags follow the AfterShip
 * convention (Pending, InfoReceived, InTransit, OutForDelivery, AttemptFail, AvailableForPickup,
 * Delivered, Exception, Expired, plus the spec's Cancelled and Unknown); subtags are open strings.
 * A subtag entry wins over its tag's; a merchant's table (connector `eventStatuses`) wins over both.
 */

/** FulfillmentEventStatus of Admin API 2026-10. */
export const FULFILLMENT_EVENT_STATUSES = [
  'ATTEMPTED_DELIVERY',
  'CARRIER_PICKED_UP',
  'CONFIRMED',
  'DELAYED',
  'DELIVERED',
  'FAILURE',
  'IN_TRANSIT',
  'LABEL_PRINTED',
  'LABEL_PURCHASED',
  'OUT_FOR_DELIVERY',
  'READY_FOR_PICKUP',
] as const;
export type FulfillmentEventStatus = (typeof FULFILLMENT_EVENT_STATUSES)[number];

/** null: the change is not worth an event on the order's timeline. */
const BY_TAG_OR_SUBTAG: Readonly<Record<string, FulfillmentEventStatus | null>> = {
  Pending: null,
  Unknown: null,
  InfoReceived: 'CONFIRMED',
  InTransit: 'IN_TRANSIT',
  InTransit_001: 'CARRIER_PICKED_UP',
  OutForDelivery: 'OUT_FOR_DELIVERY',
  AttemptFail: 'ATTEMPTED_DELIVERY',
  AvailableForPickup: 'READY_FOR_PICKUP',
  Delivered: 'DELIVERED',
  Exception: 'FAILURE',
  Exception_004: 'DELAYED',
  Expired: 'FAILURE',
  Cancelled: 'FAILURE',
};

export function fulfillmentEventStatus(
  tag: string,
  subtag: string | null,
  overrides: Readonly<Record<string, string | null>>,
): FulfillmentEventStatus | null {
  for (const key of [subtag, tag]) {
    if (key === null) continue;
    if (key in overrides) return overrides[key] as FulfillmentEventStatus | null;
    if (Object.hasOwn(BY_TAG_OR_SUBTAG, key)) return BY_TAG_OR_SUBTAG[key]!;
  }
  return null;
}
