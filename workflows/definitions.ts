/**
 * The shipment workflow's public surface: ids, input, state, outcome, operator messages and
 * search attributes. Imported by the workflow, the worker, the import script and the CLI, so
 * each name exists once. Safe inside the workflow sandbox (no I/O, no Node APIs).
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { z } from 'zod';
import type { Checkpoint } from '../shipping-api/contract';
import type * as schemas from './schemas';
import type { ShipmentEventInput } from '../shop-sync/events';

export const DEFAULT_TASK_QUEUE = 'shipments';
export const WORKFLOW_TYPE = 'shipmentWorkflow';

// ---------------------------------------------------------------- order identity

export type OrderIdentity = z.infer<typeof schemas.OrderIdentity>;

/**
 * One workflow per shop order: the id is derived from the order, so a second start of the same
 * order finds the first. Components are URI-encoded so `a-b`/`c` and `a`/`b-c` cannot collide.
 */
export function shipmentWorkflowId({ shop, orderId }: OrderIdentity): string {
  return `shipment-${encodeURIComponent(shop)}-${encodeURIComponent(orderId)}`;
}

// ---------------------------------------------------------------- tracking policy

/** How a shipment is tracked. Validated by workflows/schemas.ts where it is configured. */
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
  historyEventLimit: 10_000,
};

// ---------------------------------------------------------------- input, state, outcome

export type ShipmentInput = z.infer<typeof schemas.ShipmentInput>;

export type ShipmentPhase = 'creating_label' | 'awaiting_correction' | 'reading_order' | 'tracking' | 'completed';

export type OutcomeKind =
  | 'delivered'
  | 'exception'
  | 'cancelled'
  /** Tracking reached a tag configured as terminal that is none of the three above. */
  | 'ended_on_tag'
  | 'label_failed'
  | 'cancelled_by_operator'
  | 'tracking_timed_out';

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

/** A failure as the workflow saw it: the typed error's data, never credentials. */
export interface RecordedError {
  kind: string;
  message: string;
  code?: string;
  courierCode?: string;
  courierMessage?: string;
  fields?: Array<{ field: string; message: string }>;
  at: string;
}

export interface ShipmentState extends OrderIdentity {
  /** The order's id on the shop platform, when its connector is one (shopify, woocommerce). */
  platformOrderId?: string;
  phase: ShipmentPhase;
  courier: string;
  /** Bumped each time an operator resubmits corrected label data; part of the idempotencyKey. */
  revision: number;
  idempotencyKey: string | null;
  labelId: string | null;
  customerOrderNumber: string | null;
  courierOrderNumber: string | null;
  trackingNumber: string | null;
  tag: string | null;
  subtag: string | null;
  subtagMessage: string | null;
  lastCheckpoint: Checkpoint | null;
  attempts: { labelRequests: number; trackingPolls: number };
  lastError: RecordedError | null;
  outcome: OutcomeKind | null;
  /** Workflow time (ISO) when tracking began; the tracking time limit counts from here. */
  trackingStartedAt: string | null;
  continuedAsNew: number;
  /** Checkpoints the courier has reported; absent in state carried over from older runs. */
  checkpoints?: number;
  /** When the poll that saw the latest change ran (polls without change are not recorded). */
  lastPolledAt?: string | null;
  /** The label document link (carrierDetails.courierOptions.labelUrl), once the order was read. */
  labelUrl?: string | null;
  /** What the shop has been told; absent in workflows started before shop sync. */
  shopSync?: ShopSyncState;
}

// ---------------------------------------------------------------- shop sync

/**
 * - `no_connector`: the shop has no connector; events are counted, not sent.
 * - `delivering`: events are on their way (or retried while the shop is down or busy).
 * - `up_to_date`: the shop has every event so far.
 * - `failed`: the shop refused an event (a 4xx); the rest wait behind it for an operator's redeliver.
 * - `gone`: the shop's endpoint answered 410: nothing more is sent until an operator redelivers.
 * - `expired`: an event could not be delivered within the delivery window.
 */
export type ShopSyncStatus = 'no_connector' | 'delivering' | 'up_to_date' | 'failed' | 'gone' | 'expired';
/** Shop sync states that wait for an operator's redeliver. */
export const SHOP_SYNC_STOPPED: readonly ShopSyncStatus[] = ['failed', 'gone', 'expired'];

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

export interface ShopSyncState {
  status: ShopSyncStatus;
  /** Sequence of the last event emitted (events are numbered 1, 2, 3, … per order). */
  emitted: number;
  /** Sequence of the last event the shop acknowledged with a 2xx. */
  delivered: number;
  /** Emitted and not yet acknowledged, in sequence order; carried across continue-as-new. */
  pending: ShopEventDraft[];
  /** Why delivery stopped (failed, gone, expired); null while it goes on. */
  failure: ShopDeliveryFailure | null;
  /** Ids on the shop platform (Shopify, WooCommerce) written or adopted for this shipment. */
  platform?: PlatformRefs;
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
  /** A first attempt's retryable failure: the workflow continues with the retried activity. */
  retry: (Omit<ShopDeliveryFailure, 'at'> & { retryAfterMs: number | null }) | null;
  /** Platform ids known after this delivery (platform connectors only). */
  platform?: PlatformRefs;
}

export interface RedeliverResult {
  /** The first sequence sent again. */
  fromSequence: number;
  pending: number;
  previousStatus: ShopSyncStatus;
}
export interface ShipmentOutcome extends OrderIdentity {
  outcome: OutcomeKind;
  labelId: string | null;
  trackingNumber: string | null;
  tag: string | null;
  subtag: string | null;
  lastCheckpoint: Checkpoint | null;
  lastError: RecordedError | null;
  reason?: string;
  /** What the shop was told; absent for workflows started before shop sync. */
  shopSync?: Pick<ShopSyncState, 'status' | 'emitted' | 'delivered' | 'failure'>;
}

// ---------------------------------------------------------------- operator messages

export const stateQuery = defineQuery<ShipmentState>('state');

/** Validated by the CLI with workflows/schemas.ts, and by the API itself when the label is sent. */
export type ResubmitLabel = z.infer<typeof schemas.ResubmitLabel>;

export interface ResubmitResult {
  revision: number;
  idempotencyKey: string | null;
  labelCreated: boolean;
  labelId: string | null;
  error: RecordedError | null;
}

/** Corrected label data after a rejection; answers once the new label attempt has settled. */
export const resubmitLabelUpdate = defineUpdate<ResubmitResult, [ResubmitLabel]>('resubmitLabel');

export interface CancelShipment {
  reason?: string;
}
/** Stops the shipment (label wait or tracking) with outcome `cancelled_by_operator`. */
export const cancelShipmentSignal = defineSignal<[CancelShipment]>('cancelShipment');

/** Sends the undelivered events again after a refusal (4xx), a 410 or an expired delivery window. */
export const redeliverShopEventsUpdate = defineUpdate<RedeliverResult, []>('redeliverShopEvents');

// ---------------------------------------------------------------- search attributes

export const SA = {
  shop: defineSearchAttributeKey('ShipmentShop', SearchAttributeType.KEYWORD),
  orderId: defineSearchAttributeKey('ShipmentOrderId', SearchAttributeType.KEYWORD),
  courier: defineSearchAttributeKey('ShipmentCourier', SearchAttributeType.KEYWORD),
  trackingNumber: defineSearchAttributeKey('ShipmentTrackingNumber', SearchAttributeType.KEYWORD),
  /** Phase while running, outcome once completed (e.g. `tracking`, `awaiting_correction`, `delivered`). */
  status: defineSearchAttributeKey('ShipmentStatus', SearchAttributeType.KEYWORD),
  trackingTag: defineSearchAttributeKey('ShipmentTrackingTag', SearchAttributeType.KEYWORD),
  /**
   * Set only once shop delivery needs an operator (`failed`, `gone`, `expired`), and `ok` after a
   * redeliver succeeded: a shipment whose events flow writes no search attribute for them.
   */
  shopSync: defineSearchAttributeKey('ShipmentShopSync', SearchAttributeType.KEYWORD),
} as const;

/** For `temporal server start-dev --search-attribute` and createLocal({ server: { searchAttributes } }). */
export const SEARCH_ATTRIBUTE_KEYS = Object.values(SA);
