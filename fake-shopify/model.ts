/**
 * What the store holds, as plain records, plus global ids and timestamps in Shopify's form.
 * Records are mutated in place by the mutations; views and GraphQL objects are built from them.
 */
export type FoStatus = 'OPEN' | 'IN_PROGRESS' | 'SCHEDULED' | 'ON_HOLD' | 'INCOMPLETE' | 'CLOSED' | 'CANCELLED';
/** The DeliveryMethodType values a seed may give an FO (Shopify has more: NONE, PICKUP_POINT, RETAIL). */
export type DeliveryMethodType = 'SHIPPING' | 'PICK_UP' | 'LOCAL';
/** The OrderDisplayFinancialStatus values a seed may give, and the two a refund sets. */
export type FinancialStatus = 'PAID' | 'PENDING' | 'AUTHORIZED' | 'PARTIALLY_REFUNDED' | 'REFUNDED';

export interface MailingAddress {
  name: string | null;
  firstName: string | null;
  lastName: string | null;
  company: string | null;
  address1: string | null;
  address2: string | null;
  city: string | null;
  provinceCode: string | null;
  zip: string | null;
  countryCodeV2: string | null;
  phone: string | null;
}

export interface LineItemRecord {
  id: string;
  sku: string;
  title: string;
  quantity: number;
  grams: number;
  price: string;
}

export interface FoLineRecord {
  id: string;
  lineItem: LineItemRecord;
  totalQuantity: number;
  remainingQuantity: number;
}

export interface FulfillmentOrderRecord {
  id: string;
  orderId: string;
  status: FoStatus;
  locationId: string;
  deliveryMethod: DeliveryMethodType;
  lines: FoLineRecord[];
  createdAt: string;
  updatedAt: string;
}

export interface TrackingRecord {
  company: string | null;
  number: string | null;
  url: string | null;
}

export interface EventRecord {
  id: string;
  status: string;
  happenedAt: string;
  createdAt: string;
  estimatedDeliveryAt: string | null;
  message: string | null;
  address1: string | null;
  city: string | null;
  province: string | null;
  zip: string | null;
  country: string | null;
  latitude: number | null;
  longitude: number | null;
}

export interface OriginAddress {
  address1: string | null;
  address2: string | null;
  city: string | null;
  countryCode: string;
  provinceCode: string | null;
  zip: string | null;
}

export interface FulfillmentRecord {
  id: string;
  legacyResourceId: string;
  name: string;
  orderId: string;
  locationId: string;
  status: string;
  displayStatus: string | null;
  createdAt: string;
  updatedAt: string;
  deliveredAt: string | null;
  estimatedDeliveryAt: string | null;
  inTransitAt: string | null;
  notifyCustomer: boolean;
  originAddress: OriginAddress | null;
  tracking: TrackingRecord[];
  /** Append-only, in creation order: Shopify keeps every event, duplicates included. */
  events: EventRecord[];
  lines: Array<{ foLineId: string; quantity: number }>;
}

export interface ShippingLineRecord {
  id: string;
  title: string;
  code: string | null;
  /** Decimal amount, two places ("4.90"). */
  price: string;
}

export interface OrderRecord {
  id: string;
  legacyResourceId: string;
  name: string;
  email: string | null;
  note: string | null;
  tags: string[];
  createdAt: string;
  updatedAt: string;
  closed: boolean;
  closedAt: string | null;
  cancelledAt: string | null;
  /** Shop currency and presentment currency alike: the fake has no conversion. */
  currency: string;
  financialStatus: FinancialStatus;
  shippingLine: ShippingLineRecord | null;
  shippingAddress: MailingAddress;
  lineItems: LineItemRecord[];
  fulfillmentOrders: FulfillmentOrderRecord[];
  fulfillments: FulfillmentRecord[];
}

export type GidType =
  'Order' | 'FulfillmentOrder' | 'FulfillmentOrderLineItem' | 'LineItem' | 'Fulfillment' | 'FulfillmentEvent' | 'ShippingLine';

export function gid(type: string, n: number | string): string {
  return `gid://shopify/${type}/${n}`;
}

/** The type and numeric id of a global id, or null when it is not one. */
export function parseGid(raw: string): { type: string; n: string } | null {
  const match = /^gid:\/\/shopify\/([A-Za-z]+)\/(\d{1,19})(\?.*)?$/.exec(raw);
  return match ? { type: match[1]!, n: match[2]! } : null;
}

/** Shopify's DateTime form: UTC, whole seconds ("2026-11-01T10:00:00Z"). */
export function isoSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** The later of two whole-second UTC stamps (the form sorts as text), so updatedAt never goes back. */
export function laterStamp(a: string, b: string): string {
  return a >= b ? a : b;
}

/** A seed's decimal amount ("12.5", "12") in the two-place form the fake stores ("12.50"). */
export function money(amount: string): string {
  return Number(amount).toFixed(2);
}
