/**
 * The shipment workflow's public surface: ids, input, state, outcome, operator messages and
 * search attributes. Imported by the workflow, the worker, the import script and the CLI, so
 * each name exists once. Safe inside the workflow sandbox (no I/O, no Node APIs).
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { z } from 'zod';
import { LabelRequestWithoutKey, type Checkpoint } from '../shipping-api/contract';

export const DEFAULT_TASK_QUEUE = 'shipments';
export const WORKFLOW_TYPE = 'shipmentWorkflow';

// ---------------------------------------------------------------- order identity

export const OrderIdentity = z.object({
  shop: z.string().min(1).max(200),
  orderId: z.string().min(1).max(200),
});
export type OrderIdentity = z.infer<typeof OrderIdentity>;

/**
 * One workflow per shop order: the id is derived from the order, so a second start of the same
 * order finds the first. Components are URI-encoded so `a-b`/`c` and `a`/`b-c` cannot collide.
 */
export function shipmentWorkflowId({ shop, orderId }: OrderIdentity): string {
  return `shipment-${encodeURIComponent(shop)}-${encodeURIComponent(orderId)}`;
}

// ---------------------------------------------------------------- tracking policy

/** How a shipment is tracked. Defaults suit couriers that update every few hours. */
export const TrackingPolicy = z.object({
  /** Time between two GET /tracking polls. */
  pollIntervalMs: z.number().int().positive(),
  /** Tracking stops with outcome `tracking_timed_out` after this long without a terminal tag. */
  maxTrackingMs: z.number().int().positive(),
  /** Tags that end tracking. */
  terminalTags: z.array(z.string().min(1)).min(1),
  /** How long a rejected label waits for an operator's corrected data before it is abandoned. */
  correctionTimeoutMs: z.number().int().positive(),
  /** Continue-as-new once history has this many events, even if the server has not suggested it. */
  historyEventLimit: z.number().int().min(10),
});
export type TrackingPolicy = z.infer<typeof TrackingPolicy>;

export const DEFAULT_TRACKING_POLICY: TrackingPolicy = {
  pollIntervalMs: 3 * 60 * 60 * 1000,
  maxTrackingMs: 60 * 24 * 60 * 60 * 1000,
  terminalTags: ['Delivered', 'Exception', 'Cancelled'],
  correctionTimeoutMs: 7 * 24 * 60 * 60 * 1000,
  historyEventLimit: 10_000,
};

// ---------------------------------------------------------------- input, state, outcome

export const ShipmentInput = OrderIdentity.extend({
  labelRequest: LabelRequestWithoutKey,
  /** Per-order overrides; otherwise the worker's configured policy applies. */
  tracking: TrackingPolicy.partial().optional(),
});
export type ShipmentInput = z.infer<typeof ShipmentInput>;

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
}

// ---------------------------------------------------------------- operator messages

export const stateQuery = defineQuery<ShipmentState>('state');

export const ResubmitLabel = z.object({
  labelRequest: LabelRequestWithoutKey,
  reason: z.string().max(500).optional(),
});
export type ResubmitLabel = z.infer<typeof ResubmitLabel>;

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

// ---------------------------------------------------------------- search attributes

export const SA = {
  shop: defineSearchAttributeKey('ShipmentShop', SearchAttributeType.KEYWORD),
  orderId: defineSearchAttributeKey('ShipmentOrderId', SearchAttributeType.KEYWORD),
  courier: defineSearchAttributeKey('ShipmentCourier', SearchAttributeType.KEYWORD),
  trackingNumber: defineSearchAttributeKey('ShipmentTrackingNumber', SearchAttributeType.KEYWORD),
  /** Phase while running, outcome once completed (e.g. `tracking`, `awaiting_correction`, `delivered`). */
  status: defineSearchAttributeKey('ShipmentStatus', SearchAttributeType.KEYWORD),
  trackingTag: defineSearchAttributeKey('ShipmentTrackingTag', SearchAttributeType.KEYWORD),
} as const;

/** For `temporal server start-dev --search-attribute` and createLocal({ server: { searchAttributes } }). */
export const SEARCH_ATTRIBUTE_KEYS = Object.values(SA);
