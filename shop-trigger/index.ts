/** Platform webhooks as a trigger for a shop's pull: see server.ts and docs/shop-trigger.md. */
export { startShopTrigger } from './server';
export { verifySignature } from './verify';
export { SHOP_TRIGGER_DEFAULTS } from './types';
export type {
  ShopTrigger,
  ShopTriggerCounts,
  ShopTriggerOptions,
  ShopTriggerShopStats,
  ShopTriggerStats,
  TriggerContext,
  TriggerLogger,
  TriggerPlatform,
  TriggerShop,
} from './types';
