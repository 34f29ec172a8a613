/**
 * Shipment Tracking items, following the extension's own code: a provider name is stored as
 * its slug and shown by the provider's display name with a link from its template; a custom
 * provider's link is shown exactly as sent (no %1$s substitution); an unknown provider name is
 * stored without complaint and shown with an empty name and link. No dedupe: every POST adds.
 */
import { createHash } from 'node:crypto';
import { gmtWall, parseGmtSeed } from './clock';
import { findProvider, formatTemplate, normalizePostcode, sanitizeTitle } from './providers';
import type { StoredOrder, StoredTracking, WooStore } from './store';
import type { FakeWooTrackingItemView } from './types';

export interface TrackingInput {
  provider: string;
  customProvider: string;
  customLink: string;
  number: string;
  dateShipped: string;
}

let sequence = 0;

/**
 * strtotime as the extension calls it (PHP's zone is UTC under WordPress): a date or a date
 * and time, or `@<epoch>`; anything else (a bare number included) falls back to now.
 */
export function parseDateShipped(raw: string, nowSec: number): number {
  const s = raw.trim();
  if (/^\d{4}-\d{2}-\d{2}$/.test(s)) return parseGmtSeed(`${s}T00:00:00`) ?? nowSec;
  if (/^@\d+$/.test(s)) return Number(s.slice(1));
  return parseGmtSeed(s) || nowSec;
}

export function addTracking(store: WooStore, order: StoredOrder, input: TrackingInput): StoredTracking {
  const item: StoredTracking = {
    tracking_provider: sanitizeTitle(input.provider),
    custom_tracking_provider: input.customProvider,
    custom_tracking_link: input.customLink,
    tracking_number: input.number,
    date_shipped: parseDateShipped(input.dateShipped, store.nowSec()),
    tracking_id: '',
  };
  // md5 of provider, number and the time, as the extension makes it.
  const who = item.custom_tracking_provider || item.tracking_provider;
  item.tracking_id = createHash('md5').update(`${who}-${item.tracking_number}${process.hrtime.bigint()}-${sequence++}`).digest('hex');
  order.tracking.push(item);
  order.trackingMetaId ??= store.metaId();
  saveTrackingItems(store, order);
  return item;
}

export function deleteTracking(store: WooStore, order: StoredOrder, trackingId: string): void {
  order.tracking = order.tracking.filter((t) => t.tracking_id !== trackingId);
  saveTrackingItems(store, order);
}

/** The items are order meta: see TrackingSave for what saving them does to the order. */
function saveTrackingItems(store: WooStore, order: StoredOrder): void {
  if (store.trackingSave === 'save') store.save(order, false);
}

/** The extension's formatted provider name and link for one item. */
export function formatTracking(order: StoredOrder, item: StoredTracking): { provider: string; link: string } {
  if (item.custom_tracking_provider) return { provider: item.custom_tracking_provider, link: item.custom_tracking_link };
  const provider = findProvider(item.tracking_provider);
  if (!provider) return { provider: '', link: '' };
  const postcode = order.shipping.postcode || order.billing.postcode || '';
  const values = [item.tracking_number, encodeURIComponent(normalizePostcode(postcode)), order.shipping.country ?? '', String(order.id)];
  return { provider: provider.name, link: formatTemplate(provider.template, values) };
}

const dateOf = (seconds: number): string => gmtWall(seconds).slice(0, 10);

export function trackingView(order: StoredOrder, item: StoredTracking): FakeWooTrackingItemView {
  const { provider, link } = formatTracking(order, item);
  return {
    tracking_id: item.tracking_id,
    tracking_provider: provider,
    custom_tracking_provider: item.custom_tracking_provider,
    tracking_link: link,
    tracking_number: item.tracking_number,
    date_shipped: dateOf(item.date_shipped),
  };
}

/** The REST answer for one item (prepare_item_for_response), with its _links. */
export function trackingJson(order: StoredOrder, item: StoredTracking, apiRoot: string): Record<string, unknown> {
  const { provider, link } = formatTracking(order, item);
  const collection = `${apiRoot}/wc-shipment-tracking/v3/orders/${order.id}/shipment-trackings`;
  return {
    tracking_id: item.tracking_id,
    tracking_provider: provider,
    tracking_link: link,
    tracking_number: item.tracking_number,
    date_shipped: dateOf(item.date_shipped),
    _links: {
      self: [{ href: `${collection}/${item.tracking_id}` }],
      collection: [{ href: collection }],
      up: [{ href: `${apiRoot}/wc-shipment-tracking/v3/orders/${order.id}` }],
    },
  };
}

/** The `_wc_shipment_tracking_items` meta value as wc/v3 shows it in an order's meta_data. */
export function trackingMetaValue(order: StoredOrder): Array<Record<string, string>> {
  return order.tracking.map((t) => ({
    tracking_provider: t.tracking_provider,
    custom_tracking_provider: t.custom_tracking_provider,
    custom_tracking_link: t.custom_tracking_link,
    tracking_number: t.tracking_number,
    date_shipped: String(t.date_shipped),
    tracking_id: t.tracking_id,
  }));
}
