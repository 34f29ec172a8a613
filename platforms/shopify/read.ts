/**
 * Shopify orders that need a label: open orders not yet (or only partly) shipped, changed since a
 * time, oldest change first, with their open fulfillment orders at a shipping location (and, for
 * change detection only, fulfilled ones with their shipped fulfillment orders). Cursor
 * pagination (Shopify's cursors hold the sort value and id, so an order changed mid-pull moves to
 * the end and is read again, never skipped). Nested connections multiply the requested cost, so
 * a page holds few orders; an order with more fulfillment orders or lines than a page reads is
 * read again alone, in pages (whole-order.ts). Each order is checked on its own (domain/platform-order-checks.ts): one
 * that fails is refused, the rest of the page goes on. An order whose open fulfillment orders
 * are at several locations ships as one parcel per location.
 */
import { z } from 'zod';
import type { ShopifyClient, Operation } from './client';
import { modifiedTime, refused, refusedOrder } from '../../domain/platform-order-checks';
import type { MerchantView, PlatformAddress, PlatformLine, PlatformParcel, ReadOrder, WeightUnit } from '../../domain/platform-order';
import { MailingAddress, Order, ORDER_FIELDS, PageInfo, type FoLine, type FulfillmentOrder } from './order-fields';
import { readWholeOrder, type OrderSize } from './whole-order';

/** Requested cost on Shopify's rules: about 117 points an order, 587 for the default page of 5 (measured on the fake). */
export const ordersToLabel: Operation<{ orders: { pageInfo: z.infer<typeof PageInfo>; nodes: unknown[] } }> = {
  name: 'ordersToLabel',
  estimatedCost: 590,
  document: `query OrdersToLabel($first: Int!, $after: String, $query: String!) {
  orders(first: $first, after: $after, query: $query, sortKey: UPDATED_AT) {
    pageInfo { hasNextPage endCursor }
    nodes { ${ORDER_FIELDS(2, 10)} }
  }
}`,
  // Each order is checked on its own: one bad order is one rejection, not a failed page.
  data: z.object({ orders: z.object({ pageInfo: PageInfo, nodes: z.array(z.unknown()).max(250) }) }),
};

/** Open orders with something left to ship; `since` is Shopify's own updated_at value. */
export function eligibleQuery(since: string | null, ids?: readonly string[]): string {
  const parts = ['status:open', '(fulfillment_status:unshipped OR fulfillment_status:partial)'];
  if (since !== null) parts.push(`updated_at:>='${since}'`);
  if (ids) parts.push(`(${ids.map((id) => `id:${id}`).join(' OR ')})`);
  return parts.join(' ');
}

/**
 * The changes a pull reads: the orders to label, those a merchant cancelled or refunded, and the
 * fulfilled ones (archived or not), so an address corrected after our fulfillment reaches its
 * shipment. Each of our own writes (fulfillment, tracking event) brings a fulfilled order back
 * once; change detection sends its shipment nothing unless what matters differs (shop-import/changes.ts).
 * A shop's first pull leaves fulfilled orders out: none of them has a shipment of ours yet.
 */
export function changesQuery(since: string | null, options: { fulfilled: boolean } = { fulfilled: true }): string {
  const toLabel = '(status:open (fulfillment_status:unshipped OR fulfillment_status:partial))';
  const withdrawn = 'status:cancelled OR financial_status:refunded OR financial_status:partially_refunded';
  const fulfilled = options.fulfilled ? ' OR fulfillment_status:shipped' : '';
  return `(${toLabel} OR ${withdrawn}${fulfilled})${since === null ? '' : ` updated_at:>='${since}'`}`;
}

export interface ShopifyPage {
  orders: ReadOrder[];
  endCursor: string | null;
}

export async function readShopifyPage(
  client: ShopifyClient,
  args: { query: string; first: number; after: string | null },
  size: OrderSize,
  signal: AbortSignal,
  maxWaitMs: number,
  now: number,
  onCost?: (points: number) => void,
): Promise<ShopifyPage> {
  const { orders } = await client.call(ordersToLabel, args, signal, maxWaitMs, onCost);
  const read: ReadOrder[] = [];
  for (const node of orders.nodes) {
    const parsed = Order.safeParse(node);
    if (!parsed.success) {
      read.push(refusedOrder(node, 'legacyResourceId', parsed.error));
      continue;
    }
    const whole = overflows(parsed.data) ? await readWholeOrder(client, parsed.data, size, signal, maxWaitMs, onCost) : parsed.data;
    read.push('refused' in whole ? whole : toPlatformOrder(whole, now));
  }
  return { orders: read, endCursor: orders.pageInfo.hasNextPage ? (orders.pageInfo.endCursor ?? null) : null };
}

function overflows(order: Order): boolean {
  return order.fulfillmentOrders.pageInfo.hasNextPage || order.fulfillmentOrders.nodes.some((fo) => fo.lineItems.pageInfo.hasNextPage);
}

const UNITS: Record<string, WeightUnit> = { GRAMS: 'g', KILOGRAMS: 'kg', OUNCES: 'oz', POUNDS: 'lb' };

const shipping = (fo: FulfillmentOrder) => fo.deliveryMethod === null || fo.deliveryMethod.methodType === 'SHIPPING';

/** Fulfillment orders we may label: open (or started) at a shipping location, with lines left. */
function labelable(fo: FulfillmentOrder): boolean {
  return (fo.status === 'OPEN' || fo.status === 'IN_PROGRESS') && shipping(fo) && fo.lineItems.nodes.some((l) => l.remainingQuantity > 0);
}

export function toPlatformOrder(order: Order, now: number): ReadOrder {
  const modified = modifiedTime(order.updatedAt, now);
  if (!modified.ok) return refused(order, 'legacyResourceId', { field: 'updatedAt', message: modified.message });
  const open = order.fulfillmentOrders.nodes.filter(labelable);
  // Fulfilled (no fulfillment order left open or held): its shipped parcels, so a change after the label offers a whole request.
  const done = order.fulfillmentOrders.nodes.every((fo) => fo.status === 'CLOSED' || fo.status === 'CANCELLED');
  const shipped = done ? order.fulfillmentOrders.nodes.filter(fulfilled) : [];
  const parcels = open.length > 0 ? parcelsOf(open, (l) => l.remainingQuantity) : parcelsOf(shipped, (l) => l.totalQuantity);
  const merchant = merchantView(order);
  return {
    platformOrderId: order.legacyResourceId,
    name: order.name,
    number: order.name.replace(/^#/, ''),
    modifiedAt: modified.value,
    shippingMethod: order.shippingLine ? { title: order.shippingLine.title, code: order.shippingLine.code } : null,
    currency: order.currencyCode,
    email: order.email,
    shipTo: order.shippingAddress ? shipTo(order.shippingAddress) : null,
    shipFrom: parcels[0]?.shipFrom ?? null,
    lines: parcels.flatMap((p) => p.lines),
    ...(parcels.length > 0 ? { parcels } : {}),
    locations: locationsHolding(order),
    skip:
      merchant.status === 'cancelled' || merchant.status === 'refunded'
        ? `${merchant.status} in the shop`
        : shipped.length > 0
          ? 'fulfilled: read again only for changes to its shipment'
          : open.length === 0
            ? 'nothing left to ship from a shipping location (fulfilled elsewhere, on hold, or picked up)'
            : null,
    problem:
      // A deleted location has no id: its fulfillment orders cannot be told apart from another's.
      parcels.length > 1 && parcels.some((p) => p.location === null)
        ? {
            field: 'fulfillmentOrders',
            message: 'ships from several locations, one of them deleted in Shopify: move its fulfillment order to a location',
          }
        : null,
    merchant,
  };
}

/** Fulfilled at a shipping location: closed with lines shipped (the order has no open one). */
function fulfilled(fo: FulfillmentOrder): boolean {
  return fo.status === 'CLOSED' && shipping(fo) && fo.lineItems.nodes.some((l) => l.totalQuantity > 0);
}

/** Fulfillment orders by location, in the order Shopify lists them: one parcel each, of `quantity` per line. */
function parcelsOf(fos: FulfillmentOrder[], quantity: (l: FoLine) => number): PlatformParcel[] {
  const parcels = new Map<string, PlatformParcel>();
  for (const fo of fos) {
    const id = fo.assignedLocation.location?.legacyResourceId ?? null;
    const key = id ?? `name:${fo.assignedLocation.name}`;
    const parcel = parcels.get(key) ?? { location: id, name: fo.assignedLocation.name, shipFrom: location(fo.assignedLocation), lines: [] };
    parcel.lines.push(...fo.lineItems.nodes.filter((l) => quantity(l) > 0).map((l) => line(l, quantity(l))));
    parcels.set(key, parcel);
  }
  return [...parcels.values()];
}

/** The locations holding a line of the order, fulfilled or not: its fulfillment orders not cancelled, with a quantity. */
function locationsHolding(order: Order): string[] {
  const ids = order.fulfillmentOrders.nodes
    .filter((fo) => fo.status !== 'CANCELLED' && fo.lineItems.nodes.some((l) => l.totalQuantity > 0))
    .map((fo) => fo.assignedLocation.location?.legacyResourceId ?? null)
    .filter((id): id is string => id !== null);
  return [...new Set(ids)];
}

/** Status and lines as the merchant left them: fulfillment orders' totals, not what remains after our fulfillments. */
function merchantView(order: Order): MerchantView {
  const live = order.fulfillmentOrders.nodes.filter((fo) => fo.status !== 'CANCELLED');
  const financial = order.displayFinancialStatus ?? '';
  return {
    status:
      order.cancelledAt !== null
        ? 'cancelled'
        : financial === 'REFUNDED'
          ? 'refunded'
          : live.some((fo) => fo.status === 'ON_HOLD')
            ? 'on_hold'
            : 'open',
    platformStatus: financial,
    lines: live.flatMap((fo) =>
      fo.lineItems.nodes
        .filter((l) => l.totalQuantity > 0)
        .map((l) => ({ item: l.sku || l.productTitle, quantity: l.totalQuantity, location: fo.assignedLocation.name })),
    ),
  };
}

function line(l: FoLine, quantity: number): PlatformLine {
  const price = Number(l.lineItem.originalUnitPriceSet.shopMoney.amount);
  return {
    sku: l.sku,
    title: l.productTitle,
    quantity,
    unitPrice: Number.isFinite(price) ? price : null,
    // Shopify answers a weight of 0 for a product whose weight was never set.
    unitWeight: l.weight && l.weight.value > 0 ? { value: l.weight.value, unit: UNITS[l.weight.unit]! } : null,
  };
}

function shipTo(a: z.infer<typeof MailingAddress>): PlatformAddress {
  return {
    firstName: a.firstName,
    lastName: a.lastName,
    company: a.company,
    streetLines: [a.address1, a.address2].filter((s): s is string => Boolean(s)),
    city: a.city,
    state: a.provinceCode,
    postalCode: a.zip,
    countryCode: a.countryCodeV2,
    phone: a.phone,
  };
}

function location(a: FulfillmentOrder['assignedLocation']): PlatformAddress {
  return {
    firstName: null,
    lastName: null,
    company: a.name,
    streetLines: [a.address1, a.address2].filter((s): s is string => Boolean(s)),
    city: a.city,
    state: a.province,
    postalCode: a.zip,
    countryCode: a.countryCode,
    phone: a.phone,
  };
}
