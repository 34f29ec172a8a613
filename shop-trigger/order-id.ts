/**
 * The order a verified webhook names: a hint for the pull, which reads that order from the
 * platform and believes only the platform's answer. Only called after the signature matched; the
 * body is already bounded in size (maxBodyBytes), and V8's JSON.parse does not recurse, so a deep
 * body costs no stack. Nothing else of the body is read.
 *
 * Where the id is, per topic (the topic header is unsigned, so a forged one only picks another
 * field of a genuine body: at worst the pull reads another of the shop's own orders):
 * - Shopify `orders/*`: the order's `id` (REST-shaped payloads, numeric ids);
 * - Shopify `refunds/create`: the refund's `order_id`;
 * - Shopify `fulfillment_orders/*`: the fulfillment order's global id and status only, no order
 *   id (Shopify's own examples): no id, so the pull goes by the cursor as before;
 * - WooCommerce `order.*`: the order's `id` (the body is GET /orders/{id}).
 */
import { PLATFORM_ORDER_ID } from '../domain/shop-order';
import type { TriggerPlatform } from './types';

/** The platform id of the order the body names, or null: no such field, or not a sane id. */
export function namedOrderId(platform: TriggerPlatform, topic: string | undefined, body: Buffer): string | null {
  const field = idField(platform, topic);
  if (field === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  return orderIdOf((parsed as Record<string, unknown>)[field]);
}

function idField(platform: TriggerPlatform, topic: string | undefined): 'id' | 'order_id' | null {
  if (topic === undefined) return null;
  if (platform === 'woocommerce') return topic.startsWith('order.') ? 'id' : null;
  if (topic.startsWith('orders/')) return 'id';
  return topic === 'refunds/create' ? 'order_id' : null;
}

/** A positive whole number (exact as a double) or a digit string, as the retry list holds ids. */
function orderIdOf(value: unknown): string | null {
  const text = typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? String(value) : value;
  return typeof text === 'string' && PLATFORM_ORDER_ID.test(text) && !/^0+$/.test(text) ? text : null;
}
