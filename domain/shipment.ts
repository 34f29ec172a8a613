/**
 * The shipment as the whole house speaks of it: which order, how it is tracked, what it starts
 * from, how it ends, and what its shop is told. Types and plain values only (no zod, no I/O), so
 * the workflow bundle, the activities, the connectors and the configuration can all import it.
 * Its zod schemas are in ./schemas.ts, the shop events in ./events.ts.
 */
import type { z } from 'zod';
import type * as schemas from './schemas';
import type { ShipmentEventInput } from './events';

/** The task queue shipments run on unless the worker's settings name another. */
export const DEFAULT_TASK_QUEUE = 'shipments';

export type OrderIdentity = z.infer<typeof schemas.OrderIdentity>;

/**
 * The shipping account of a shipment whose input names none (started before accounts had
 * names): the one SHIPPING_API_BASE_URL and SHIPPING_API_KEY/_TOKEN configure.
 */
export const DEFAULT_SHIPPING_ACCOUNT = 'default';

/**
 * One workflow per shop order: the id is derived from the order, so a second start of the same
 * order finds the first. Components are URI-encoded so `a-b`/`c` and `a`/`b-c` cannot collide.
 */
export function shipmentWorkflowId({ shop, orderId }: OrderIdentity): string {
  return `shipment-${encodeURIComponent(shop)}-${encodeURIComponent(orderId)}`;
}

/**
 * The workflow of one parcel of an order that ships from several locations: its order's
 * workflow id and the location, so a retried or replayed start finds the same one.
 */
export function parcelWorkflowId(orderWorkflowId: string, location: string): string {
  return `${orderWorkflowId}-parcel-${location}`;
}

/** The location of a parcel's workflow id (parcelWorkflowId), or undefined for the order's own workflow. */
export function parcelLocationOf(workflowId: string, order: OrderIdentity): string | undefined {
  const prefix = parcelWorkflowId(shipmentWorkflowId(order), '');
  return workflowId.startsWith(prefix) && workflowId.length > prefix.length ? workflowId.slice(prefix.length) : undefined;
}

/** How a shipment is tracked. Validated by domain/schemas.ts where it is configured. */
export interface TrackingPolicy {
  /** Time between two GET /tracking polls where pollIntervalsMs names no stage. */
  pollIntervalMs: number;
  /**
   * Poll interval per tracking stage, keyed by subtag (e.g. `InTransit_007`), tag (e.g.
   * `OutForDelivery`) or `NotRegistered` (the courier has not registered the parcel yet, 404).
   * Absent in policies recorded before change-driven tracking.
   */
  pollIntervalsMs?: Record<string, number>;
  /** Tracking stops with outcome `tracking_timed_out` after this long without a terminal tag. */
  maxTrackingMs: number;
  /** Tags that end tracking. */
  terminalTags: string[];
  /** How long a rejected label waits for an operator's corrected data before it is abandoned. */
  correctionTimeoutMs: number;
  /**
   * How long a shipment whose order the merchant holds in the shop waits for the release before
   * it ends as `hold_timed_out`. Absent in policies recorded before shop changes (7 days then).
   */
  shopHoldTimeoutMs?: number;
  /** Continue-as-new once history has this many events, even if the server has not suggested it. */
  historyEventLimit: number;
  /**
   * The shop's connector, as the worker's configuration names it when the shipment starts.
   * Absent in policies recorded before shop sync.
   */
  shopSync?: ShopSyncPolicy;
}

export interface ShopSyncPolicy {
  /** The shop's connector type, or null when the shop has none (its events are not sent). */
  connector: 'webhook' | 'shopify' | 'woocommerce' | null;
  /** How long one delivery keeps retrying before the shipment's shop sync counts as expired. */
  deliveryWindowMs: number;
  /** Cap of the exponential backoff between two attempts of a failed delivery. */
  maxBackoffMs: number;
}

/** Key of pollIntervalsMs for a parcel the courier has not registered yet (tracking answers 404). */
export const NOT_REGISTERED_STAGE = 'NotRegistered';

const HOUR = 60 * 60 * 1000;

/** Defaults, justified in docs/workflow.md, "Tracking cadence": carriers and aggregators refresh every few hours. */
export const DEFAULT_TRACKING_POLICY: TrackingPolicy = {
  pollIntervalMs: 3 * HOUR,
  pollIntervalsMs: {
    [NOT_REGISTERED_STAGE]: 2 * HOUR,
    Pending: 6 * HOUR,
    InfoReceived: 6 * HOUR,
    InTransit: 3 * HOUR,
    OutForDelivery: 1 * HOUR,
    AvailableForPickup: 12 * HOUR,
    AttemptFail: 2 * HOUR,
    Unknown: 6 * HOUR,
  },
  maxTrackingMs: 60 * 24 * 60 * 60 * 1000,
  terminalTags: ['Delivered', 'Exception', 'Cancelled'],
  correctionTimeoutMs: 7 * 24 * 60 * 60 * 1000,
  shopHoldTimeoutMs: 7 * 24 * 60 * 60 * 1000,
  historyEventLimit: 10_000,
};

export type ShipmentInput = z.infer<typeof schemas.ShipmentInput>;

/** Where one parcel of an order ships from (schemas.ParcelRef): the platform's location id and its name. */
export type ParcelRef = z.infer<typeof schemas.ParcelRef>;

export type OutcomeKind =
  | 'delivered'
  | 'exception'
  | 'cancelled'
  /** Tracking reached a tag configured as terminal that is none of the three above. */
  | 'ended_on_tag'
  | 'label_failed'
  | 'cancelled_by_operator'
  | 'tracking_timed_out'
  /** The merchant cancelled or refunded the order in the shop before its label: no label was made. */
  | 'cancelled_in_shop'
  /** The merchant held the order in the shop and did not release it within shopHoldTimeoutMs. */
  | 'hold_timed_out';

/** The outcome of tracking that reached a terminal tag (shared by the workflow and the worker's metrics). */
export function outcomeOfTag(tag: string): OutcomeKind {
  switch (tag) {
    case 'Delivered':
      return 'delivered';
    case 'Exception':
      return 'exception';
    case 'Cancelled':
      return 'cancelled';
    default:
      return 'ended_on_tag';
  }
}

/** An event as the workflow emits it; the activity adds shop, order and the derived id. */
export type ShopEventDraft = ShipmentEventInput extends infer E
  ? E extends ShipmentEventInput
    ? Omit<E, 'shop' | 'orderId'>
    : never
  : never;

export interface ShopDeliveryFailure {
  sequence: number;
  /** HTTP status of the shop's answer, null for a network failure or timeout. */
  status: number | null;
  message: string;
  at: string;
}

/**
 * What a platform connector made for the shipment, kept so a later event writes to it and an
 * answer lost after a write is adopted, not written twice.
 */
export interface PlatformRefs {
  /** Shopify: the fulfillment carrying the label's tracking. */
  fulfillmentId?: string;
  /** WooCommerce: the Shipment Tracking item of the label's tracking number. */
  trackingItemId?: string;
}

/** What a delivery of some of the pending events achieved. */
export interface ShopDeliveryResult {
  /** How many events of the batch, from its first, the shop acknowledged. */
  delivered: number;
  /** Delivery cannot go on without an operator (or the shop has no connector any more). */
  stopped: (Omit<ShopDeliveryFailure, 'at'> & { reason: 'rejected' | 'gone' | 'no_connector' }) | null;
  /**
   * A first attempt's retryable failure: the workflow continues with the retried activity, after
   * retryAfterMs (a webhook's Retry-After, a workflow timer) or passing notBefore on (a platform's, epoch ms).
   */
  retry: (Omit<ShopDeliveryFailure, 'at'> & { retryAfterMs: number | null; notBefore?: number }) | null;
  /** Platform ids known after this delivery (platform connectors only). */
  platform?: PlatformRefs;
}
