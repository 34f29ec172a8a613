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
  resolveAttentionUpdate,
  resubmitLabelUpdate,
  shopOrderChangedUpdate,
  stateQuery,
  type RelabelFromShop,
  type ResolveAttention,
  type ResubmitLabel,
} from '../../workflow-definitions/shipment';
import { checkChangeShape, type ShopOrderChange } from '../../domain/shop-order';
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
  setHandler(resolveAttentionUpdate, (request) => run.shop!.resolve(request), {
    validator: (request: ResolveAttention) => {
      if (!run.shop) throw new Error('nothing to resolve: this shipment was not started by a shop pull, so it has no attention mark');
      run.shop.validateResolve(request);
    },
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
