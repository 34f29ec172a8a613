/**
 * The fake Shopify store's orders (fulfillment orders, fulfillments, events, tags, notes) across
 * restarts (`--state-file`): see local-http/state-file.ts. Webhook subscriptions, faults, the
 * cost bucket and tokens are not kept: whoever starts the store sets them again.
 */
import { keepState, type StateFile } from '../local-http/state-file';
import type { ShopifyStoreSnapshot, Store } from './store';

export function keepOrders(file: string, store: Store, warn: (message: string) => void): StateFile {
  return keepState<ShopifyStoreSnapshot>(file, {
    what: 'fake Shopify store',
    version: 1,
    snapshot: () => store.snapshot(),
    restore: (snapshot) => store.restore(snapshot),
    warn,
  });
}
