/**
 * The orders of one fake store, their fulfillment orders and fulfillments, with lookups by
 * global id (or legacy numeric id for the admin side) and the 60-day visibility window.
 */
import { DEFAULT_ADDRESS, LOCATION_IDS } from './defaults';
import {
  gid,
  isoSeconds,
  laterStamp,
  money,
  parseGid,
  type FoLineRecord,
  type FulfillmentOrderRecord,
  type FulfillmentRecord,
  type GidType,
  type LineItemRecord,
  type OrderRecord,
  type ShippingLineRecord,
} from './model';
import type { ParsedSeed } from './seed';

/**
 * Each kind of id counts from its own base, so a connector that sends an order id where a
 * fulfillment order id belongs gets "does not exist" instead of hitting another record.
 */
const ID_BASE: Record<GidType, number> = {
  Order: 5_500_000_001,
  FulfillmentOrder: 6_600_000_001,
  FulfillmentOrderLineItem: 7_700_000_001,
  LineItem: 8_800_000_001,
  Fulfillment: 4_400_000_001,
  FulfillmentEvent: 3_300_000_001,
  ShippingLine: 2_200_000_001,
};

/**
 * What a change listener hears: an order created (complete), changed in place, cancelled,
 * refunded, or fulfillment orders placed on hold or released.
 */
export type OrderChange = 'created' | 'updated' | 'cancelled' | 'refunded' | 'placed_on_hold' | 'hold_released';

export class Store {
  private readonly orders = new Map<string, OrderRecord>();
  private readonly fos = new Map<string, FulfillmentOrderRecord>();
  private readonly fulfillments = new Map<string, FulfillmentRecord>();
  private readonly next = { ...ID_BASE };
  private nextNumber = 1001;
  /** Told of every created order and every change (the webhook emitter listens here). */
  onChange: ((order: OrderRecord, change: OrderChange) => void) | null = null;

  constructor(
    private readonly now: () => number,
    private readonly visibilityDays: number | null,
  ) {}

  /** A fresh id of a kind: the global id and its number. */
  newId(type: GidType): { id: string; legacy: string } {
    const n = this.next[type]++;
    return { id: gid(type, n), legacy: String(n) };
  }

  stamp(): string {
    return isoSeconds(this.now());
  }

  create(seed: ParsedSeed): OrderRecord {
    const { id, legacy } = this.newId('Order');
    const createdAt = seed.createdAt ?? this.stamp();
    const lineItems: LineItemRecord[] = seed.lineItems.map((l) => ({
      id: this.newId('LineItem').id,
      sku: l.sku,
      title: l.title ?? `Item ${l.sku}`,
      quantity: l.quantity,
      grams: l.grams ?? 500,
      price: money(l.price ?? '10.00'),
    }));
    const order: OrderRecord = {
      id,
      legacyResourceId: legacy,
      name: seed.name ?? `#${this.nextNumber++}`,
      email: seed.email ?? 'customer@example.com',
      note: seed.note ?? null,
      tags: seed.tags ?? [],
      createdAt,
      updatedAt: seed.updatedAt ?? createdAt,
      closed: false,
      closedAt: null,
      cancelledAt: null,
      currency: seed.currency ?? 'EUR',
      financialStatus: seed.financialStatus ?? 'PAID',
      shippingLine: this.shippingLine(seed.shippingLine),
      shippingAddress: { ...DEFAULT_ADDRESS, ...seed.shippingAddress },
      lineItems,
      fulfillmentOrders: [],
      fulfillments: [],
    };
    const first = seed.locationId ?? LOCATION_IDS[0];
    const groups = seed.fulfillmentOrderCount
      ? takingTurns(lineItems, seed.fulfillmentOrderCount)
      : seed.splitLocations
        ? splitInHalves(lineItems)
        : [lineItems];
    groups.forEach((lines, i) => {
      const locationId = i % 2 === 0 ? first : LOCATION_IDS.find((l) => l !== first)!;
      this.addFo(order, lines, locationId, seed.fulfillmentOrderStatus ?? 'OPEN', seed.deliveryMethod ?? 'SHIPPING');
    });
    this.orders.set(id, order);
    this.onChange?.(order, 'created');
    return order;
  }

  private shippingLine(seed: ParsedSeed['shippingLine']): ShippingLineRecord | null {
    if (seed === null) return null;
    const title = seed?.title ?? 'Standard';
    // Without a code, the slug of the title ("Express" → "express"), as manual rates often look.
    const code = seed?.code === undefined ? title.toLowerCase().replace(/\s+/g, '-') : seed.code;
    return { id: this.newId('ShippingLine').id, title, code, price: money(seed?.price ?? '0.00') };
  }

  private addFo(
    order: OrderRecord,
    lines: LineItemRecord[],
    locationId: string,
    status: FulfillmentOrderRecord['status'],
    deliveryMethod: FulfillmentOrderRecord['deliveryMethod'],
  ): void {
    const foLines: FoLineRecord[] = lines.map((lineItem) => ({
      id: this.newId('FulfillmentOrderLineItem').id,
      lineItem,
      totalQuantity: lineItem.quantity,
      remainingQuantity: lineItem.quantity,
    }));
    const fo: FulfillmentOrderRecord = {
      id: this.newId('FulfillmentOrder').id,
      orderId: order.id,
      status,
      locationId,
      deliveryMethod,
      lines: foLines,
      createdAt: order.createdAt,
      updatedAt: order.updatedAt,
    };
    order.fulfillmentOrders.push(fo);
    this.fos.set(fo.id, fo);
  }

  /** A fulfillment order made after the order's creation (fulfillmentOrderMove's moved one). */
  addFulfillmentOrder(order: OrderRecord, fo: FulfillmentOrderRecord): void {
    order.fulfillmentOrders.push(fo);
    this.fos.set(fo.id, fo);
  }

  addFulfillment(order: OrderRecord, fulfillment: FulfillmentRecord): void {
    order.fulfillments.push(fulfillment);
    this.fulfillments.set(fulfillment.id, fulfillment);
  }

  /**
   * Bumps updatedAt of the order and of the FOs given: every change does. Never backwards, even
   * when a test turns the clock back: an import's updated_at cursor relies on it.
   */
  touch(order: OrderRecord, fos: FulfillmentOrderRecord[] = []): void {
    const at = laterStamp(this.stamp(), order.updatedAt);
    order.updatedAt = at;
    for (const fo of fos) fo.updatedAt = laterStamp(at, fo.updatedAt);
    this.onChange?.(order, 'updated');
  }

  /** Every order, in creation order, the invisible ones too (admin side). */
  all(): OrderRecord[] {
    return [...this.orders.values()];
  }

  /** Whether the app may see the order: created within the visibility window. */
  visible(order: OrderRecord): boolean {
    if (this.visibilityDays === null) return true;
    return Date.parse(order.createdAt) >= this.now() - this.visibilityDays * 86_400_000;
  }

  /** An order by global id or legacy number, visible or not (admin side). */
  anyOrder(id: string): OrderRecord | undefined {
    return this.orders.get(/^\d+$/.test(id) ? gid('Order', id) : id);
  }

  order(id: string): OrderRecord | undefined {
    return this.visibleOnly(this.orders.get(id));
  }

  fulfillmentOrder(id: string): FulfillmentOrderRecord | undefined {
    const fo = this.fos.get(id);
    return fo && this.order(fo.orderId) ? fo : undefined;
  }

  fulfillment(id: string): FulfillmentRecord | undefined {
    const f = this.fulfillments.get(id);
    return f && this.order(f.orderId) ? f : undefined;
  }

  /** The record a global id names, when the app may see it (for Query.node and tagsAdd). */
  node(id: string): { type: string; record: OrderRecord | FulfillmentOrderRecord | FulfillmentRecord } | undefined {
    const parsed = parseGid(id);
    const record =
      parsed?.type === 'Order'
        ? this.order(id)
        : parsed?.type === 'FulfillmentOrder'
          ? this.fulfillmentOrder(id)
          : parsed?.type === 'Fulfillment'
            ? this.fulfillment(id)
            : undefined;
    return record && parsed ? { type: parsed.type, record } : undefined;
  }

  private visibleOnly(order: OrderRecord | undefined): OrderRecord | undefined {
    return order && this.visible(order) ? order : undefined;
  }

  /** Everything the store holds, as plain data (persistence.ts keeps it across restarts). */
  snapshot(): ShopifyStoreSnapshot {
    return { orders: this.all(), next: { ...this.next }, nextNumber: this.nextNumber };
  }

  /** Reads a snapshot back into an empty store: a fulfillment order's line is its order's line item again. */
  restore(snapshot: ShopifyStoreSnapshot): void {
    for (const order of snapshot.orders) {
      const lineItems = new Map(order.lineItems.map((l) => [l.id, l]));
      for (const fo of order.fulfillmentOrders) {
        for (const line of fo.lines) line.lineItem = lineItems.get(line.lineItem.id) ?? line.lineItem;
        this.fos.set(fo.id, fo);
      }
      for (const f of order.fulfillments) this.fulfillments.set(f.id, f);
      this.orders.set(order.id, order);
    }
    Object.assign(this.next, snapshot.next);
    this.nextNumber = snapshot.nextNumber;
  }
}

export interface ShopifyStoreSnapshot {
  orders: OrderRecord[];
  next: Record<GidType, number>;
  nextNumber: number;
}

/** The seed's fulfillmentOrderCount: line i to group i mod count (empty groups are dropped). */
function takingTurns<T>(items: T[], count: number): T[][] {
  const groups = Array.from({ length: count }, (): T[] => []);
  items.forEach((item, i) => groups[i % count]!.push(item));
  return groups.filter((g) => g.length > 0);
}

/** The seed's splitLocations: the first half of the lines (rounded up), then the rest. */
function splitInHalves<T>(items: T[]): T[][] {
  const cut = Math.ceil(items.length / 2);
  return items.length > 1 ? [items.slice(0, cut), items.slice(cut)] : [items];
}
