/** The fake Shopify Admin API: start it, seed or generate orders, edit them, subscribe webhooks, steer faults and the cost bucket. */
export { startFakeShopify } from './server';
export type { FakeOrderView, FakeShopify, FakeShopifyOptions } from './types';
export type { SeedOrder } from './seed';
export type { FakeShopifyStats, WebhookStats } from './stats';
export type { GenerateOptions } from './generate';
export type { OrderEdit } from './order-edits';
export type { WebhookSettings, WebhookSubscription, WebhookSubscriptionView, WebhookTopic } from './webhooks';
export type { FailKind, FailNextEntry, ShopifyFaults, ShopifyFaultsPatch } from './faults';
export type { BucketSettings, ThrottleStatus } from './bucket';
export { FAIL_KINDS, ShopifyFaultsPatchSchema } from './faults';
export { SeedOrderSchema } from './seed';
export { GenerateOptionsSchema } from './generate';
export { OrderEditSchema } from './order-edits';
export { WEBHOOK_TOPICS, WebhookSubscribeSchema } from './webhooks';
export { InvalidInputError } from './invalid';
export { KNOWN_CARRIERS } from './carriers';
export { DEFAULTS as FAKE_SHOPIFY_DEFAULTS, LOCATION_IDS, LIMITS as FAKE_SHOPIFY_LIMITS } from './defaults';
