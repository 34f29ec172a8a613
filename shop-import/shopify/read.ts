/**
 * Shopify orders that need a label: open orders not yet (or only partly) shipped, changed since a
 * time, oldest change first, with their open fulfillment orders at a shipping location. Cursor
 * pagination (Shopify's cursors hold the sort value and id, so an order changed mid-pull moves to
 * the end and is read again, never skipped). Nested connections multiply the requested cost, so
 * a page holds few orders; an order with more fulfillment orders or lines than a page reads is
 * read again alone with larger limits. Each order is checked on its own (checks.ts): one that
 * fails is refused, the rest of the page goes on.
 */
import { z } from 'zod';
import type { ShopifyClient, Operation } from '../../shop-sync/shopify/client';
import { modifiedTime, ORDER_LIMITS, refused, refusedOrder, RETRYABLE_ID, StoreCurrency, StoreText } from '../checks';
import type { MerchantView, PlatformAddress, PlatformLine, ReadOrder, RefusedOrder, WeightUnit } from '../order';

const PageInfo = z.object({ hasNextPage: z.boolean(), endCursor: z.string().max(1000).nullable().optional() });

const Text = StoreText();
const Short = StoreText(100);

const FoLine = z.object({
  remainingQuantity: z.number().int().min(0).max(ORDER_LIMITS.quantity),
  totalQuantity: z.number().int().min(0).max(ORDER_LIMITS.quantity),
  sku: Text.nullable(),
  productTitle: Text,
  weight: z
    .object({
      unit: z.enum(['GRAMS', 'KILOGRAMS', 'OUNCES', 'POUNDS']),
      value: z
        .number()
        .min(0)
        .max(ORDER_LIMITS.unitWeightKg * 1000),
    })
    .nullable(),
  lineItem: z.object({ originalUnitPriceSet: z.object({ shopMoney: z.object({ amount: z.string().max(40) }) }) }),
});

const FulfillmentOrder = z.object({
  status: Short,
  deliveryMethod: z.object({ methodType: Short }).nullable(),
  assignedLocation: z.object({
    name: Text,
    address1: Text.nullable(),
    address2: Text.nullable(),
    city: Text.nullable(),
    province: Text.nullable(),
    zip: Short.nullable(),
    countryCode: Short,
    phone: Short.nullable(),
  }),
  lineItems: z.object({ pageInfo: PageInfo, nodes: z.array(FoLine).max(250) }),
});

const MailingAddress = z.object({
  firstName: Text.nullable(),
  lastName: Text.nullable(),
  company: Text.nullable(),
  address1: Text.nullable(),
  address2: Text.nullable(),
  city: Text.nullable(),
  provinceCode: Short.nullable(),
  zip: Short.nullable(),
  countryCodeV2: Short.nullable(),
  phone: Short.nullable(),
});

const Order = z.object({
  // Numeric: it goes into the retry list and the retry query's `id:` terms.
  legacyResourceId: z.string().regex(RETRYABLE_ID, 'must be a numeric id'),
  name: StoreText(ORDER_LIMITS.nameChars),
  email: Text.nullable(),
  updatedAt: z.string().max(40),
  // Only whether it is set is read (the order is cancelled); its value is never a cursor.
  cancelledAt: z.string().max(40).nullable(),
  displayFinancialStatus: Short.nullable(),
  currencyCode: StoreCurrency,
  shippingLine: z.object({ title: Text, code: Text.nullable() }).nullable(),
  shippingAddress: MailingAddress.nullable(),
  fulfillmentOrders: z.object({ pageInfo: PageInfo, nodes: z.array(FulfillmentOrder).max(250) }),
});
type Order = z.infer<typeof Order>;

const ORDER_FIELDS = (fulfillmentOrders: number, lines: number) => `
  legacyResourceId name email updatedAt cancelledAt displayFinancialStatus currencyCode
  shippingLine { title code }
  shippingAddress { firstName lastName company address1 address2 city provinceCode zip countryCodeV2 phone }
  fulfillmentOrders(first: ${fulfillmentOrders}) {
    pageInfo { hasNextPage }
    nodes {
      status
      deliveryMethod { methodType }
      assignedLocation { name address1 address2 city province zip countryCode phone }
      lineItems(first: ${lines}) {
        pageInfo { hasNextPage }
        nodes { remainingQuantity totalQuantity sku productTitle weight { unit value } lineItem { originalUnitPriceSet { shopMoney { amount } } } }
      }
    }
  }`;

/** Requested cost on Shopify's rules: about 115 points an order, 577 for the default page of 5 (measured on the fake). */
export const ordersToLabel: Operation<{ orders: { pageInfo: z.infer<typeof PageInfo>; nodes: unknown[] } }> = {
  name: 'ordersToLabel',
  estimatedCost: 580,
  document: `query OrdersToLabel($first: Int!, $after: String, $query: String!) {
  orders(first: $first, after: $after, query: $query, sortKey: UPDATED_AT) {
    pageInfo { hasNextPage endCursor }
    nodes { ${ORDER_FIELDS(2, 10)} }
  }
}`,
  // Each order is checked on its own: one bad order is one rejection, not a failed page.
  data: z.object({ orders: z.object({ pageInfo: PageInfo, nodes: z.array(z.unknown()).max(250) }) }),
};

/** One order with room for 3 fulfillment orders of 40 lines (about 620 points). */
const wholeOrder: Operation<{ order: unknown }> = {
  name: 'wholeOrderToLabel',
  estimatedCost: 620,
  document: `query WholeOrderToLabel($id: ID!) { order(id: $id) { ${ORDER_FIELDS(3, 40)} } }`,
  data: z.object({ order: z.unknown() }),
};

/** Open orders with something left to ship; `since` is Shopify's own updated_at value. */
export function eligibleQuery(since: string | null, ids?: readonly string[]): string {
  const parts = ['status:open', '(fulfillment_status:unshipped OR fulfillment_status:partial)'];
  if (since !== null) parts.push(`updated_at:>='${since}'`);
  if (ids) parts.push(`(${ids.map((id) => `id:${id}`).join(' OR ')})`);
  return parts.join(' ');
}

/**
 * The changes a pull reads: the orders to label, and those a merchant cancelled or refunded
 * (change detection tells their shipments). A shipped order changes with each of our own
 * writes and is not read again, unless refunded.
 */
export function changesQuery(since: string | null): string {
  const toLabel = '(status:open (fulfillment_status:unshipped OR fulfillment_status:partial))';
  const withdrawn = 'status:cancelled OR financial_status:refunded OR financial_status:partially_refunded';
  return `(${toLabel} OR ${withdrawn})${since === null ? '' : ` updated_at:>='${since}'`}`;
}

export interface ShopifyPage {
  orders: ReadOrder[];
  endCursor: string | null;
}

export async function readShopifyPage(
  client: ShopifyClient,
  args: { query: string; first: number; after: string | null },
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
    const whole = overflows(parsed.data) ? await readWhole(client, parsed.data, signal, maxWaitMs, onCost) : parsed.data;
    read.push('refused' in whole ? whole : toPlatformOrder(whole, now));
  }
  return { orders: read, endCursor: orders.pageInfo.hasNextPage ? (orders.pageInfo.endCursor ?? null) : null };
}

function overflows(order: Order): boolean {
  return order.fulfillmentOrders.pageInfo.hasNextPage || order.fulfillmentOrders.nodes.some((fo) => fo.lineItems.pageInfo.hasNextPage);
}

/** The order read alone with larger limits; refused when the store does not give it (it is read again next pull). */
async function readWhole(
  client: ShopifyClient,
  order: Order,
  signal: AbortSignal,
  maxWaitMs: number,
  onCost?: (points: number) => void,
): Promise<Order | RefusedOrder> {
  const id = `gid://shopify/Order/${order.legacyResourceId}`;
  const { order: node } = await client.call(wholeOrder, { id }, signal, maxWaitMs, onCost);
  if (node === null || node === undefined)
    return refused(order, 'legacyResourceId', {
      field: 'order',
      message: 'too large for a page, and the store gave no order when it was read alone',
    });
  const parsed = Order.safeParse(node);
  return parsed.success ? parsed.data : refusedOrder(order, 'legacyResourceId', parsed.error);
}

const UNITS: Record<string, WeightUnit> = { GRAMS: 'g', KILOGRAMS: 'kg', OUNCES: 'oz', POUNDS: 'lb' };

/** Fulfillment orders we may label: open (or started) at a shipping location, with lines left. */
function labelable(fo: Order['fulfillmentOrders']['nodes'][number]): boolean {
  const shipping = fo.deliveryMethod === null || fo.deliveryMethod.methodType === 'SHIPPING';
  return (fo.status === 'OPEN' || fo.status === 'IN_PROGRESS') && shipping && fo.lineItems.nodes.some((l) => l.remainingQuantity > 0);
}

export function toPlatformOrder(order: Order, now: number): ReadOrder {
  const modified = modifiedTime(order.updatedAt, now);
  if (!modified.ok) return refused(order, 'legacyResourceId', { field: 'updatedAt', message: modified.message });
  const open = order.fulfillmentOrders.nodes.filter(labelable);
  const locations = new Set(open.map((fo) => `${fo.assignedLocation.name}|${fo.assignedLocation.address1}`));
  const first = open[0];
  const merchant = merchantView(order);
  const tooLarge = order.fulfillmentOrders.pageInfo.hasNextPage || open.some((fo) => fo.lineItems.pageInfo.hasNextPage);
  return {
    platformOrderId: order.legacyResourceId,
    name: order.name,
    number: order.name.replace(/^#/, ''),
    modifiedAt: modified.value,
    shippingMethod: order.shippingLine ? { title: order.shippingLine.title, code: order.shippingLine.code } : null,
    currency: order.currencyCode,
    email: order.email,
    shipTo: order.shippingAddress ? shipTo(order.shippingAddress) : null,
    shipFrom: first ? location(first.assignedLocation) : null,
    lines: open.flatMap((fo) => fo.lineItems.nodes.filter((l) => l.remainingQuantity > 0).map(line)),
    skip:
      merchant.status === 'cancelled' || merchant.status === 'refunded'
        ? `${merchant.status} in the shop`
        : open.length === 0
          ? 'nothing left to ship from a shipping location (fulfilled elsewhere, on hold, or picked up)'
          : null,
    problem:
      locations.size > 1
        ? { field: 'fulfillmentOrders', message: `ships from ${locations.size} locations: one label per order, split it in Shopify` }
        : tooLarge
          ? { field: 'fulfillmentOrders', message: 'more than 3 fulfillment orders or 40 lines in one: too large for the import' }
          : null,
    merchant,
  };
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

function line(l: z.infer<typeof FoLine>): PlatformLine {
  const price = Number(l.lineItem.originalUnitPriceSet.shopMoney.amount);
  return {
    sku: l.sku,
    title: l.productTitle,
    quantity: l.remainingQuantity,
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

function location(a: Order['fulfillmentOrders']['nodes'][number]['assignedLocation']): PlatformAddress {
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
