/**
 * WooCommerce orders changed since a time, oldest change first: `processing` ones need a label,
 * and on-hold, cancelled and refunded ones tell a known order's shipment what the merchant did
 * (CHANGES_READ). Dates go as UTC with `dates_are_gmt=true` (without it WooCommerce compares against the
 * store's local time) and are read back from `date_modified_gmt`. WooCommerce pages by offset, and
 * an order changed between two page requests shifts every later one: a page offset would skip an
 * order. So each page starts again from the newest change seen (keyset), leaving out the orders
 * already read at that second. Line weights come from the products, read once per worker and kept
 * for ten minutes. Each order is checked on its own (domain/platform-order-checks.ts): one that fails is refused, the
 * rest of the page goes on.
 */
import { z } from 'zod';
import type { WooClient } from './client';
import type { ShopOrderStatus } from '../../domain/shop-order';
import { modifiedTime, ORDER_LIMITS, refused, refusedOrder, StoreCurrency, StoreText } from '../../domain/platform-order-checks';
import { isRefused, type PlatformAddress, type PlatformOrder, type ReadOrder } from '../../domain/platform-order';
import { readStamp } from '../read-clock';

const Text = StoreText();
const Short = StoreText(100);
/** WordPress ids are database row ids; one past 2^53 has already lost its last digits in JSON. */
const RowId = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

const Address = z.object({
  first_name: Text.default(''),
  last_name: Text.default(''),
  company: Text.default(''),
  address_1: Text.default(''),
  address_2: Text.default(''),
  city: Text.default(''),
  state: Short.default(''),
  postcode: Short.default(''),
  country: Short.default(''),
  phone: Short.optional(),
});

const WooOrder = z.object({
  id: RowId.positive(),
  number: StoreText(ORDER_LIMITS.nameChars),
  status: Short,
  currency: StoreCurrency,
  date_modified_gmt: z.string().max(40),
  billing: Address.extend({ email: Text.nullable().optional() }),
  shipping: Address,
  shipping_lines: z.array(z.object({ method_id: Short, method_title: Text })).max(100),
  line_items: z
    .array(
      z.object({
        name: Text,
        sku: Text.nullable(),
        product_id: RowId,
        variation_id: RowId,
        // Whole units (a decimal-quantity plugin's 1.5 is refused: a label needs whole items).
        quantity: z.number().int('must be a whole number of items').min(1).max(ORDER_LIMITS.quantity),
        price: z.union([z.number(), z.string().max(40)]),
      }),
    )
    .max(ORDER_LIMITS.lines),
});
type WooOrder = z.infer<typeof WooOrder>;

const Product = z.object({ weight: z.string().max(40).nullable().optional(), virtual: z.boolean().optional() });

/** Where the next page starts: after `after` (UTC ISO), leaving out the orders already read at its last two seconds. */
export interface WooPosition {
  after: string;
  exclude: number[];
}

/** A crowded second's ids beyond this go by page number instead (a URL stays under 8 KB). */
const MAX_EXCLUDED = 400;
const PRODUCT_TTL_MS = 10 * 60_000;

/** The statuses a pull's changes read; `completed` is left out (our own delivered status writes it). */
const CHANGES_READ = ['processing', 'on-hold', 'cancelled', 'refunded'];

/** WooCommerce's statuses as the merchant's intent; completed is ours (deliveredStatus) or shipped elsewhere. */
const MERCHANT_STATUS: Record<string, ShopOrderStatus> = {
  processing: 'open',
  completed: 'open',
  'on-hold': 'on_hold',
  pending: 'on_hold',
  failed: 'on_hold',
  cancelled: 'cancelled',
  trash: 'cancelled',
  refunded: 'refunded',
};

/** Methods that ship nothing: WooCommerce's own local pickup methods. */
const PICKUP_METHODS = new Set(['local_pickup', 'pickup_location']);

interface CachedProduct {
  weight: number | null;
  virtual: boolean;
  at: number;
}

export class WooOrderReader {
  private readonly products = new Map<string, CachedProduct>();

  constructor(
    private readonly client: WooClient,
    private readonly weightUnit: 'kg' | 'g' | 'lbs' | 'oz',
    private readonly now: () => number = Date.now,
  ) {}

  /** One page after `position`, and the position after it (null when the page was the last). */
  async page(position: WooPosition, perPage: number, signal: AbortSignal): Promise<{ orders: ReadOrder[]; next: WooPosition | null }> {
    const params = new URLSearchParams({
      // Beside the orders to label, those a merchant held, cancelled or refunded: change detection tells their shipments.
      status: CHANGES_READ.join(','),
      // One second back: whether modified_after includes its second is not documented.
      modified_after: gmtParam(Date.parse(position.after) - 1000),
      dates_are_gmt: 'true',
      orderby: 'modified',
      order: 'asc',
      per_page: String(perPage),
    });
    const excluded = position.exclude.slice(0, MAX_EXCLUDED);
    if (excluded.length > 0) params.set('exclude', excluded.join(','));
    if (position.exclude.length > MAX_EXCLUDED) params.set('offset', String(position.exclude.length - MAX_EXCLUDED));
    const readAt = readStamp(this.now());
    const { data } = await this.client.call('GET', `wc/v3/orders?${params.toString()}`, z.array(z.unknown()).max(100), signal);
    const orders = data ?? [];
    const read = await this.readEach(orders, signal, readAt);
    const fresh = read.filter((o) => !position.exclude.includes(Number(o.platformOrderId)));
    if (fresh.length === 0 || orders.length < perPage) return { orders: fresh, next: null };
    return { orders: fresh, next: advance(position, fresh) };
  }

  /** The orders of `ids` that still need a label (the retry list). */
  /** `processing`: the retry list (an order no longer to ship looks gone); `any`: an order as it is now, whatever its status. */
  async byIds(ids: readonly string[], signal: AbortSignal, status: 'processing' | 'any' = 'processing'): Promise<ReadOrder[]> {
    const read: ReadOrder[] = [];
    // 100 a request: WooCommerce's largest page (an id beyond it would look gone).
    for (let i = 0; i < ids.length; i += 100) {
      const params = new URLSearchParams({ status, include: ids.slice(i, i + 100).join(','), per_page: '100' });
      const readAt = readStamp(this.now());
      const { data } = await this.client.call('GET', `wc/v3/orders?${params.toString()}`, z.array(z.unknown()).max(100), signal);
      read.push(...(await this.readEach(data ?? [], signal, readAt)));
    }
    return read;
  }

  /** Each order checked on its own: one that fails is refused, the others are read. */
  private readEach(orders: unknown[], signal: AbortSignal, readAt: string): Promise<ReadOrder[]> {
    return Promise.all(
      orders.map(async (raw) => {
        const parsed = WooOrder.safeParse(raw);
        if (!parsed.success) return refusedOrder(raw, 'id', parsed.error);
        const order = await this.toPlatformOrder(parsed.data, signal);
        return isRefused(order) ? order : { ...order, readAt };
      }),
    );
  }

  private async toPlatformOrder(order: WooOrder, signal: AbortSignal): Promise<ReadOrder> {
    const modified = modifiedTime(order.date_modified_gmt, this.now(), true);
    if (!modified.ok) return refused(order, 'id', { field: 'date_modified_gmt', message: modified.message });
    const method = order.shipping_lines[0];
    const lines = await Promise.all(order.line_items.map((item) => this.line(item, signal)));
    const shipping = lines.filter((l) => l !== null);
    const pickup = method !== undefined && PICKUP_METHODS.has(method.method_id);
    const status = MERCHANT_STATUS[order.status] ?? 'on_hold';
    return {
      platformOrderId: String(order.id),
      name: order.number,
      number: order.number,
      modifiedAt: modified.value,
      shippingMethod: method ? { title: method.method_title, code: method.method_id } : null,
      currency: order.currency,
      email: order.billing.email || null,
      shipTo: order.shipping.country ? address(order.shipping, order.billing.phone) : null,
      shipFrom: null,
      lines: shipping,
      skip:
        order.status !== 'processing'
          ? `${order.status} in the shop`
          : pickup
            ? 'picked up in store'
            : shipping.length === 0
              ? 'only virtual items'
              : null,
      problem: null,
      merchant: {
        status,
        platformStatus: order.status,
        lines: order.line_items.map((item) => ({ item: item.sku || item.name, quantity: item.quantity, location: null })),
      },
    };
  }

  private async line(item: WooOrder['line_items'][number], signal: AbortSignal) {
    const product = await this.product(item.product_id, item.variation_id, signal);
    if (product?.virtual) return null;
    const price = Number(item.price);
    return {
      sku: item.sku || null,
      title: item.name,
      quantity: item.quantity,
      unitPrice: Number.isFinite(price) ? price : null,
      unitWeight: product?.weight ? { value: product.weight, unit: this.weightUnit === 'lbs' ? ('lb' as const) : this.weightUnit } : null,
    };
  }

  /** A variation's own weight, else its product's (WooCommerce's inheritance); cached. */
  private async product(productId: number, variationId: number, signal: AbortSignal): Promise<CachedProduct | null> {
    if (productId === 0) return null;
    const key = `${productId}/${variationId}`;
    const known = this.products.get(key);
    if (known && this.now() - known.at < PRODUCT_TTL_MS) return known;
    const path = variationId ? `wc/v3/products/${productId}/variations/${variationId}` : `wc/v3/products/${productId}`;
    const { data } = await this.client.call('GET', path, Product, signal, { expect: [404] });
    let weight = data?.weight ? Number(data.weight) : null;
    if (variationId && !weight) weight = (await this.product(productId, 0, signal))?.weight ?? null;
    const entry: CachedProduct = {
      weight: weight && Number.isFinite(weight) && weight > 0 ? weight : null,
      virtual: data?.virtual ?? false,
      at: this.now(),
    };
    this.products.set(key, entry);
    return entry;
  }
}

/**
 * The newest change read, and the orders read at it and the second before (they come again).
 * Refused orders have no time to go by: they are left out at the same position, so a page of
 * them cannot hold the pull in place.
 */
function advance(position: WooPosition, read: ReadOrder[]): WooPosition {
  const orders = read.filter((o): o is PlatformOrder => !isRefused(o));
  const refusedIds = read
    .filter(isRefused)
    .map((o) => Number(o.platformOrderId))
    .filter(Number.isSafeInteger);
  const newest = orders.reduce((max, o) => (o.modifiedAt > max ? o.modifiedAt : max), position.after);
  const floor = Date.parse(newest) - 1000;
  const recent = (ids: Array<{ id: number; at: string }>) => ids.filter((x) => Date.parse(x.at) >= floor).map((x) => x.id);
  const carried = newest === position.after ? [...position.exclude, ...refusedIds] : [];
  const fresh = recent(orders.map((o) => ({ id: Number(o.platformOrderId), at: o.modifiedAt })));
  return { after: newest, exclude: [...new Set([...carried, ...fresh])] };
}

/** `YYYY-MM-DDTHH:MM:SS` in UTC, as WooCommerce takes a date with dates_are_gmt. */
function gmtParam(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19);
}

function address(a: z.infer<typeof Address>, billingPhone: string | undefined): PlatformAddress {
  return {
    firstName: a.first_name || null,
    lastName: a.last_name || null,
    company: a.company || null,
    streetLines: [a.address_1, a.address_2].filter(Boolean),
    city: a.city || null,
    state: a.state || null,
    postalCode: a.postcode || null,
    countryCode: a.country || null,
    // Classic checkout does not ask for a shipping phone: the billing one is the customer's.
    phone: a.phone || billingPhone || null,
  };
}
