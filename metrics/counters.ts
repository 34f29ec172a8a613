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
import { collectDefaultMetrics, Counter, Registry } from 'prom-client';

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

export const trackingCompleted = new Counter({
  name: 'shipping_tracking_completed_total',
  help: 'Tracking polls that reached a terminal tag (the shipment ends with that outcome), by outcome and tag.',
  labelNames: ['outcome', 'tag'] as const,
  registers: [registry],
});

export type ShopDeliveryResult = 'delivered' | 'failed' | 'gone' | 'retry';

export const shopDeliveries = new Counter({
  name: 'shop_deliveries_total',
  help: 'Shipment events sent to shops: delivered, failed (given up), gone (the shop endpoint is gone), retry (an attempt that will be retried).',
  labelNames: ['result'] as const,
  registers: [registry],
});

/**
 * One shop delivery outcome (or `count` of them). `shop` is not a label: one series per shop
 * would grow with the platform; it is accepted so callers report what they know.
 */
export function recordShopDelivery(result: ShopDeliveryResult, _shop: string, count = 1): void {
  if (count > 0) shopDeliveries.inc({ result }, count);
}

/** The activities that call the shipping API (their 429s are counted). */
export const SHIPPING_API_ACTIVITIES = ['createLabel', 'readOrder', 'getTracking', 'awaitTrackingChange', 'pollTrackingSpan'] as const;

// Series with closed label sets exist from the start at 0 rather than being absent, so rate()
// and alerts see the first event.
for (const activity of SHIPPING_API_ACTIVITIES) rateLimited.inc({ activity }, 0);
for (const result of ['delivered', 'failed', 'gone', 'retry'] as const) shopDeliveries.inc({ result }, 0);
