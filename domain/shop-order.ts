/**
 * The shop's order as a shipment knows it after its start: what the merchant can still change
 * (cancel, refund, hold, address, lines) as facts the pull reads again and compares. Types and
 * plain functions only, so the workflow bundle imports it. The facts carry digests, not the
 * address itself: comparing needs no personal data. The pull computes them
 * (shop-import/facts.ts) from values our own writes never touch, so a fulfillment, a tracking
 * item, a note or the delivered status is never taken for the merchant's change.
 */
import type { FieldProblem, LabelRequestWithoutKey } from '../shipping-api/contract';

/**
 * - `open`: to be shipped (WooCommerce `processing` or `completed`);
 * - `on_hold`: the merchant holds it (a Shopify fulfillment order `ON_HOLD`; WooCommerce `on-hold`,
 *   `pending`, `failed`);
 * - `cancelled`, `refunded`: nothing is to be shipped any more (a partial refund changes lines instead).
 */
export type ShopOrderStatus = 'open' | 'on_hold' | 'cancelled' | 'refunded';

/** A platform's numeric order id as text (Shopify's legacy id, WooCommerce's id): what reads by id, webhooks and the retry list name. */
export const PLATFORM_ORDER_ID = /^\d{1,20}$/;

export interface ShopOrderFacts {
  status: ShopOrderStatus;
  /** Digest of the shipping address (names, street, city, postcode, country, phone). */
  address: string;
  /** Digest of the lines to ship: item, quantity and location, whatever is fulfilled already. */
  lines: string;
}

/** The facts of one reading and the platform's last-modified time of that reading. */
export interface ShopOrderSeen {
  facts: ShopOrderFacts;
  /** ISO 8601 UTC: an older reading than the one known is stale and refused. */
  modifiedAt: string;
  /**
   * When the reading was taken: the reading worker's clock (ISO 8601 UTC, milliseconds) just
   * before it sent the request that read the order, strictly increasing within a worker process
   * (platforms/read-clock.ts). The platforms' modified times are to the second, so two readings
   * within one second have the same `modifiedAt`; of those, the one taken earlier is stale
   * ({@link readBefore}). Absent in readings made before it existed: then compared as before,
   * by `modifiedAt` alone.
   */
  readAt?: string;
}

/**
 * Whether reading `a` was taken before reading `b`: by the platform's modified time, and within
 * one second of it by when each was read (when both say). Equal, or not known: false.
 */
export function readBefore(a: Pick<ShopOrderSeen, 'modifiedAt' | 'readAt'>, b: Pick<ShopOrderSeen, 'modifiedAt' | 'readAt'>): boolean {
  if (a.modifiedAt !== b.modifiedAt) return a.modifiedAt < b.modifiedAt;
  if (a.readAt === undefined || b.readAt === undefined) return false;
  return Date.parse(a.readAt) < Date.parse(b.readAt);
}

/** What the pull tells a shipment whose order changed in the shop. */
export interface ShopOrderChange extends ShopOrderSeen {
  /**
   * The platform order read. Two platform orders can map to one order id (`#5001` and `5001`):
   * the shipment refuses a reading of another platform order than the one it was started for.
   */
  platformOrderId?: string;
  /** The order mapped again, validated like an import; absent when it does not map. */
  labelRequest?: LabelRequestWithoutKey;
  /** Why it does not map (the import's problems, naming the field). */
  problems?: FieldProblem[];
  /**
   * Shopify: the locations the reading ships from. Of one location only its id (`labelRequest`
   * is its request); of several, each one's request (an order's workflow hands each parcel its own).
   */
  parcels?: Array<{ location: string; name?: string; labelRequest?: LabelRequestWithoutKey }>;
  /**
   * Shopify, of an order to ship: every location holding a line of the order, fulfilled or not
   * (a split order's parcel whose location is not among them had its lines moved away).
   */
  locations?: string[];
  /** Set by an order's workflow on the reading it hands a parcel: no line of the order is at the parcel's location any more. */
  linesLeft?: boolean;
}

/** What a shipment knows of its order, as the label's check with the shop compares it (shop-import/label-check.ts). */
export interface KnownReading extends ShopOrderSeen {
  platformOrderId: string;
}

/** The pull validated the change with zod (domain/schemas.ts), the label's check
 * with the shop built it from a checked order; here only what the comparison reads. */
export function checkChangeShape(change: ShopOrderChange): void {
  const facts = change?.facts;
  if (typeof facts !== 'object' || facts === null) throw new Error('invalid shop change: facts: must be an object');
  for (const key of ['status', 'address', 'lines'] as const) {
    if (typeof facts[key] !== 'string' || facts[key].length > 64)
      throw new Error(`invalid shop change: facts.${key}: must be a short string`);
  }
  if (!['open', 'on_hold', 'cancelled', 'refunded'].includes(facts.status))
    throw new Error(`invalid shop change: facts.status: ${facts.status}`);
  if (typeof change.modifiedAt !== 'string' || change.modifiedAt.length > 40)
    throw new Error('invalid shop change: modifiedAt: must be a date');
  if (
    change.readAt !== undefined &&
    (typeof change.readAt !== 'string' || change.readAt.length > 40 || Number.isNaN(Date.parse(change.readAt)))
  )
    throw new Error('invalid shop change: readAt: must be a date');
  if (change.platformOrderId !== undefined && (typeof change.platformOrderId !== 'string' || change.platformOrderId.length > 64))
    throw new Error('invalid shop change: platformOrderId: must be a short string');
}

/**
 * The reading as the parcel at `location` takes it: its own label request, or none when the
 * reading has none for it; `linesLeft` when the reading names the locations holding the order's
 * lines and this one is not among them.
 */
export function changeForParcel(change: ShopOrderChange, location: string): ShopOrderChange {
  const { parcels, labelRequest, locations, linesLeft: _told, ...rest } = change;
  const mine = parcels?.find((p) => p.location === location);
  const request = parcels && parcels.length > 1 ? mine?.labelRequest : mine ? labelRequest : undefined;
  const left = locations !== undefined && !locations.includes(location) ? { linesLeft: true } : {};
  return request ? { ...rest, ...left, labelRequest: request } : { ...rest, ...left };
}

export type ShopChangeKind = 'status' | 'address' | 'lines';

/** What differs between two readings (empty: nothing that matters to the label). */
export function differences(known: ShopOrderFacts, now: ShopOrderFacts): ShopChangeKind[] {
  const kinds: ShopChangeKind[] = [];
  if (known.status !== now.status) kinds.push('status');
  if (known.address !== now.address) kinds.push('address');
  if (known.lines !== now.lines) kinds.push('lines');
  return kinds;
}

/** Statuses after which nothing is to be shipped. */
export function isWithdrawn(status: ShopOrderStatus): boolean {
  return status === 'cancelled' || status === 'refunded';
}
