/**
 * The project's own Prometheus metrics (prom-client), in one registry the health server serves
 * on `/metrics`, with the Node process metrics the SDK does not export. The SDK's metrics (task
 * latencies, slots, pollers) stay on their own endpoint (METRICS_BIND_ADDRESS). The SDK's
 * metricMeter could carry these counters too, but only to that endpoint when it is on, and it
 * cannot be read back in-process.
 *
 * Counted by the worker's activity interceptor (activity-interceptor.ts) from what the activities
 * return or throw, so the activities stay free of metrics code. Label values come from closed
 * sets (activity types, error kinds, couriers, tracking tags) to keep the series count bounded.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { shopLabels } from './shop-labels';

export const registry = new Registry();
// Process CPU, memory, event loop lag and GC of the worker process: the figures docs/configuration.md's
// sizing section is about.
collectDefaultMetrics({ register: registry });

export const labelsCreated = new Counter({
  name: 'shipping_labels_created_total',
  help: 'createLabel calls that returned a label (an idempotent replay of a lost answer counts again).',
  labelNames: ['courier'] as const,
  registers: [registry],
});

/** Label rejections that wait for corrected data: the courier's (courier_error) or the API's validation. */
export const labelsRejected = new Counter({
  name: 'shipping_labels_rejected_total',
  help: 'createLabel calls the courier or the API rejected (the shipment waits for corrected label data).',
  labelNames: ['courier', 'kind'] as const,
  registers: [registry],
});

export const rateLimited = new Counter({
  name: 'shipping_api_rate_limited_total',
  help: 'HTTP 429 answers received (RateLimited activity failures), by activity: the shipping API pacing the worker.',
  labelNames: ['activity'] as const,
  registers: [registry],
});

export const apiCalls = new Counter({
  name: 'shipping_api_calls_total',
  help: 'Attempts of the activities that call the shipping API, by activity, whatever they end with: the denominator of the 429 share.',
  labelNames: ['activity'] as const,
  registers: [registry],
});

export type AccountAnswer = 'ok' | 'rate_limited' | 'error';
const ACCOUNT_ANSWERS: readonly AccountAnswer[] = ['ok', 'rate_limited', 'error'];

/**
 * Every shipping API call, by account: each poll of a tracking poller's span counts (the
 * activity counters above count its attempt once), so this is the 429 share an account sees.
 */
export const accountAnswers = new Counter({
  name: 'shipping_api_answers_total',
  help: "Shipping API calls by shipping account and answer: ok, rate_limited (429), error (any other failure, network included). Counted per call, a tracking poller span's polls each.",
  labelNames: ['account', 'answer'] as const,
  registers: [registry],
});

/**
 * 1 while this worker paces an account alone because the account workflow has answered none of its
 * pace reports for 10 s (pacing/fleet-rate-limit.ts): the fleet's one rate does not reach it.
 */
export const paceAlone = new Gauge({
  name: 'shipping_api_pace_alone',
  help: "1 while this worker paces the shipping account alone: the account workflow has answered none of its pace reports for 10 s, so the fleet's one rate does not reach it.",
  labelNames: ['account'] as const,
  registers: [registry],
});

/** The configured accounts (names from the worker's configuration, a closed set), their series at 0 from the start. */
export function knownAccounts(accounts: readonly string[]): void {
  for (const account of accounts) {
    for (const answer of ACCOUNT_ANSWERS) accountAnswers.inc({ account, answer }, 0);
    paceAlone.set({ account }, 0);
  }
}

export function recordPaceAlone(account: string, alone: boolean): void {
  paceAlone.set({ account }, alone ? 1 : 0);
}

export function recordAccountAnswer(account: string, answer: AccountAnswer): void {
  accountAnswers.inc({ account, answer });
}

export const trackingCompleted = new Counter({
  name: 'shipping_tracking_completed_total',
  help: 'Tracking polls that reached a terminal tag (the shipment ends with that outcome), by outcome and tag.',
  labelNames: ['outcome', 'tag'] as const,
  registers: [registry],
});

export type ShopDeliveryResult = 'delivered' | 'failed' | 'gone' | 'retry';

export const shopDeliveries = new Counter({
  name: 'shop_deliveries_total',
  help: 'Shipment events sent to shops, by shop (a configured one, else other): delivered, failed (given up), gone (the shop endpoint is gone), retry (an attempt that will be retried).',
  labelNames: ['shop', 'result'] as const,
  registers: [registry],
});

const SHOP_DELIVERY_RESULTS = ['delivered', 'failed', 'gone', 'retry'] as const;

/** One shop delivery outcome (or `count` of them). */
export function recordShopDelivery(result: ShopDeliveryResult, shop: string, count = 1): void {
  if (count > 0) shopDeliveries.inc({ shop: shopLabels.label(shop), result }, count);
}

export type ShopPullResult = 'ok' | 'failed';

export const shopPulls = new Counter({
  name: 'shop_pulls_total',
  help: "Calls of a shop's order pull (pullShopOrders), by shop: ok, or failed (each failed attempt, retried or not).",
  labelNames: ['shop', 'result'] as const,
  registers: [registry],
});

export function recordShopPull(result: ShopPullResult, shop: string): void {
  shopPulls.inc({ shop: shopLabels.label(shop), result });
}

/** The configured shops become label values, their series at 0 from the start (alerts see the first event). */
export function knownShops(shops: readonly string[]): void {
  shopLabels.replace(shops);
  for (const shop of [...shopLabels.values(), 'other']) {
    for (const result of SHOP_DELIVERY_RESULTS) shopDeliveries.inc({ shop, result }, 0);
    for (const result of ['ok', 'failed'] as const) shopPulls.inc({ shop, result }, 0);
  }
}

/** The activities that call the shipping API (their 429s are counted). */
export const SHIPPING_API_ACTIVITIES = ['createLabel', 'readOrder', 'getTracking', 'awaitTrackingChange', 'pollTrackingSpan'] as const;

// Series with closed label sets exist from the start at 0 rather than being absent, so rate()
// and alerts see the first event.
for (const activity of SHIPPING_API_ACTIVITIES) {
  rateLimited.inc({ activity }, 0);
  apiCalls.inc({ activity }, 0);
}
knownShops([]);

/** Workflows whose payloads reached a worker with keys unencrypted (metrics/payloads-in-clear.ts). */
export const workflowsInClear = new Counter({
  name: 'workflows_in_clear_total',
  help: 'Workflows whose payloads reached this worker unencrypted although it has PAYLOAD_ENCRYPTION_KEYS (started, signalled or updated by a client without them): their names, addresses and phones are in clear in Temporal. Each counted once per worker process.',
  registers: [registry],
});
