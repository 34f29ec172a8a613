/**
 * The demo's shops: those the example order files name, so every example order reaches a shop:
 * the platform shops (examples/platform-orders.ndjson) their fake store, the others the shop page.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseCsv } from '../order-import/csv';
import { REPO_ROOT } from './temporal-cli';

/** The shops of examples/platform-orders.ndjson, wired by npm run dev to the fake Shopify and WooCommerce stores. */
export const PLATFORM_SHOPS = { shopify: 'oslo-outdoor', woocommerce: 'porto-wines' } as const;

/** The example files' shops that are not platform shops. */
export function exampleShops(): string[] {
  const dir = path.join(REPO_ROOT, 'examples');
  const shops = new Set<string>();
  for (const line of fs.readFileSync(path.join(dir, 'orders.ndjson'), 'utf8').split('\n')) {
    try {
      const shop = (JSON.parse(line) as { shop?: unknown }).shop;
      if (typeof shop === 'string' && shop !== '') shops.add(shop);
    } catch {
      // the examples hold broken records on purpose
    }
  }
  const [header, ...rows] = parseCsv(fs.readFileSync(path.join(dir, 'orders.csv'), 'utf8'));
  const column = header?.fields.indexOf('shop') ?? -1;
  for (const row of rows) {
    const shop = row.fields[column];
    if (column >= 0 && shop) shops.add(shop);
  }
  return [...shops].sort();
}
