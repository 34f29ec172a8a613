/** The fake WooCommerce store: start it, seed it, steer its faults, observe it. See server.ts. */
export { startFakeWooCommerce } from './server';
export { DEFAULTS as FAKE_WOO_DEFAULTS, ORDER_STATUSES } from './defaults';
export { FAIL_NEXT_KINDS, InvalidWooFaultsError, WooFaultsPatchSchema } from './faults';
export type { FailNextEntry, FailNextKind, WooFaults, WooFaultsPatch } from './faults';
export { PROVIDERS } from './providers';
export { ROUTE_KEYS } from './router';
export type { RouteKey } from './router';
export { demoSeeds, InvalidSeedError, SeedOrderSchema } from './seed';
export type { SeedOrder } from './seed';
export type {
  FakeWooCommerce,
  FakeWooCommerceOptions,
  FakeWooEmail,
  FakeWooOrderView,
  FakeWooStats,
  FakeWooTrackingItemView,
} from './types';
