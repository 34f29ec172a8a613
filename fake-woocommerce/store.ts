/**
 * What the fake store holds: orders (with their notes, shipment tracking items, status history
 * and the emails WooCommerce would have sent) and the products their lines point at. Plain
 * records; the changes that follow WooCommerce's rules live in order-actions.ts and tracking.ts.
 */
import { randomBytes } from 'node:crypto';
import { parseGmtSeed } from './clock';
import { DEFAULTS, type WooStatus } from './defaults';
import type { ParsedSeed } from './seed';
import type { FakeWooEmailTemplate, FakeWooTrackingItemView, ModifiedOnSave, TrackingSave } from './types';

export interface StoredNote {
  id: number;
  note: string;
  customerNote: boolean;
  /** "system", or the API user's display name for notes sent with added_by_user. */
  author: string;
  at: number;
}

/** One entry of the order meta `_wc_shipment_tracking_items`, as the extension stores it. */
export interface StoredTracking {
  tracking_id: string;
  /** The slug (sanitize_title) of the provider name sent. */
  tracking_provider: string;
  custom_tracking_provider: string;
  custom_tracking_link: string;
  tracking_number: string;
  /** Epoch seconds. */
  date_shipped: number;
}

export interface StoredEmail {
  template: FakeWooEmailTemplate;
  at: number;
  to: string;
  trackingItems?: FakeWooTrackingItemView[];
  note?: string;
}

export interface StoredLineItem {
  id: number;
  name: string;
  productId: number;
  sku: string;
  quantity: number;
  price: string;
}

export interface StoredOrder {
  id: number;
  status: WooStatus;
  currency: string;
  /** Epoch seconds (the store keeps one-second granularity). */
  createdAt: number;
  modifiedAt: number;
  paidAt: number | null;
  completedAt: number | null;
  customerNote: string;
  billing: Record<string, string>;
  shipping: Record<string, string>;
  lineItems: StoredLineItem[];
  shippingTotal: string;
  shippingMethod: { methodId: string; methodTitle: string };
  orderKey: string;
  meta: Array<{ id: number; key: string; value: unknown }>;
  notes: StoredNote[];
  tracking: StoredTracking[];
  /** The meta id of `_wc_shipment_tracking_items` once the extension wrote it. */
  trackingMetaId: number | null;
  statusHistory: Array<{ from: WooStatus; to: WooStatus; at: number }>;
  emails: StoredEmail[];
}

export interface StoredProduct {
  id: number;
  name: string;
  sku: string;
  price: string;
  weight: string;
  dimensions: { length: string; width: string; height: string };
}

const BILLING_DEFAULTS: Record<string, string> = {
  first_name: 'Jane',
  last_name: 'Doe',
  company: '',
  address_1: '1 Main Street',
  address_2: '',
  city: 'Springfield',
  state: 'IL',
  postcode: '62701',
  country: 'US',
  email: 'jane.doe@example.com',
  phone: '+1 555 0100',
};

/** A weight that differs per sku but never changes for one (the tests compare it). */
function weightOf(sku: string): string {
  let h = 0;
  for (const ch of sku) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return (0.2 + (h % 30) / 10).toFixed(1);
}

const PAID_STATUSES: ReadonlySet<WooStatus> = new Set(['processing', 'completed', 'on-hold', 'refunded']);

/** What a webhook listens to: an order made, or an order saved (woocommerce_update_order). */
export type OrderEvent = 'created' | 'updated';

export class WooStore {
  readonly orders = new Map<number, StoredOrder>();
  readonly products = new Map<number, StoredProduct>();
  private nextOrderId: number = DEFAULTS.firstOrderId;
  private nextProductId: number = DEFAULTS.firstProductId;
  private nextNoteId: number = DEFAULTS.firstNoteId;
  private nextLineItemId = 1;
  private nextMetaId = 1;

  /** Told of every order created or saved (the webhooks listen here). */
  onOrderEvent: ((order: StoredOrder, event: OrderEvent) => void) | null = null;

  constructor(
    private readonly now: () => number,
    readonly modifiedOnSave: ModifiedOnSave = 'always',
    readonly trackingSave: TrackingSave = 'save',
  ) {}

  nowSec(): number {
    return Math.floor(this.now() / 1000);
  }

  noteId(): number {
    return this.nextNoteId++;
  }

  metaId(): number {
    return this.nextMetaId++;
  }

  /**
   * Stamps date_modified with the fake's clock, one-second granularity. Never backwards: the
   * real store stamps time(), but a seed may date an order after the fake's clock.
   */
  touch(order: StoredOrder): void {
    order.modifiedAt = Math.max(order.modifiedAt, this.nowSec());
  }

  /**
   * WC_Order::save on an existing order: date_modified moves as `modifiedOnSave` says, and
   * woocommerce_update_order fires (order.updated) whether or not it moved.
   */
  save(order: StoredOrder, postFieldsChanged: boolean): void {
    if (this.modifiedOnSave === 'always' || postFieldsChanged) this.touch(order);
    this.onOrderEvent?.(order, 'updated');
  }

  /** `orderKey` lets the generator stay deterministic; otherwise it is random, as wc_generate_order_key. */
  createOrder(seed: ParsedSeed, orderKey?: string): StoredOrder {
    const createdAt = seed.dateCreatedGmt === undefined ? this.nowSec() : parseGmtSeed(seed.dateCreatedGmt)!;
    const modifiedAt = seed.dateModifiedGmt === undefined ? createdAt : parseGmtSeed(seed.dateModifiedGmt)!;
    const status = seed.status ?? 'processing';
    const billing = { ...BILLING_DEFAULTS, ...seed.billing };
    const { email: _email, ...billingAddress } = billing;
    const order: StoredOrder = {
      id: this.nextOrderId++,
      status,
      currency: seed.currency ?? DEFAULTS.currency,
      createdAt,
      modifiedAt,
      paidAt: PAID_STATUSES.has(status) ? createdAt : null,
      completedAt: status === 'completed' ? createdAt : null,
      customerNote: seed.customerNote ?? '',
      billing,
      shipping: { ...billingAddress, phone: '', ...seed.shipping },
      lineItems: seed.lineItems.map((item) => ({
        id: this.nextLineItemId++,
        name: item.name ?? item.sku,
        productId: this.productFor(item),
        sku: item.sku,
        quantity: item.quantity,
        price: item.price ?? '10.00',
      })),
      shippingTotal: seed.shippingTotal ?? '5.00',
      shippingMethod: { ...(seed.shippingMethod ?? DEFAULTS.shippingMethod) },
      orderKey: orderKey ?? `wc_order_${randomBytes(7).toString('base64url').slice(0, 13)}`,
      meta: [],
      notes: [],
      tracking: [],
      trackingMetaId: null,
      statusHistory: [],
      emails: [],
    };
    this.orders.set(order.id, order);
    this.onOrderEvent?.(order, 'created');
    return order;
  }

  /** Everything the store holds, as plain data (persistence.ts keeps it across restarts). */
  snapshot(): WooStoreSnapshot {
    return {
      orders: [...this.orders.values()],
      products: [...this.products.values()],
      next: {
        order: this.nextOrderId,
        product: this.nextProductId,
        note: this.nextNoteId,
        lineItem: this.nextLineItemId,
        meta: this.nextMetaId,
      },
    };
  }

  /** Reads a snapshot back into an empty store. */
  restore(snapshot: WooStoreSnapshot): void {
    for (const order of snapshot.orders) this.orders.set(order.id, order);
    for (const product of snapshot.products) this.products.set(product.id, product);
    ({
      order: this.nextOrderId,
      product: this.nextProductId,
      note: this.nextNoteId,
      lineItem: this.nextLineItemId,
      meta: this.nextMetaId,
    } = snapshot.next);
  }

  /** The product a seed line points at: its productId, else the one made for its sku. */
  private productFor(item: ParsedSeed['lineItems'][number]): number {
    const existing = [...this.products.values()].find((p) => (item.productId !== undefined ? p.id === item.productId : p.sku === item.sku));
    if (existing) return existing.id;
    const id = item.productId ?? this.nextProductId;
    this.nextProductId = Math.max(this.nextProductId, id + 1);
    this.products.set(id, {
      id,
      name: item.name ?? item.sku,
      sku: item.sku,
      price: item.price ?? '10.00',
      weight: item.weight ?? weightOf(item.sku),
      dimensions: item.dimensions ?? { length: '20', width: '15', height: '10' },
    });
    return id;
  }
}

export interface WooStoreSnapshot {
  orders: StoredOrder[];
  products: StoredProduct[];
  next: { order: number; product: number; note: number; lineItem: number; meta: number };
}
