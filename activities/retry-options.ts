/**
 * The retry rules of every shipping API call and shop delivery, as the workflow schedules them:
 * the activity options. How an activity turns a failure into the Temporal failure that makes the
 * server apply these rules (Retry-After, backoff, final) is in `failures.ts`.
 *
 * - 429: next attempt after exactly Retry-After (`nextRetryDelay`, which bypasses backoff).
 * - 5xx, network errors, timeouts: exponential backoff capped at MAX_BACKOFF (`nextRetryDelay`,
 *   counted from the call's failures in a row, which the activity keeps in its heartbeat
 *   details), no attempt limit, bounded by TOTAL_RETRY_WINDOW (schedule-to-close).
 * - An attempt lost with its worker (heartbeat timeout): the policy's own backoff, capped at
 *   LOST_ATTEMPT_MAX_BACKOFF. A killed worker says nothing about the API, and the attempt number
 *   it inflates must not push a call into the 5-minute backoff.
 * - A contract violation (a broken 2xx body): asked again CONTRACT_VIOLATION_RETRIES times,
 *   every call being idempotent, then it stands.
 * - Everything else (validation, 401, 403, 404, courier rejection): not retried; the typed
 *   failure reaches the workflow at once and shows in the Web UI.
 *
 * Imported by workflow code, so it must stay free of I/O and Node APIs.
 */
import type { ActivityOptions, LocalActivityOptions } from '@temporalio/common';
import { RETRYABLE, type ShippingErrorKind } from '../shipping-api/error-kinds';
import { FAILURE_TYPES, INVALID_SHIPMENT_EVENT, LOST_ATTEMPT_MAX_BACKOFF, LOST_ATTEMPT_MAX_BACKOFF_MS } from './failures';

export const TOTAL_RETRY_WINDOW = '24 hours';

export const SHIPPING_ACTIVITY_OPTIONS: ActivityOptions = {
  // One HTTP call plus its timeouts; a worker that dies mid-call is noticed by the heartbeat.
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  scheduleToCloseTimeout: TOTAL_RETRY_WINDOW,
  retry: {
    // Applies only to attempts lost with their worker: every API failure sets its own
    // nextRetryDelay (Retry-After, or apiBackoffMs of its failures in a row).
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: LOST_ATTEMPT_MAX_BACKOFF,
    // No maximumAttempts: unlimited attempts, bounded by the window above.
    // The activity marks these non-retryable itself; listed again so a change there cannot
    // silently turn a rejected label into a retry loop. Not a contract violation: the activity
    // retries that a bounded number of times (see isRetryable).
    nonRetryableErrorTypes: Object.entries(FAILURE_TYPES)
      .filter(([kind]) => !RETRYABLE[kind as ShippingErrorKind] && kind !== 'contract_violation')
      .map(([, type]) => type),
  },
};

/**
 * A tracking poller's span (workflows/tracking-poller/): one long-running activity polling a
 * shard's labels for TRACKING_POLLER_SPAN (at most an hour). A heartbeat every 30 s
 * (activities/tracking-span.ts) carries what it told; the SDK sends each one (its throttle is
 * 0.8 × this timeout, 32 s), so a worker that dies is noticed within 40 s and the span goes on
 * elsewhere from there. Never given up: the next attempt waits at most LOST_ATTEMPT_MAX_BACKOFF.
 */
export const TRACKING_POLLER_ACTIVITY_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '40 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: LOST_ATTEMPT_MAX_BACKOFF },
  summary: "Poll the shard's labels for one span",
};

/** A shipment joining or leaving its poller (a signal, inside the workflow task). */
export const TRACKING_POLLER_SIGNAL_OPTIONS: LocalActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: LOST_ATTEMPT_MAX_BACKOFF },
};

/**
 * The first attempt of a call, run inside the workflow task as a local activity: one try, no
 * retries there (a retryable failure continues as a regular activity with the options above).
 */
export const FIRST_ATTEMPT_OPTIONS: LocalActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 1 },
};

// ---------------------------------------------------------------- shop delivery

/**
 * The first delivery attempt, inside the workflow task. Short: the task (and so the next
 * tracking poll's scheduling) waits for it; a slow shop continues as the regular activity.
 */
export const FIRST_DELIVERY_OPTIONS: LocalActivityOptions = {
  startToCloseTimeout: '3 seconds',
  retry: { maximumAttempts: 1 },
};

/**
 * Retried deliveries, for at most the delivery window. As for API calls, a failing shop sets its
 * own next delay (Retry-After, or apiBackoffMs of the shop's failures in a row capped at the
 * connector's maxBackoff); this policy's backoff applies only to an attempt lost with its worker
 * (noticed by the heartbeat timeout, the batch is sent again with the same ids: the shop
 * de-duplicates), capped at LOST_ATTEMPT_MAX_BACKOFF or maxBackoff if that is shorter.
 */
export function shopDeliveryOptions({
  deliveryWindowMs,
  maxBackoffMs,
}: {
  deliveryWindowMs: number;
  maxBackoffMs: number;
}): ActivityOptions {
  return {
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: '10 seconds',
    scheduleToCloseTimeout: deliveryWindowMs,
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: Math.max(1000, Math.min(LOST_ATTEMPT_MAX_BACKOFF_MS, maxBackoffMs)),
      nonRetryableErrorTypes: [INVALID_SHIPMENT_EVENT],
    },
  };
}
