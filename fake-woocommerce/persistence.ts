/**
 * The fake WooCommerce store's orders (notes, tracking items, status history, emails) and
 * products across restarts (`--state-file`): see local-http/state-file.ts. Webhooks and faults
 * are not kept: whoever starts the store sets them again.
 */
import { keepState, type StateFile } from '../local-http/state-file';
import type { WooStore, WooStoreSnapshot } from './store';

export function keepOrders(file: string, store: WooStore, warn: (message: string) => void): StateFile {
  return keepState<WooStoreSnapshot>(file, {
    what: 'fake WooCommerce store',
    version: 1,
    snapshot: () => store.snapshot(),
    restore: (snapshot) => store.restore(snapshot),
    warn,
  });
}
