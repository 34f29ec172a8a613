/** The fake Shopify Admin API: start it, seed orders, steer faults and the cost bucket. */
export { startFakeShopify } from './server';
export type { FakeOrderView, FakeShopify, FakeShopifyOptions } from './types';
export type { SeedOrder } from './seed';
export type { FakeShopifyStats } from './stats';
export type { FailKind, FailNextEntry, ShopifyFaults, ShopifyFaultsPatch } from './faults';
export type { BucketSettings, ThrottleStatus } from './bucket';
export { FAIL_KINDS, ShopifyFaultsPatchSchema } from './faults';
export { SeedOrderSchema } from './seed';
export { InvalidInputError } from './invalid';
export { KNOWN_CARRIERS } from './carriers';
export { DEFAULTS as FAKE_SHOPIFY_DEFAULTS, LOCATION_IDS, LIMITS as FAKE_SHOPIFY_LIMITS } from './defaults';
