/**
 * The shipment's messages, wired to the run: the state query, the operator's cancel signal, the
 * resubmit, relabel and redeliver updates, and the shop pull's shopOrderChanged, with their validators.
 */
import { log, setHandler } from '@temporalio/workflow';
import {
  cancelShipmentSignal,
  parcelShopOrderChangedSignal,
  redeliverShopEventsUpdate,
  relabelFromShopUpdate,
  resubmitLabelUpdate,
  shopOrderChangedUpdate,
  stateQuery,
  type RelabelFromShop,
  type ResubmitLabel,
} from '../definitions';
import type { ShopOrderChange } from '../../domain/shop-order';
import { relabelFromShop, validateRelabel } from './relabel';
import type { ShipmentRun } from './run';

/** Registered before the first await, so a query or update arriving with the first workflow task finds them. */
export function registerHandlers(run: ShipmentRun): void {
  setHandler(stateQuery, () => run.state);
  setHandler(cancelShipmentSignal, (request) => run.cancel(request));
  setHandler(resubmitLabelUpdate, (request) => run.resubmit(request), {
    validator: (request: ResubmitLabel) => {
      checkResubmitShape(request);
      run.validateResubmit(request);
    },
  });
  setHandler(relabelFromShopUpdate, (request) => relabelFromShop(run, request), {
    validator: (request: RelabelFromShop) => validateRelabel(run, request),
  });
  setHandler(redeliverShopEventsUpdate, () => run.delivery.redeliver(), { validator: () => run.delivery.validateRedeliver() });
  // A parcel's order workflow tells it what its update was told; what this parcel would refuse is dropped.
  setHandler(parcelShopOrderChangedSignal, (change) => {
    try {
      checkChangeShape(change);
      run.shop!.validate(change);
    } catch (err) {
      log.info('parcel: shop change not taken', { orderId: run.state.orderId, reason: (err as Error).message });
      return;
    }
    run.shop!.apply(change);
  });
  setHandler(shopOrderChangedUpdate, (change) => run.shop!.apply(change), {
    validator: (change: ShopOrderChange) => {
      if (!run.shop) throw new Error('this shipment was not started by a shop pull: it has no order facts to compare');
      checkChangeShape(change);
      run.shop.validate(change);
    },
  });
}

/** The pull validated the change with zod (domain/schemas.ts); here only what the comparison reads. */
export function checkChangeShape(change: ShopOrderChange): void {
  const facts = change?.facts;
  if (typeof facts !== 'object' || facts === null) throw new Error('invalid shop change: facts: must be an object');
  for (const key of ['status', 'address', 'lines'] as const) {
    if (typeof facts[key] !== 'string' || facts[key].length > 64)
      throw new Error(`invalid shop change: facts.${key}: must be a short string`);
  }
  if (!['open', 'on_hold', 'cancelled', 'refunded'].includes(facts.status))
    throw new Error(`invalid shop change: facts.status: ${facts.status}`);
  if (typeof change.modifiedAt !== 'string' || change.modifiedAt.length > 40)
    throw new Error('invalid shop change: modifiedAt: must be a date');
  if (change.platformOrderId !== undefined && (typeof change.platformOrderId !== 'string' || change.platformOrderId.length > 64))
    throw new Error('invalid shop change: platformOrderId: must be a short string');
}

/**
 * The CLI validates the label data field by field, and the API validates it again when the
 * label is sent (a rejection waits for correction again); here only its shape is checked, so
 * zod and the contract schemas stay out of the workflow bundle.
 */
function checkResubmitShape(request: ResubmitLabel): void {
  if (typeof request?.labelRequest !== 'object' || request.labelRequest === null || Array.isArray(request.labelRequest)) {
    throw new Error('invalid label data: labelRequest: must be an object');
  }
  if (request.reason !== undefined && (typeof request.reason !== 'string' || request.reason.length > 500)) {
    throw new Error('invalid label data: reason: must be a string of at most 500 characters');
  }
  if (request.acceptMismatch !== undefined && typeof request.acceptMismatch !== 'boolean') {
    throw new Error('invalid label data: acceptMismatch: must be a boolean');
  }
  const named = request.namedOrder;
  if (
    named !== undefined &&
    (typeof named !== 'object' || named === null || [named.shop, named.orderId].some((v) => v !== undefined && typeof v !== 'string'))
  ) {
    throw new Error('invalid label data: namedOrder: must be an object of strings (shop, orderId)');
  }
}
