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
}

/** Key of pollIntervalsMs for a parcel the courier has not registered yet (tracking answers 404). */
export const NOT_REGISTERED_STAGE = 'NotRegistered';

const HOUR = 60 * 60 * 1000;

/** Defaults, justified in README "Tracking cadence": carriers and aggregators refresh every few hours. */
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
