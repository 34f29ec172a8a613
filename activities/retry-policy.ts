/**
 * The retry rules of every shipping API call, in one place: the activity options the workflow
 * schedules with, and the translation of a ShippingApiError into the Temporal failure that
 * makes the server apply them.
 *
 * - 429: next attempt after exactly Retry-After (`nextRetryDelay`, which bypasses backoff).
 * - 5xx, network errors, timeouts: exponential backoff capped at MAX_BACKOFF, no attempt limit,
 *   bounded by TOTAL_RETRY_WINDOW (schedule-to-close).
 * - Everything else (validation, 401, 403, 404, courier rejection, contract violation): not
 *   retried; the typed failure reaches the workflow at once and shows in the Web UI.
 *
 * Imported by workflow code, so it must stay free of I/O and Node APIs.
 */
import { ApplicationFailure, type ActivityOptions } from '@temporalio/common';
import { RETRYABLE, type ShippingApiError, type ShippingApiErrorFields, type ShippingErrorKind } from '../shipping-api/errors';

export const MAX_BACKOFF = '5 minutes';
export const TOTAL_RETRY_WINDOW = '24 hours';

/** ApplicationFailure `type` per error kind: what the Web UI shows as the failure's type. */
export const FAILURE_TYPES: Readonly<Record<ShippingErrorKind, string>> = {
  rate_limited: 'RateLimited',
  server_error: 'ServerError',
  network: 'NetworkError',
  validation: 'ValidationError',
  unauthorized: 'Unauthorized',
  forbidden: 'Forbidden',
  not_found: 'NotFound',
  courier_error: 'CourierError',
  contract_violation: 'ContractViolation',
  client_error: 'ClientError',
};

export const SHIPPING_ACTIVITY_OPTIONS: ActivityOptions = {
  // One HTTP call plus its timeouts; a worker that dies mid-call is noticed by the heartbeat.
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  scheduleToCloseTimeout: TOTAL_RETRY_WINDOW,
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: MAX_BACKOFF,
    // No maximumAttempts: unlimited attempts, bounded by the window above.
    // The activity marks these non-retryable itself; listed again so a change there cannot
    // silently turn a rejected label into a retry loop.
    nonRetryableErrorTypes: Object.entries(FAILURE_TYPES)
      .filter(([kind]) => !RETRYABLE[kind as ShippingErrorKind])
      .map(([, type]) => type),
  },
};

/** What the workflow can read back from a failed call: the error's data plus call context. */
export type FailureDetails = ReturnType<ShippingApiError['toJSON']> & { idempotencyKey?: string };

export function toApplicationFailure(err: ShippingApiError, context: { idempotencyKey?: string } = {}): ApplicationFailure {
  const details: FailureDetails = { ...err.toJSON(), ...context };
  return ApplicationFailure.create({
    message: err.message,
    type: FAILURE_TYPES[err.kind],
    nonRetryable: !err.retryable,
    details: [details],
    nextRetryDelay: err.kind === 'rate_limited' ? `${err.retryAfterSeconds ?? 1} seconds` : undefined,
  });
}

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
