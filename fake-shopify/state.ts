/** What one running fake knows: its orders, tokens, cost bucket, faults, webhooks and counters. */
import { Tokens } from './auth';
import { BucketSettings, LeakyBucket } from './bucket';
import { DEFAULTS, SHOP } from './defaults';
import { FaultInjector } from './faults';
import { GenerateOptionsSchema, generatedSeeds } from './generate';
import { InvalidInputError, parseOrThrow } from './invalid';
import type { OrderRecord } from './model';
import { holdOrder, refundOrder, releaseHold } from './holds-and-refunds';
import { fulfillmentOrderMove, type MoveLineInput } from './fo-move';
import { cancelOrder, closeOrder, editOrder } from './order-edits';
import { SeedOrderSchema } from './seed';
import { emptyStats } from './stats';
import { Store } from './store';
import type { FakeOrderView, FakeShopifyOptions } from './types';
import { orderView } from './view';
import { fireWebhooksOnChanges } from './webhook-triggers';
import { WebhookEmitter, WebhookSettings } from './webhooks';

const SCOPES = [
  'read_orders',
  'write_orders',
  'read_merchant_managed_fulfillment_orders',
  'write_merchant_managed_fulfillment_orders',
  'read_fulfillments',
  'write_fulfillments',
];

/** The fields that are set: an explicit `undefined` keeps the default. */
function defined<T extends object>(partial: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(partial ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export class ShopifyState {
  readonly now: () => number;
  readonly store: Store;
  readonly tokens: Tokens;
  readonly bucket: LeakyBucket;
  readonly faults: FaultInjector;
  readonly throttleAs: 'graphql-200' | 'http-429';
  readonly shopName: string;
  readonly webhooks: WebhookEmitter;
  stats = emptyStats();

  constructor(options: FakeShopifyOptions) {
    this.now = options.now ?? Date.now;
    const days = options.orderVisibilityDays === undefined ? DEFAULTS.orderVisibilityDays : options.orderVisibilityDays;
    this.store = new Store(this.now, days);
    this.tokens = new Tokens({
      accessToken: options.accessToken ?? DEFAULTS.accessToken,
      clientId: options.clientId ?? DEFAULTS.clientId,
      clientSecret: options.clientSecret ?? DEFAULTS.clientSecret,
      tokenLifetimeSeconds: options.tokenLifetimeSeconds ?? DEFAULTS.tokenLifetimeSeconds,
      scope: [...SCOPES, ...(days === null ? ['read_all_orders'] : [])].join(','),
      now: this.now,
    });
    this.bucket = new LeakyBucket(parseOrThrow(BucketSettings, 'bucket', options.bucket ?? DEFAULTS.bucket), this.now);
    this.faults = new FaultInjector(options.seed ?? DEFAULTS.seed);
    this.throttleAs = options.throttleAs ?? DEFAULTS.throttleAs;
    this.shopName = options.shopName ?? DEFAULTS.shopName;
    this.webhooks = new WebhookEmitter({
      settings: parseOrThrow(WebhookSettings, 'webhooks', { ...DEFAULTS.webhooks, ...defined(options.webhooks) }),
      defaultSecret: options.clientSecret ?? DEFAULTS.clientSecret,
      shopDomain: SHOP.myshopifyDomain,
      apiVersion: DEFAULTS.apiVersion,
      faults: this.faults,
      now: this.now,
      stats: () => this.stats.webhooks,
      stamp: () => this.store.stamp(),
    });
    fireWebhooksOnChanges(this.store, this.webhooks);
  }

  /** Validates a seed (throws InvalidInputError naming the field) and adds the order. */
  createOrder(seed: unknown): OrderRecord {
    return this.store.create(parseOrThrow(SeedOrderSchema, 'seed order', seed));
  }

  /** Validates the options and adds the generated orders, in creation order. */
  generateOrders(options: unknown): OrderRecord[] {
    const parsed = parseOrThrow(GenerateOptionsSchema, 'generate options', options);
    return generatedSeeds(parsed, this.now()).map((seed) => this.store.create(seed));
  }

  /** An order by global or legacy id, visible or not; InvalidInputError naming `id` otherwise. */
  existingOrder(id: string): OrderRecord {
    const order = this.store.anyOrder(id);
    if (!order) throw new InvalidInputError('order', [{ field: 'id', message: `no order ${id}` }]);
    return order;
  }

  editOrder(id: string, edit: unknown): OrderRecord {
    const order = this.existingOrder(id);
    editOrder(this.store, order, edit);
    return order;
  }

  cancelOrder(id: string): OrderRecord {
    const order = this.existingOrder(id);
    cancelOrder(this.store, order);
    return order;
  }

  closeOrder(id: string): OrderRecord {
    const order = this.existingOrder(id);
    closeOrder(this.store, order);
    return order;
  }

  /** A merchant's fulfillmentOrderMove (fo-move.ts); its userErrors thrown as InvalidInputError. */
  moveFulfillmentOrder(fulfillmentOrderId: string, newLocationId: string, lines?: MoveLineInput[]): OrderRecord {
    const result = fulfillmentOrderMove(this.store, fulfillmentOrderId, newLocationId, lines);
    if (result.userErrors.length > 0)
      throw new InvalidInputError(
        'move',
        result.userErrors.map((e) => ({ field: (e.field ?? []).join('.'), message: e.message })),
      );
    return this.store.order(result.originalFulfillmentOrder!.orderId)!;
  }

  holdOrder(id: string, request: unknown): OrderRecord {
    const order = this.existingOrder(id);
    holdOrder(this.store, order, request);
    return order;
  }

  releaseHold(id: string, request: unknown): OrderRecord {
    const order = this.existingOrder(id);
    releaseHold(this.store, order, request);
    return order;
  }

  refundOrder(id: string, request: unknown): OrderRecord {
    const order = this.existingOrder(id);
    refundOrder(this.store, order, request);
    return order;
  }

  view(order: OrderRecord): FakeOrderView {
    return orderView(order, this.store.visible(order));
  }
}
