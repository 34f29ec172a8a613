/**
 * The shipment's state and the pure steps that change it: what each answer of the API does to
 * it. No Temporal calls here; the workflow decides when each applies.
 */
import type { CreatedLabel, TrackingChange, TrackingSnapshot } from '../../activities/shipping-api';
import type { OrderDetail } from '../../shipping-api/contract';
import { type ShipmentOutcome, type ShipmentState, type ShopSyncState } from '../../workflow-definitions/shipment';
import { type OutcomeKind, type ShipmentInput, type TrackingPolicy } from '../../domain/shipment';
import { pollIntervalOf } from '../../domain/tracking';
import { labelMade } from '../../domain/shipment-machine/transitions';

export function initialState(input: ShipmentInput): ShipmentState {
  return {
    shop: input.shop,
    orderId: input.orderId,
    // Only for a platform connector's order (shopify, woocommerce).
    ...(input.platformOrderId !== undefined ? { platformOrderId: input.platformOrderId } : {}),
    // Only for a parcel its order's workflow started.
    ...(input.parcel !== undefined ? { parcel: { ...input.parcel } } : {}),
    phase: 'creating_label',
    courier: input.labelRequest.courier,
    revision: 1,
    idempotencyKey: null,
    labelId: null,
    customerOrderNumber: null,
    courierOrderNumber: null,
    trackingNumber: null,
    tag: null,
    subtag: null,
    subtagMessage: null,
    lastCheckpoint: null,
    attempts: { labelRequests: 0, trackingPolls: 0 },
    lastError: null,
    outcome: null,
    trackingStartedAt: null,
    continuedAsNew: 0,
    checkpoints: 0,
    lastPolledAt: null,
  };
}

/** Shop sync of a new shipment: nothing emitted yet, and whether there is a shop to tell. */
export function initialShopSync(policy: TrackingPolicy): ShopSyncState {
  return { status: policy.shopSync?.connector ? 'up_to_date' : 'no_connector', emitted: 0, delivered: 0, pending: [], failure: null };
}

export function applyLabel(state: ShipmentState, label: CreatedLabel): void {
  state.idempotencyKey = label.idempotencyKey;
  state.labelId = label.labelId;
  state.customerOrderNumber = label.customerOrderNumber;
  state.courierOrderNumber = label.courierOrderNumber;
  state.trackingNumber = label.courierTrackingNumber ?? state.trackingNumber;
  state.lastError = null;
  labelMade(state);
}

export function applyOrder(state: ShipmentState, { order, carrierDetails }: OrderDetail): void {
  state.courier = order.courier;
  state.courierOrderNumber = order.courierOrderNumber ?? state.courierOrderNumber;
  state.trackingNumber = order.courierTrackingNumber ?? carrierDetails.orderNumbers.trackingNumber ?? state.trackingNumber;
  state.labelUrl = carrierDetails.courierOptions.labelUrl ?? state.labelUrl ?? null;
}

export function applyTrackingChange(state: ShipmentState, change: TrackingChange): void {
  state.tag = change.tag;
  state.subtag = change.subtag;
  state.subtagMessage = change.subtagMessage;
  state.trackingNumber = change.trackingNumber ?? state.trackingNumber;
  state.lastCheckpoint = change.lastCheckpoint ?? state.lastCheckpoint;
  state.checkpoints = change.checkpoints;
  state.attempts.trackingPolls += change.polls;
  state.lastPolledAt = change.polledAt;
  // The poll succeeded, so an error recorded by an earlier poll no longer stands.
  state.lastError = null;
}

/** What the tracking activity compares each poll against. */
export function snapshotOf(state: ShipmentState): TrackingSnapshot {
  return {
    tag: state.tag,
    subtag: state.subtag,
    trackingNumber: state.trackingNumber,
    checkpoints: state.checkpoints ?? 0,
    lastCheckpointTime: state.lastCheckpoint?.checkpointTime ?? null,
  };
}

/**
 * The worker's policy with the order's own settings on top. An order that sets pollIntervalMs
 * without a stage table means that interval in every stage.
 */
export function withOrderOverrides(worker: TrackingPolicy, order: Partial<TrackingPolicy> | undefined): TrackingPolicy {
  if (!order) return worker;
  const stages = order.pollIntervalMs !== undefined && order.pollIntervalsMs === undefined ? {} : undefined;
  return { ...worker, ...order, ...(stages ? { pollIntervalsMs: stages } : {}) };
}

/** The interval of the current stage (domain/tracking.ts: the shipment's wait and the fleet's pollers share it). */
export { pollIntervalOf };

/** The last checkpoint as a shop event carries it (the fields the event schema names). */
export function lastCheckpointOf(state: ShipmentState) {
  const c = state.lastCheckpoint;
  if (!c) return null;
  return {
    checkpointTime: c.checkpointTime,
    location: c.location,
    city: c.city,
    countryRegion: c.countryRegion,
    message: c.message,
    tag: c.tag,
    subtag: c.subtag,
  };
}

/** The workflow's result: what the shipment came to, as the client and the shop read it. */
export function outcomeOf(state: ShipmentState, outcome: OutcomeKind, reason?: string): ShipmentOutcome {
  return {
    shop: state.shop,
    orderId: state.orderId,
    outcome,
    labelId: state.labelId,
    trackingNumber: state.trackingNumber,
    tag: state.tag,
    subtag: state.subtag,
    lastCheckpoint: state.lastCheckpoint,
    lastError: state.lastError,
    ...(reason === undefined ? {} : { reason }),
  };
}
