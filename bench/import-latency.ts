/**
 * From "placed in the store" to "label created", for orders placed one a second while the worker
 * idles: shops pulled by their schedule alone (every 30 s, the shortest interval) beside shops whose
 * platform webhooks also reach the worker's trigger endpoint (SHOP_TRIGGER_PORT). Each shop has a
 * store of its own, so one's pulls never find the other's orders; the label's time is the fake
 * shipping API's creation time of the label with that order's idempotency key.
 */
import { labelIdempotencyKey } from '../activities/shipping-api';
import { freePort } from '../dev-server/free-port';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import { triggerPull } from '../shop-import/schedule';
import { pullResult } from './import-pulls';
import { HOOK_SECRET, shopifyEntry, WOO_TIMEZONE, wooEntry } from './import-stores';
import { BENCH_ACCOUNTS, benchProcessEnv, ROOT, sleep, startDevServer, startWorkerProcess, type DevServer } from './stack';

export interface ImportLatencyRow {
  trigger: 'schedule every 30 s' | 'webhooks + schedule';
  platform: 'Shopify' | 'WooCommerce';
  orders: number;
  labelled: number;
  p50Seconds: number;
  p95Seconds: number;
  maxSeconds: number;
}

type Mode = 'schedule' | 'webhooks';
const MODES: Mode[] = ['schedule', 'webhooks'];
const WEEK_MS = 7 * 24 * 3600 * 1000;
/** After the last order, how long a label may take before it counts as not labelled. */
const DRAIN_MS = 90_000;

interface Placed {
  mode: Mode;
  platform: ImportLatencyRow['platform'];
  shop: string;
  orderId: string;
  at: number;
}

export interface ModeStores {
  shopify: FakeShopify;
  woo: FakeWooCommerce;
}

const shopOf = (mode: Mode, platform: 'shopify' | 'woo') => `latency-${mode}-${platform}`;

export async function latencyScenario(o: { orders: number; bundlePath: string }, log: (m: string) => void): Promise<ImportLatencyRow[]> {
  const server = await startDevServer();
  const api = await startFakeShippingApi({ port: 0, trackingStepMs: WEEK_MS, accounts: BENCH_ACCOUNTS });
  const stores: Record<Mode, ModeStores> = {
    schedule: { shopify: await startFakeShopify(), woo: await startFakeWooCommerce({ timezone: WOO_TIMEZONE, hpos: true }) },
    webhooks: { shopify: await startFakeShopify(), woo: await startFakeWooCommerce({ timezone: WOO_TIMEZONE, hpos: true }) },
  };
  const triggerPort = await freePort();
  const connectors: Record<string, unknown> = { maxBackoff: '5s' };
  for (const mode of MODES) {
    connectors[shopOf(mode, 'shopify')] = shopifyEntry(stores[mode].shopify.baseUrl, { every: '30s' });
    connectors[shopOf(mode, 'woo')] = wooEntry(stores[mode].woo.baseUrl, { every: '30s' });
  }
  const worker = startWorkerProcess(ROOT, {
    ...benchProcessEnv(server, `bench-import-latency-${Date.now()}`, api.baseUrl),
    WORKFLOW_BUNDLE_PATH: o.bundlePath,
    SHOP_CONNECTORS: JSON.stringify(connectors),
    SHOP_TRIGGER_HOST: '127.0.0.1',
    SHOP_TRIGGER_PORT: String(triggerPort),
  });
  try {
    const hooks = `http://127.0.0.1:${triggerPort}/hooks`;
    await listening(hooks);
    await subscribe(stores.webhooks, hooks);
    await warmUp(
      server,
      Object.keys(connectors).filter((k) => k !== 'maxBackoff'),
    );
    log(`import latency: ${o.orders} orders per trigger, one a second`);
    const placed = await placeOrders(stores, o.orders);
    const labelled = await labelTimes(api, placed);
    return rows(placed, labelled);
  } finally {
    await worker.stop();
    for (const mode of MODES) await Promise.all([stores[mode].shopify.close(), stores[mode].woo.close()]);
    await api.close();
    await server.stop();
  }
}

/** The worker serves the trigger once it runs (any answer will do). */
export async function listening(url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await (await fetch(url)).arrayBuffer();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`the worker's trigger did not listen at ${url}`, { cause: err });
      await sleep(250);
    }
  }
}

/** Both platforms' order webhooks, created and updated (as docs/shop-trigger.md registers them). */
export async function subscribe(
  stores: ModeStores,
  hooks: string,
  shops = { shopify: shopOf('webhooks', 'shopify'), woo: shopOf('webhooks', 'woo') },
) {
  for (const topic of ['orders/create', 'orders/updated'] as const) {
    stores.shopify.subscribeWebhook({ topic, address: `${hooks}/shopify/${shops.shopify}`, secret: HOOK_SECRET });
  }
  for (const topic of ['order.created', 'order.updated'] as const) {
    await stores.woo.createWebhook({ topic, deliveryUrl: `${hooks}/woocommerce/${shops.woo}`, secret: HOOK_SECRET });
  }
}

/** One pull of each shop first, so the orders meet a worker in its steady state. */
export async function warmUp(server: DevServer, shops: string[]): Promise<void> {
  const since = Date.now();
  await Promise.all(shops.map((shop) => triggerPull(server.client, shop)));
  for (const shop of shops) await pullResult(server.client, shop, since);
}

/** Order i, a second after order i − 1, in both modes' stores; Shopify and WooCommerce take turns. */
async function placeOrders(stores: Record<Mode, ModeStores>, orders: number): Promise<Placed[]> {
  const placed: Placed[] = [];
  const start = Date.now();
  for (let i = 0; i < orders; i++) {
    await sleep(Math.max(0, start + i * 1000 - Date.now()));
    for (const mode of MODES) {
      const at = Date.now();
      if (i % 2 === 0) {
        const order = stores[mode].shopify.createOrder({ lineItems: [{ sku: 'LAT-1', quantity: 1, grams: 500, price: '20.00' }] });
        placed.push({ mode, platform: 'Shopify', shop: shopOf(mode, 'shopify'), orderId: `S-${order.name.replace('#', '')}`, at });
      } else {
        const order = stores[mode].woo.createOrder({ status: 'processing', lineItems: [{ sku: 'LAT-1', quantity: 1, weight: '0.5' }] });
        placed.push({ mode, platform: 'WooCommerce', shop: shopOf(mode, 'woo'), orderId: `W-${order.number}`, at });
      }
    }
  }
  return placed;
}

/** Label creation time per placed order (by its idempotency key), waiting at most `drainMs` after the last order. */
export async function labelTimes<P extends { shop: string; orderId: string }>(
  api: FakeShippingApi,
  placed: P[],
  drainMs = DRAIN_MS,
): Promise<Map<P, number>> {
  const deadline = Date.now() + drainMs;
  for (;;) {
    const byKey = new Map(api.labels().map((l) => [l.idempotencyKey, Date.parse(l.createdAt)]));
    const found = new Map<P, number>();
    for (const p of placed) {
      const at = byKey.get(labelIdempotencyKey({ shop: p.shop, orderId: p.orderId, revision: 1 }));
      if (at !== undefined) found.set(p, at);
    }
    if (found.size === placed.length || Date.now() > deadline) return found;
    await sleep(500);
  }
}

function rows(placed: Placed[], labelled: Map<Placed, number>): ImportLatencyRow[] {
  const out: ImportLatencyRow[] = [];
  for (const mode of MODES) {
    for (const platform of ['Shopify', 'WooCommerce'] as const) {
      const mine = placed.filter((p) => p.mode === mode && p.platform === platform);
      const waits = mine.flatMap((p) => (labelled.has(p) ? [(labelled.get(p)! - p.at) / 1000] : [])).sort((a, b) => a - b);
      out.push({
        trigger: mode === 'schedule' ? 'schedule every 30 s' : 'webhooks + schedule',
        platform,
        orders: mine.length,
        labelled: waits.length,
        p50Seconds: percentile(waits, 0.5),
        p95Seconds: percentile(waits, 0.95),
        maxSeconds: round1(waits.at(-1) ?? NaN),
      });
    }
  }
  return out;
}

/** Nearest rank. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return round1(sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!);
}

const round1 = (n: number) => Math.round(n * 10) / 10;
