/** The fake WooCommerce store: start it, seed it, steer its faults, observe it. See server.ts. */
export { startFakeWooCommerce } from './server';
export { DEFAULTS as FAKE_WOO_DEFAULTS, ORDER_STATUSES, WEBHOOK_DEFAULTS as FAKE_WOO_WEBHOOK_DEFAULTS } from './defaults';
export { FAIL_NEXT_KINDS, InvalidWooFaultsError, WooFaultsPatchSchema } from './faults';
export type { FailNextEntry, FailNextKind, WooFaults, WooFaultsPatch } from './faults';
export {
  GenerateOrdersSchema,
  InvalidWooInputError,
  OrderEditSchema,
  WEBHOOK_STATUSES,
  WEBHOOK_TOPICS,
  WebhookInputSchema,
} from './inputs';
export type { FakeWooGenerateOptions, FakeWooOrderEdit, FakeWooWebhookInput } from './inputs';
export { PROVIDERS } from './providers';
export { ROUTE_KEYS } from './router';
export type { RouteKey } from './router';
export { demoSeeds, InvalidSeedError, SeedOrderSchema } from './seed';
export type { SeedOrder } from './seed';
export type { ModifiedOnSave, TrackingSave } from './types';
export type {
  FakeWooCommerce,
  FakeWooCommerceOptions,
  FakeWooEmail,
  FakeWooGenerated,
  FakeWooOrderView,
  FakeWooStats,
  FakeWooTrackingItemView,
  FakeWooWebhookDelivery,
  FakeWooWebhookOptions,
  FakeWooWebhookView,
} from './types';
export { phpJsonEncode, webhookSignature } from './webhook-send';
