/**
 * A platform order as the import needs it, the same for Shopify and WooCommerce: the readers
 * (platforms/shopify/read.ts, platforms/woocommerce/read.ts) fill it from the platform's answer, the mapping
 * (shop-import/mapping.ts) turns it into a label request. Values stay as the platform gave them; only the
 * weights carry their unit.
 */
import type { ShopOrderStatus } from './shop-order';

export type WeightUnit = 'kg' | 'g' | 'lb' | 'oz';

export interface PlatformAddress {
  firstName: string | null;
  lastName: string | null;
  company: string | null;
  streetLines: string[];
  city: string | null;
  state: string | null;
  postalCode: string | null;
  countryCode: string | null;
  phone: string | null;
}

export interface PlatformLine {
  sku: string | null;
  title: string;
  quantity: number;
  /** Per unit, in the order's currency; null when the platform did not say. */
  unitPrice: number | null;
  unitWeight: { value: number; unit: WeightUnit } | null;
}

export interface PlatformOrder {
  /** The platform's id of the order (Shopify's numeric legacy id, WooCommerce's id). */
  platformOrderId: string;
  /** As the merchant sees it: Shopify "#1001", WooCommerce "1001". */
  name: string;
  /** The order number without decoration: "1001". */
  number: string;
  /** The platform's own last-modified time, ISO 8601 UTC to the second: the pull's cursor is made of these. */
  modifiedAt: string;
  /**
   * When this reading was taken (platforms/read-clock.ts: the reader's clock before the request
   * was sent, milliseconds): of two readings with the same `modifiedAt`, the later read wins.
   */
  readAt?: string;
  /** The chosen shipping method's title and code (Shopify's shipping line; WooCommerce's method). */
  shippingMethod: { title: string | null; code: string | null } | null;
  currency: string;
  email: string | null;
  shipTo: PlatformAddress | null;
  /** Shopify: the fulfillment order's location; WooCommerce: null (the mapping gives it). */
  shipFrom: PlatformAddress | null;
  lines: PlatformLine[];
  /**
   * Shopify: the open fulfillment orders by location, each location one parcel (shipFrom and
   * lines above are theirs together). Two or more: the order ships as one label per parcel.
   */
  parcels?: PlatformParcel[];
  /**
   * Shopify: every location holding a line of the order, fulfilled or not (its fulfillment
   * orders not cancelled): a split order's parcel whose location is not here had its lines moved.
   */
  locations?: string[];
  /**
   * Why the order needs no label from us although the platform listed it: fulfilled elsewhere,
   * on hold, picked up in store. Skipped orders are counted, not reported as problems.
   */
  skip: string | null;
  /** A problem of the order's shape found while reading (two ship-from locations), reported like a mapping problem. */
  problem: { field: string; message: string } | null;
  /**
   * What the merchant can change after import, read from values our own writes never touch (a
   * fulfillment closes a fulfillment order, but its lines keep their total): change detection
   * (shop-import/facts.ts) compares it with what the shipment started from.
   */
  merchant: MerchantView;
}

/** One location's share of an order: its open fulfillment orders' lines. */
export interface PlatformParcel {
  /** The platform's location id (Shopify's numeric id); null for a location deleted since. */
  location: string | null;
  name: string;
  shipFrom: PlatformAddress;
  lines: PlatformLine[];
}

export interface MerchantView {
  status: ShopOrderStatus;
  /** The platform's own status value (WooCommerce's slug, Shopify's financial status). */
  platformStatus: string;
  /** Every line the order ships, fulfilled or not: item (SKU, else title), quantity, location (Shopify). */
  lines: Array<{ item: string; quantity: number; location: string | null }>;
}

/**
 * An order the reader could not take as the platform sent it (a field out of range, a date that
 * is no time or lies ahead, an order that could not be read whole): reported like a mapping
 * problem, with its platform id and the field, and read again on the next pull.
 */
export interface RefusedOrder {
  refused: true;
  /** The id as the platform sent it, clipped; only digits can be read again by id. */
  platformOrderId: string;
  name: string | null;
  problem: { field: string; message: string };
}

/** What a reader returns per order: the order, or why it was refused. */
export type ReadOrder = PlatformOrder | RefusedOrder;

export function isRefused(order: ReadOrder): order is RefusedOrder {
  return 'refused' in order;
}

/** Grams per unit of the weights platforms send. */
const GRAMS: Record<WeightUnit | 'lbs', number> = { kg: 1000, g: 1, lb: 453.59237, lbs: 453.59237, oz: 28.349523125 };

export function convertWeight(value: number, from: WeightUnit | 'lbs', to: WeightUnit): number {
  const converted = (value * GRAMS[from]) / GRAMS[to];
  return Math.round(converted * 1000) / 1000;
}
