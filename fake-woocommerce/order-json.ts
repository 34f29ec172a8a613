/**
 * The wc/v3 JSON of orders, notes and products, field for field as WooCommerce prepares them
 * (the fields a client may read; tax, coupon and refund lines are empty). Dates: `date_*` in the
 * store's time zone and `date_*_gmt` in GMT, both `YYYY-MM-DDTHH:MM:SS` without an offset.
 */
import { gmtWall, localWall } from './clock';
import { DEFAULTS } from './defaults';
import type { StoredNote, StoredOrder, StoredProduct } from './store';
import { trackingMetaValue } from './tracking';

export interface JsonContext {
  /** `${baseUrl}/wp-json` */
  apiRoot: string;
  timezone: string;
}

const money = (n: number): string => n.toFixed(2);

function dates(name: string, seconds: number | null, tz: string): Record<string, string | null> {
  return {
    [name]: seconds === null ? null : localWall(seconds, tz),
    [`${name}_gmt`]: seconds === null ? null : gmtWall(seconds),
  };
}

function lineItemJson(item: StoredOrder['lineItems'][number]): Record<string, unknown> {
  const total = money(Number(item.price) * item.quantity);
  return {
    id: item.id,
    name: item.name,
    product_id: item.productId,
    variation_id: 0,
    quantity: item.quantity,
    tax_class: '',
    subtotal: total,
    subtotal_tax: '0.00',
    total,
    total_tax: '0.00',
    taxes: [],
    meta_data: [],
    sku: item.sku,
    // A number here, unlike every other money field.
    price: Number(item.price),
    image: { id: '', src: '' },
    parent_name: null,
  };
}

function metaJson(order: StoredOrder): Array<Record<string, unknown>> {
  const meta: Array<Record<string, unknown>> = order.meta.map((m) => ({ ...m }));
  if (order.trackingMetaId !== null)
    meta.push({ id: order.trackingMetaId, key: '_wc_shipment_tracking_items', value: trackingMetaValue(order) });
  return meta;
}

/** The zone method instance each method id gets in the fake's one shipping zone. */
const INSTANCE_IDS: Readonly<Record<string, string>> = { flat_rate: '1', free_shipping: '2', local_pickup: '3' };

export function orderJson(order: StoredOrder, ctx: JsonContext): Record<string, unknown> {
  const tz = ctx.timezone;
  const itemsTotal = order.lineItems.reduce((sum, i) => sum + Number(i.price) * i.quantity, 0);
  return {
    id: order.id,
    parent_id: 0,
    status: order.status,
    currency: order.currency,
    version: DEFAULTS.wcVersion,
    prices_include_tax: false,
    date_created: localWall(order.createdAt, tz),
    date_modified: localWall(order.modifiedAt, tz),
    discount_total: '0.00',
    discount_tax: '0.00',
    shipping_total: order.shippingTotal,
    shipping_tax: '0.00',
    cart_tax: '0.00',
    total: money(itemsTotal + Number(order.shippingTotal)),
    total_tax: '0.00',
    customer_id: 0,
    order_key: order.orderKey,
    billing: { ...order.billing },
    shipping: { ...order.shipping },
    payment_method: 'bacs',
    payment_method_title: 'Direct bank transfer',
    transaction_id: '',
    customer_ip_address: '203.0.113.7',
    customer_user_agent: 'Mozilla/5.0',
    created_via: 'checkout',
    customer_note: order.customerNote,
    ...dates('date_completed', order.completedAt, tz),
    ...dates('date_paid', order.paidAt, tz),
    cart_hash: '',
    number: String(order.id),
    meta_data: metaJson(order),
    line_items: order.lineItems.map(lineItemJson),
    tax_lines: [],
    shipping_lines: [
      {
        id: order.id * 100,
        method_title: order.shippingMethod.methodTitle,
        method_id: order.shippingMethod.methodId,
        instance_id: INSTANCE_IDS[order.shippingMethod.methodId] ?? '1',
        total: order.shippingTotal,
        total_tax: '0.00',
        taxes: [],
        meta_data: [],
      },
    ],
    fee_lines: [],
    coupon_lines: [],
    refunds: [],
    payment_url: '',
    is_editable: ['pending', 'on-hold', 'checkout-draft'].includes(order.status),
    needs_payment: order.status === 'pending' || order.status === 'failed',
    needs_processing: true,
    date_created_gmt: gmtWall(order.createdAt),
    date_modified_gmt: gmtWall(order.modifiedAt),
    currency_symbol: order.currency === 'EUR' ? '€' : order.currency === 'GBP' ? '£' : '$',
    _links: {
      self: [{ href: `${ctx.apiRoot}/wc/v3/orders/${order.id}` }],
      collection: [{ href: `${ctx.apiRoot}/wc/v3/orders` }],
    },
  };
}

export function noteJson(order: StoredOrder, note: StoredNote, ctx: JsonContext): Record<string, unknown> {
  const collection = `${ctx.apiRoot}/wc/v3/orders/${order.id}/notes`;
  return {
    id: note.id,
    author: note.author,
    date_created: localWall(note.at, ctx.timezone),
    date_created_gmt: gmtWall(note.at),
    note: note.note,
    customer_note: note.customerNote,
    _links: {
      self: [{ href: `${collection}/${note.id}` }],
      collection: [{ href: collection }],
      up: [{ href: `${ctx.apiRoot}/wc/v3/orders/${order.id}` }],
    },
  };
}

export function productJson(product: StoredProduct, ctx: JsonContext): Record<string, unknown> {
  return {
    id: product.id,
    name: product.name,
    slug: product.sku.toLowerCase(),
    type: 'simple',
    status: 'publish',
    sku: product.sku,
    price: product.price,
    regular_price: product.price,
    sale_price: '',
    virtual: false,
    downloadable: false,
    manage_stock: false,
    stock_status: 'instock',
    // Strings in the store's weight and dimension units (a store setting, not in this answer).
    weight: product.weight,
    dimensions: { ...product.dimensions },
    shipping_required: true,
    shipping_class: '',
    variations: [],
    meta_data: [],
    _links: {
      self: [{ href: `${ctx.apiRoot}/wc/v3/products/${product.id}` }],
      collection: [{ href: `${ctx.apiRoot}/wc/v3/products` }],
    },
  };
}
