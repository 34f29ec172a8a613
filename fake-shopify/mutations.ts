/**
 * The smaller mutations: tracking replacement, fulfillment events (append-only, no dedupe),
 * tags (a set union) and the order's note. Each bumps updatedAt; none is idempotent.
 */
import { buildTracking, type TrackingInput } from './carriers';
import type { UserError } from './fulfil';
import type { EventRecord, FulfillmentRecord, OrderRecord } from './model';
import type { Store } from './store';

export interface FulfillmentEventInput {
  fulfillmentId: string;
  status: string;
  happenedAt?: string | null;
  estimatedDeliveryAt?: string | null;
  message?: string | null;
  address1?: string | null;
  city?: string | null;
  province?: string | null;
  zip?: string | null;
  country?: string | null;
  latitude?: number | null;
  longitude?: number | null;
}

export interface OrderInput {
  id: string;
  note?: string | null;
  tags?: string[] | null;
  email?: string | null;
}

const notFound = (field: string[], message: string): UserError[] => [{ field, message }];

export function fulfillmentTrackingInfoUpdate(
  store: Store,
  fulfillmentId: string,
  input: TrackingInput,
  notifyCustomer: boolean | null | undefined,
): { fulfillment: FulfillmentRecord | null; userErrors: UserError[] } {
  const fulfillment = store.fulfillment(fulfillmentId);
  if (!fulfillment) return { fulfillment: null, userErrors: notFound(['fulfillmentId'], 'Fulfillment does not exist.') };
  fulfillment.tracking = buildTracking(input);
  if (notifyCustomer != null) fulfillment.notifyCustomer = notifyCustomer;
  touchFulfillment(store, fulfillment);
  return { fulfillment, userErrors: [] };
}

export function fulfillmentEventCreate(
  store: Store,
  input: FulfillmentEventInput,
): { fulfillmentEvent: EventRecord | null; userErrors: UserError[] } {
  const fulfillment = store.fulfillment(input.fulfillmentId);
  if (!fulfillment) {
    return { fulfillmentEvent: null, userErrors: notFound(['fulfillmentEvent', 'fulfillmentId'], 'Fulfillment does not exist.') };
  }
  const createdAt = store.stamp();
  const event: EventRecord = {
    id: store.newId('FulfillmentEvent').id,
    status: input.status,
    happenedAt: input.happenedAt ?? createdAt,
    createdAt,
    estimatedDeliveryAt: input.estimatedDeliveryAt ?? null,
    message: input.message ?? null,
    address1: input.address1 ?? null,
    city: input.city ?? null,
    province: input.province ?? null,
    zip: input.zip ?? null,
    country: input.country ?? null,
    latitude: input.latitude ?? null,
    longitude: input.longitude ?? null,
  };
  fulfillment.events.push(event);
  deriveFromEvents(fulfillment, event);
  touchFulfillment(store, fulfillment);
  return { fulfillmentEvent: event, userErrors: [] };
}

/** displayStatus follows the latest event by happenedAt (a late-arriving older event does not win). */
function deriveFromEvents(f: FulfillmentRecord, added: EventRecord): void {
  const latest = f.events.reduce((a, b) => (Date.parse(b.happenedAt) >= Date.parse(a.happenedAt) ? b : a));
  f.displayStatus = latest.status;
  const delivered = f.events.filter((e) => e.status === 'DELIVERED');
  f.deliveredAt = delivered.length > 0 ? delivered.reduce((a, b) => (b.happenedAt >= a.happenedAt ? b : a)).happenedAt : null;
  if (added.status === 'IN_TRANSIT' && (f.inTransitAt === null || added.happenedAt < f.inTransitAt)) f.inTransitAt = added.happenedAt;
  if (added.estimatedDeliveryAt !== null) f.estimatedDeliveryAt = added.estimatedDeliveryAt;
}

function touchFulfillment(store: Store, f: FulfillmentRecord): void {
  const order = store.order(f.orderId)!;
  store.touch(order);
  f.updatedAt = order.updatedAt;
}

/** Shopify takes a list or a comma-separated string; tags are unique regardless of case. */
function splitTags(tags: string[]): string[] {
  return tags
    .flatMap((t) => t.split(','))
    .map((t) => t.trim())
    .filter((t) => t !== '');
}

function union(existing: string[], added: string[]): string[] {
  const out = [...existing];
  for (const tag of added) if (!out.some((t) => t.toLowerCase() === tag.toLowerCase())) out.push(tag);
  return out;
}

export function tagsAdd(store: Store, id: string, tags: string[]): { node: OrderRecord | null; userErrors: UserError[] } {
  const order = store.order(id);
  if (!order) return { node: null, userErrors: notFound(['id'], 'Resource not found.') };
  const next = union(order.tags, splitTags(tags));
  // Adding only tags it already has changes nothing, so updatedAt stays.
  if (next.length !== order.tags.length) {
    order.tags = next;
    store.touch(order);
  }
  return { node: order, userErrors: [] };
}

export function orderUpdate(store: Store, input: OrderInput): { order: OrderRecord | null; userErrors: UserError[] } {
  const order = store.order(input.id);
  if (!order) return { order: null, userErrors: notFound(['id'], 'Order does not exist.') };
  if (input.note !== undefined) order.note = input.note;
  if (input.email !== undefined) order.email = input.email;
  if (input.tags != null) order.tags = union([], splitTags(input.tags));
  store.touch(order);
  return { order, userErrors: [] };
}
