/**
 * Webhook bodies as Shopify sends them: REST-shaped (snake_case, numeric ids beside
 * admin_graphql_api_id, money as two-place strings, tags as one comma-separated string) and
 * timestamps in the shop's time zone with its offset ("2026-11-20T11:00:00+01:00"), as the REST
 * Admin API writes them. Only the fields a shipping connector reads are filled in.
 */
import { SHOP } from './defaults';
import { displayFulfillmentStatus } from './fo-state';
import type { FulfillmentOrderRecord, FulfillmentRecord, LineItemRecord, MailingAddress, OrderRecord } from './model';
import { totalGrams } from './nodes';

type Obj = Record<string, unknown>;

const PARTS = new Intl.DateTimeFormat('en-US', {
  timeZone: SHOP.ianaTimezone,
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
  timeZoneName: 'longOffset',
});

/** A UTC stamp as the shop's local time with its offset ("GMT+01:00" → "+01:00", "GMT" → "+00:00"). */
export function shopTime(iso: string | null): string | null {
  if (iso === null) return null;
  const p = Object.fromEntries(PARTS.formatToParts(new Date(iso)).map((x) => [x.type, x.value]));
  const offset = p.timeZoneName === 'GMT' ? '+00:00' : p.timeZoneName!.replace('GMT', '');
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}${offset}`;
}

const REGION = new Intl.DisplayNames(['en'], { type: 'region' });

/** REST's order and line fulfillment_status: null while nothing is shipped. */
function restFulfillmentStatus(order: OrderRecord): string | null {
  const status = displayFulfillmentStatus(order);
  return status === 'FULFILLED' ? 'fulfilled' : status === 'PARTIALLY_FULFILLED' ? 'partial' : null;
}

function address(a: MailingAddress): Obj {
  return {
    name: a.name,
    first_name: a.firstName,
    last_name: a.lastName,
    company: a.company,
    address1: a.address1,
    address2: a.address2,
    city: a.city,
    province: null,
    province_code: a.provinceCode,
    zip: a.zip,
    country: a.countryCodeV2 === null ? null : (REGION.of(a.countryCodeV2) ?? null),
    country_code: a.countryCodeV2,
    phone: a.phone,
  };
}

function lineItem(order: OrderRecord, l: LineItemRecord): Obj {
  const foLines = order.fulfillmentOrders.filter((fo) => fo.status !== 'CANCELLED').flatMap((fo) => fo.lines);
  const mine = foLines.filter((fl) => fl.lineItem === l);
  const remaining = mine.reduce((sum, fl) => sum + fl.remainingQuantity, 0);
  const status = remaining === 0 ? 'fulfilled' : remaining < l.quantity ? 'partial' : null;
  return {
    id: Number(l.id.slice(l.id.lastIndexOf('/') + 1)),
    admin_graphql_api_id: l.id,
    sku: l.sku,
    name: l.title,
    title: l.title,
    quantity: l.quantity,
    grams: Math.round(l.grams),
    price: l.price,
    requires_shipping: true,
    fulfillable_quantity: remaining,
    fulfillment_status: status,
  };
}

function fulfillment(f: FulfillmentRecord): Obj {
  const latest = f.events.length > 0 ? f.displayStatus : null;
  return {
    id: Number(f.legacyResourceId),
    admin_graphql_api_id: f.id,
    name: f.name,
    status: f.status.toLowerCase(),
    created_at: shopTime(f.createdAt),
    updated_at: shopTime(f.updatedAt),
    tracking_company: f.tracking[0]?.company ?? null,
    tracking_number: f.tracking[0]?.number ?? null,
    tracking_numbers: f.tracking.flatMap((t) => (t.number === null ? [] : [t.number])),
    tracking_url: f.tracking[0]?.url ?? null,
    tracking_urls: f.tracking.flatMap((t) => (t.url === null ? [] : [t.url])),
    shipment_status: latest === null ? null : latest.toLowerCase(),
  };
}

function sumPrices(order: OrderRecord): { subtotal: number; total: number } {
  const subtotal = order.lineItems.reduce((sum, l) => sum + Number(l.price) * l.quantity, 0);
  return { subtotal, total: subtotal + Number(order.shippingLine?.price ?? 0) };
}

/** The body of orders/create, orders/updated, orders/paid and orders/cancelled. */
export function orderPayload(order: OrderRecord): Obj {
  const { subtotal, total } = sumPrices(order);
  return {
    id: Number(order.legacyResourceId),
    admin_graphql_api_id: order.id,
    name: order.name,
    order_number: Number(order.name.replace(/\D/g, '')) || null,
    email: order.email,
    contact_email: order.email,
    phone: order.shippingAddress.phone,
    created_at: shopTime(order.createdAt),
    updated_at: shopTime(order.updatedAt),
    processed_at: shopTime(order.createdAt),
    closed_at: shopTime(order.closedAt),
    cancelled_at: shopTime(order.cancelledAt),
    currency: order.currency,
    presentment_currency: order.currency,
    financial_status: order.financialStatus.toLowerCase(),
    fulfillment_status: restFulfillmentStatus(order),
    note: order.note,
    tags: order.tags.join(', '),
    total_weight: totalGrams(order),
    subtotal_price: subtotal.toFixed(2),
    total_price: total.toFixed(2),
    line_items: order.lineItems.map((l) => lineItem(order, l)),
    shipping_address: address(order.shippingAddress),
    shipping_lines: order.shippingLine
      ? [{ id: Number(order.shippingLine.id.slice(order.shippingLine.id.lastIndexOf('/') + 1)), ...shippingLineFields(order) }]
      : [],
    fulfillments: order.fulfillments.map(fulfillment),
  };
}

function shippingLineFields(order: OrderRecord): Obj {
  const line = order.shippingLine!;
  return { title: line.title, code: line.code, source: 'shopify', price: line.price, carrier_identifier: null };
}

/**
 * fulfillment_orders/order_routing_complete carries only the FO's global id and status, as
 * reported (notes section 5, ◐): the connector must read the rest through GraphQL.
 */
export function routingPayload(fo: FulfillmentOrderRecord): Obj {
  return { fulfillment_order: { id: fo.id, status: fo.status.toLowerCase() } };
}

/** fulfillment_orders/placed_on_hold and hold_released: the FO's id and new status (the rest is read through GraphQL). */
export function holdPayload(fo: FulfillmentOrderRecord): Obj {
  return { fulfillment_order: { id: fo.id, status: fo.status.toLowerCase() } };
}

/** refunds/create: which order; the refunded lines are read through GraphQL. */
export function refundPayload(order: OrderRecord): Obj {
  return { order_id: Number(order.legacyResourceId), created_at: shopTime(order.updatedAt), restock: true };
}
