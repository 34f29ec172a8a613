/**
 * The shipment workflow's public surface: its type, state, outcome, operator messages and search
 * attributes (the domain's types it is built on are in domain/shipment.ts). Imported by the workflow, the worker, the import script and the CLI, so
 * each name exists once. Safe inside the workflow sandbox (no I/O, no Node APIs).
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { z } from 'zod';
import type { Checkpoint } from '../shipping-api/contract';
import type * as schemas from '../domain/schemas';
import type { OrderIdentity, OutcomeKind, ParcelRef, PlatformRefs, ShopDeliveryFailure, ShopEventDraft } from '../domain/shipment';
import type { ShopChangeKind, ShopOrderChange, ShopOrderSeen, ShopOrderStatus } from '../domain/shop-order';
import type { LabelRequestWithoutKey } from '../shipping-api/contract';

export const WORKFLOW_TYPE = 'shipmentWorkflow';

// ---------------------------------------------------------------- state and outcome

export type ShipmentPhase =
  | 'creating_label'
  | 'awaiting_correction'
  | 'held_in_shop'
  | 'reading_order'
  | 'tracking'
  /** An order shipping from several locations: its parcels' workflows run (workflows/shipment/split-order.ts). */
  | 'parcels'
  | 'completed';

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
  /** Checkpoints the courier has reported. */
  checkpoints: number;
  /** When the poll that saw the latest change ran (polls without change are not recorded). */
  lastPolledAt?: string | null;
  /** The label document link (carrierDetails.courierOptions.labelUrl), once the order was read. */
  labelUrl?: string | null;
  /** What the shop has been told; set when the run starts (an order shipping as parcels has none: each parcel has its own). */
  shopSync?: ShopSyncState;
  /** The shop's order as the shipment knows it; only for shipments a shop pull started (see shopOrderChangedUpdate). */
  shopOrder?: ShopOrderState;
  /** The shipping account every call uses, fixed at start; absent: `default`. */
  account?: string;
  /** The tracking poller shard watching this shipment (its workflow id), once it joined one. */
  trackingPoller?: string;
  /** One parcel of an order shipping from several locations: where it ships from (its order's workflow started it). */
  parcel?: ParcelRef;
  /** An order shipping from several locations: its parcels, each a workflow of its own (workflows/shipment/split-order.ts). */
  parcels?: ParcelState[];
  /** Labels this shipment made and no longer follows: replaced by a relabel from the shop's data (oldest first). */
  replacedLabels?: ReplacedLabel[];
}

/** A label an operator replaced (`resubmit --from-shop`): never voided, its tracking no longer followed. */
export interface ReplacedLabel {
  labelId: string;
  revision: number;
  trackingNumber: string | null;
  /** Workflow time of the replacement. */
  replacedAt: string;
}

/** One parcel as its order's workflow knows it: started, then its outcome. */
export interface ParcelState extends ParcelRef {
  workflowId: string;
  outcome: OutcomeKind | null;
  labelId: string | null;
  trackingNumber: string | null;
  /** The merchant moved every line of this location to others (set by the order's workflow; absent: not known to have). */
  linesLeft?: boolean;
  /** Started after the order's start, when the merchant moved lines to (or added them at) this location. */
  addedAt?: string;
}

// ---------------------------------------------------------------- the shop's own changes

/**
 * What the merchant did to the order after the shipment started, and what is left for an
 * operator. `attention` is mirrored in the search attribute ShipmentShopChange.
 */
export interface ShopOrderState extends ShopOrderSeen {
  /** The changes taken, oldest first (the last SHOP_CHANGES_KEPT). */
  changes: ShopChangeRecord[];
  /**
   * After the label, what an operator should look at: `cancelled_in_shop` (nothing more is
   * written to the order), `address_changed`, `lines_changed`, `held_in_shop`; null when nothing.
   */
  attention: ShopAttention | null;
  /** When the merchant's hold began (workflow time), while the order is held before its label. */
  heldSince: string | null;
  /** The order's label request as the shop has it now, when it differs from the label made (for an operator: nothing relabels by itself). */
  offer: LabelRequestWithoutKey | null;
  /** Labels bought by an operator's relabel for an order cancelled meanwhile: unused, never told to the shop; void them with the courier. */
  labelsToVoid?: LabelToVoid[];
  /** What a person closed (`npm run cli -- resolve`), oldest first (the last SHOP_CHANGES_KEPT); the mark is closed while the last names it. */
  resolutions?: AttentionResolution[];
  /** The mark of an address or lines change after the label that no relabel took and no person resolved (a hold's release shows it again). */
  changeMark?: ShopAttention | null;
}

/** The mark a person should look at: none once a person closed it (a later change or mark opens it again). */
export function openAttention(order: ShopOrderState | undefined): ShopAttention | null {
  if (!order?.attention) return null;
  const last = order.resolutions?.at(-1);
  return last && last.attention === order.attention && last.modifiedAt === order.modifiedAt ? null : order.attention;
}

/** A person closed an attention mark: who, when, and what they did outside the system. */
export interface AttentionResolution {
  /** The mark closed. */
  attention: ShopAttention;
  /** The shop's reading it was closed on: a later change of the order that marks it again opens it again. */
  modifiedAt: string;
  /** The OS user who ran the command, or its --by. */
  by: string;
  /** Workflow time of the update. */
  at: string;
  note: string;
}

/**
 * `cancelled_label_to_void`: cancelled in the shop, and a relabel's label was bought meanwhile
 * (`labelsToVoid`). Both cancel marks stop every write to the order.
 */
export type ShopAttention = 'cancelled_in_shop' | 'cancelled_label_to_void' | 'address_changed' | 'lines_changed' | 'held_in_shop';

/** The marks of an order cancelled or refunded in the shop after its label. */
export const CANCELLED_MARKS: readonly ShopAttention[] = ['cancelled_in_shop', 'cancelled_label_to_void'];

export interface LabelToVoid {
  labelId: string;
  revision: number;
  idempotencyKey: string;
  /** Workflow time the label came back. */
  at: string;
}

export interface ShopChangeRecord {
  kinds: ShopChangeKind[];
  status: ShopOrderStatus;
  /** The platform's last-modified time of the reading. */
  modifiedAt: string;
  /** When the reading was taken (the reader's clock): orders readings of the same second. */
  readAt?: string;
  /** Workflow time the shipment learned it. */
  at: string;
  /** What the shipment did about it, in words. */
  action: string;
}

export const SHOP_CHANGES_KEPT = 10;

export interface ShopChangeAnswer {
  kinds: ShopChangeKind[];
  action: string;
  phase: ShipmentPhase;
}

/**
 * A shop pull read the order again and something that matters to the label differs (status,
 * hold, address, lines). The validator refuses a reading that is unchanged or older than the
 * one known, so those write nothing to the history.
 */
export const shopOrderChangedUpdate = defineUpdate<ShopChangeAnswer, [ShopOrderChange]>('shopOrderChanged');

/**
 * The same change, as an order shipping from several locations tells each of its parcels
 * (workflows/shipment/split-order.ts): a signal, since a workflow cannot send an update. The parcel judges it as the
 * update's validator would and drops what it refuses.
 */
export const parcelShopOrderChangedSignal = defineSignal<[ShopOrderChange]>('parcelShopOrderChanged');

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
  /** What the shop was told (absent for an order shipping as parcels: each parcel's outcome has its own). */
  shopSync?: Pick<ShopSyncState, 'status' | 'emitted' | 'delivered' | 'failure'>;
  /** An order shipping from several locations: each parcel's end. */
  parcels?: ParcelState[];
}

// ---------------------------------------------------------------- operator messages

export const stateQuery = defineQuery<ShipmentState>('state');

/** Validated by the CLI with domain/schemas.ts (order-import/record.ts), and by the API itself when the label is sent. */
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

/**
 * An operator's relabel after the label, from the order as the shop has it now (its `offer`).
 * `modifiedAt` is the shop's reading the operator looked at: a later change refuses the update.
 */
export interface RelabelFromShop {
  modifiedAt: string;
  reason?: string;
}

export interface RelabelResult {
  /** The revision of the new label attempt (its key's `r<revision>`). */
  revision: number;
  labelCreated: boolean;
  labelId: string | null;
  idempotencyKey: string | null;
  trackingNumber: string | null;
  /** The label that was replaced (still the one tracked when labelCreated is false). */
  replaced: { labelId: string; trackingNumber: string | null };
  error: RecordedError | null;
}

/**
 * A new label to the order's address as the shop has it now, after its label was made: the
 * shipment tracks the new label instead and the shop is told its tracking (workflows/shipment/relabel.ts).
 */
export const relabelFromShopUpdate = defineUpdate<RelabelResult, [RelabelFromShop]>('relabelFromShop');

/** The operator's command that sends it, as the `shipments` bin spells it. */
export function relabelCommand(shop: string, orderId: string, location?: string): string {
  return `npm run cli -- resubmit ${shop} ${orderId} --from-shop${location === undefined ? '' : ` --parcel ${location}`}`;
}

/** `npm run cli -- resolve`: a person closes the shipment's attention mark, saying who and what was done. */
export interface ResolveAttention {
  /** At most RESOLVE_LIMITS.by characters. */
  by: string;
  /** At most RESOLVE_LIMITS.note characters. */
  note: string;
}
export const RESOLVE_LIMITS = { by: 100, note: 500 } as const;

/** Text a person gave that would break a line of `status` or the Web UI's details (newlines, escapes). */
export function hasControlCharacters(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * A person closed what an ended shipment left for a person (a reason of workflow-definitions/attention.ts
 * listed once ended: `exception`, `tracking_timed_out`, ...): the input and result of the
 * workflow attentionResolutionWorkflow, whose history is the record.
 */
export interface EndedShipmentResolution {
  shipmentWorkflowId: string;
  shop: string;
  orderId: string;
  /** The attention reason closed. */
  reason: string;
  /** At most RESOLVE_LIMITS.by characters. */
  by: string;
  /** At most RESOLVE_LIMITS.note characters. */
  note: string;
  /** When the person resolved it (ISO time of the command). */
  at: string;
}
export const ATTENTION_RESOLUTION_WORKFLOW_TYPE = 'attentionResolutionWorkflow';
const ATTENTION_RESOLUTION_ID_PREFIX = 'resolved-';
/** One resolution per ended shipment: its workflow id names the shipment's. */
export function attentionResolutionWorkflowId(shipmentWorkflowId: string): string {
  return `${ATTENTION_RESOLUTION_ID_PREFIX}${shipmentWorkflowId}`;
}
/** The shipment's workflow id of a resolution's, or undefined for another id. */
export function resolvedShipmentWorkflowId(resolutionWorkflowId: string): string | undefined {
  return resolutionWorkflowId.startsWith(ATTENTION_RESOLUTION_ID_PREFIX)
    ? resolutionWorkflowId.slice(ATTENTION_RESOLUTION_ID_PREFIX.length)
    : undefined;
}

/** Closes the attention mark (ShipmentShopChange becomes `resolved`); refused when there is none open. */
export const resolveAttentionUpdate = defineUpdate<AttentionResolution, [ResolveAttention]>('resolveAttention');

/** The operator's command that sends it, as the `shipments` bin spells it. */
export function resolveCommand(shop: string, orderId: string, location?: string): string {
  return `npm run cli -- resolve ${shop} ${orderId}${location === undefined ? '' : ` --parcel ${location}`}`;
}

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
  /**
   * Set only when the merchant changed the order after its label (ShopAttention: e.g.
   * `cancelled_in_shop`, `address_changed`): a shipment whose order stays as it was writes none.
   */
  shopChange: defineSearchAttributeKey('ShipmentShopChange', SearchAttributeType.KEYWORD),
} as const;

/** For `temporal server start-dev --search-attribute` and createLocal({ server: { searchAttributes } }). */
export const SEARCH_ATTRIBUTE_KEYS = Object.values(SA);
