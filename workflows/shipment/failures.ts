/**
 * The workflow's reading of a failed activity: the shipping error inside it, and whether a
 * timeout was a window's end. How activities produce these failures is `activities/failures.ts`.
 */
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';
import { RetryState, TimeoutType } from '@temporalio/common';
import { FAILURE_TYPES, SHOP_ORDER_CHANGED, type FailureDetails } from '../../activities/failures';
import type { ShopOrderChange } from '../../domain/shop-order';
import type { ShippingApiErrorFields } from '../../shipping-api/errors';
import type { RecordedError, ShipmentState, ShopSyncState } from '../definitions';
import { formatDuration } from '../../domain/duration';

/** Finds the shipping error data inside a failure thrown by an activity call, if there is one. */
export function shippingErrorOf(err: unknown): FailureDetails | undefined {
  let current: unknown = err;
  for (let depth = 0; current && depth < 5; depth++) {
    if (current instanceof ApplicationFailure && Object.values(FAILURE_TYPES).includes(current.type ?? '')) {
      const first = current.details?.[0] as Partial<ShippingApiErrorFields> | undefined;
      if (first && typeof first.kind === 'string') return first as FailureDetails;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The change a label attempt found checking with the shop (SHOP_ORDER_CHANGED): no label was asked for. */
export function shopChangeOf(err: unknown): ShopOrderChange | undefined {
  let current: unknown = err;
  for (let depth = 0; current && depth < 5; depth++) {
    if (current instanceof ApplicationFailure && current.type === SHOP_ORDER_CHANGED)
      return current.details?.[0] as ShopOrderChange | undefined;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A failure as the shipment's state keeps it (`lastError`): what the Web UI and the CLI show. */
export function recordError(failure: FailureDetails): RecordedError {
  return {
    kind: failure.kind,
    message: failure.message,
    ...(failure.code === undefined ? {} : { code: failure.code }),
    ...(failure.courierCode === undefined ? {} : { courierCode: failure.courierCode }),
    ...(failure.courierMessage === undefined ? {} : { courierMessage: failure.courierMessage }),
    ...(failure.fields === undefined ? {} : { fields: failure.fields }),
    at: new Date().toISOString(),
  };
}

/**
 * A regular activity that stopped because its schedule-to-close time ran out (the tracking limit,
 * the delivery window): the server gave up retrying for time, or the timeout is that one. An
 * attempt's own start-to-close or heartbeat timeout is retried by the server and is not this.
 */
export function windowEnded(err: unknown): boolean {
  if (!(err instanceof ActivityFailure)) return false;
  if (err.retryState === RetryState.TIMEOUT) return true;
  return err.cause instanceof TimeoutFailure && err.cause.timeoutType === TimeoutType.SCHEDULE_TO_CLOSE;
}

/** A failure the activity or its policy marked final: sending the same batch again would not help. */
export function isNonRetryable(err: unknown): boolean {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure && cause.nonRetryable === true;
}

/** A failure's own message, from the innermost cause that has one (an activity failure wraps the useful one). */
export function describeFailure(err: unknown): string {
  let message = err instanceof Error ? err.message : String(err);
  for (
    let current = (err as { cause?: unknown })?.cause, depth = 0;
    current && depth < 5;
    current = (current as { cause?: unknown }).cause, depth++
  ) {
    if (current instanceof Error && current.message) message = current.message;
  }
  return message;
}

/** A shipping error that stops the shipment, as the workflow's own typed failure (the Web UI shows its type). */
export function shipmentFailed(state: ShipmentState, err: unknown): unknown {
  // (a regular activity's failure arrives as an ActivityFailure, a first attempt's unwrapped)
  const failure = shippingErrorOf(err);
  if (!failure || (err instanceof ApplicationFailure && err.type === 'ShipmentFailed')) return err;
  state.lastError = recordError(failure);
  return ApplicationFailure.create({
    message: `shipment stopped: ${failure.message}`,
    type: 'ShipmentFailed',
    nonRetryable: true,
    details: [failure],
    cause: err as Error,
  });
}

/** A shop delivery that failed for good: expired when the delivery window ended, else failed, and why. */
export function deliveryStopped(sync: ShopSyncState, deliveryWindowMs: number, err: unknown): Pick<ShopSyncState, 'status' | 'failure'> {
  // A first attempt's failure gets here only when final (non-retryable), which is never the window's end.
  const expired = windowEnded(err);
  const why = describeFailure(err);
  return {
    status: expired ? 'expired' : 'failed',
    failure: {
      sequence: sync.pending[0]?.sequence ?? sync.delivered + 1,
      status: null,
      message: expired ? `not delivered within the delivery window (${formatDuration(deliveryWindowMs)}): ${why}` : why,
      at: new Date().toISOString(),
    },
  };
}
