/** What one running fake knows: its orders, tokens, cost bucket, faults and counters. */
import { Tokens } from './auth';
import { BucketSettings, LeakyBucket } from './bucket';
import { DEFAULTS } from './defaults';
import { FaultInjector } from './faults';
import { parseOrThrow } from './invalid';
import type { OrderRecord } from './model';
import { SeedOrderSchema } from './seed';
import { emptyStats } from './stats';
import { Store } from './store';
import type { FakeOrderView, FakeShopifyOptions } from './types';
import { orderView } from './view';

const SCOPES = [
  'read_orders',
  'write_orders',
  'read_merchant_managed_fulfillment_orders',
  'write_merchant_managed_fulfillment_orders',
  'read_fulfillments',
  'write_fulfillments',
];

export class ShopifyState {
  readonly now: () => number;
  readonly store: Store;
  readonly tokens: Tokens;
  readonly bucket: LeakyBucket;
  readonly faults: FaultInjector;
  readonly throttleAs: 'graphql-200' | 'http-429';
  readonly shopName: string;
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
  }

  /** Validates a seed (throws InvalidInputError naming the field) and adds the order. */
  createOrder(seed: unknown): OrderRecord {
    return this.store.create(parseOrThrow(SeedOrderSchema, 'seed order', seed));
  }

  view(order: OrderRecord): FakeOrderView {
    return orderView(order, this.store.visible(order));
  }
}
