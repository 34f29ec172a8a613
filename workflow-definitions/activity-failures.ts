/**
 * The activity side of the retry rules (`retry-options.ts` holds the options the workflow
 * schedules with): how a failed call becomes the Temporal failure that makes the server apply
 * them, with its type, its own next delay (Retry-After, or backoff of the failures in a row)
 * and whether it is final. Also the failure type names the logger, metrics and shop delivery share.
 *
 * Imported by workflow code (the type names), so it must stay free of I/O and Node APIs.
 */
import { ApplicationFailure, ApplicationFailureCategory, type ApplicationFailureOptions } from '@temporalio/common';
import type { ShippingErrorKind } from '../shipping-api/error-kinds';
import type { ShippingApiError } from '../shipping-api/errors';
import { clampWaitMs, type WaitBounds } from '../shipping-api/retry-after';

/** Longest wait between attempts after the API failed (5xx, network, broken body). */
export const MAX_BACKOFF = '5 minutes';
export const MAX_BACKOFF_MS = 5 * 60_000;
/** Longest wait before re-running an attempt that was lost with its worker. */
export const LOST_ATTEMPT_MAX_BACKOFF = '30 seconds';
export const LOST_ATTEMPT_MAX_BACKOFF_MS = 30_000;
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

/**
 * A malformed or contract-breaking answer to an idempotent call (every GET, and POST /labels,
 * whose key makes a re-send safe) may be a glitch that asking again fixes: it is retried this
 * many times before it counts as a contract violation.
 */
export const CONTRACT_VIOLATION_RETRIES = 3;

/** Whether a failure is worth another attempt, after `failures` failed attempts in a row (this one included). */
export function isRetryable(err: Pick<ShippingApiError, 'kind' | 'retryable'>, failures: number): boolean {
  return err.retryable || (err.kind === 'contract_violation' && failures <= CONTRACT_VIOLATION_RETRIES);
}

/**
 * A first attempt waits at most this long for its turn under the account's pace: longer would
 * hold the workflow task (and make the SDK extend it, at the cost of extra tasks). It then fails
 * with PACED_BY_ACCOUNT, unsent, and the regular activity waits for the turn instead.
 */
export const FIRST_ATTEMPT_PACE_WAIT_MS = 2_000;
/** ApplicationFailure type of a first attempt handed to the regular activity unsent (not an API failure). */
export const PACED_BY_ACCOUNT = 'PacedByAccount';
/**
 * A regular attempt gives its worker slot back, unsent, when the account is held (a Retry-After)
 * for longer than this: the server retries it when the hold ends (ACCOUNT_HELD). Shorter holds
 * cost less in the slot than a retry (an action on Temporal Cloud).
 */
export const HELD_ACCOUNT_RELEASE_MS = 10_000;
/** ApplicationFailure type of a regular attempt that gave its slot back to an account's hold (not an API failure). */
export const ACCOUNT_HELD = 'AccountHeld';

/**
 * ApplicationFailure type of a label attempt that found, checking with the shop right before the
 * label, that the order changed (shop-import/label-check.ts): no label was asked for; its details
 * hold the change, which the shipment takes as it takes a pulled one. Never retried.
 */
export const SHOP_ORDER_CHANGED = 'ShopOrderChanged';

// ---------------------------------------------------------------- shop delivery

/** A shop answered 429/503: the next attempt waits its Retry-After. */
export const SHOP_BUSY = 'ShopBusy';
/** A platform write whose answer was lost may still land: the next attempt waits the connector's timeout before it reads. */
export const WRITE_SETTLING = 'EarlierWriteSettling';
/** A shop answered 5xx or 408, or could not be reached: exponential backoff. */
export const SHOP_UNAVAILABLE = 'ShopUnavailable';
/** An event the sender refuses to send (a bug): never retried. */
export const INVALID_SHIPMENT_EVENT = 'InvalidShipmentEvent';

// ---------------------------------------------------------------- tracking

/** ApplicationFailure type of a poll that found nothing new: the retry that is the next poll. */
export const TRACKING_UNCHANGED = 'TrackingUnchanged';

/** A failed call's next attempt: 1 s doubling per failure in a row, capped at MAX_BACKOFF (or `capMs`). */
export function apiBackoffMs(failuresInARow: number, capMs = MAX_BACKOFF_MS): number {
  return Math.min(1000 * 2 ** Math.min(30, Math.max(0, failuresInARow - 1)), Math.max(1000, capMs));
}

/** What a failed attempt leaves in its heartbeat details for the next attempt of the same call. */
export interface AttemptProgress {
  /** No call before this time (epoch ms): the Retry-After of a 429. */
  notBefore?: number;
  /** API failures in a row; a 429 (the API pacing us) neither counts nor resets it. */
  failuresInARow?: number;
}

/**
 * The one rule for a failed API call, tracking polls included: the streak, whether to go on,
 * and when (a 429 its Retry-After, anything else apiBackoffMs of the streak, capped at `capMs`).
 * `record`: whether the next attempt must learn of this failure through a heartbeat (a billed
 * action on Temporal Cloud). Pure: `now` is the caller's clock.
 */
export function afterFailure(
  err: Pick<ShippingApiError, 'kind' | 'retryable' | 'retryAfterSeconds'>,
  previous: AttemptProgress,
  now: number,
  capMs = MAX_BACKOFF_MS,
): Required<AttemptProgress> & { retryable: boolean; delayMs: number; record: boolean } {
  const limited = err.kind === 'rate_limited';
  const failuresInARow = (previous.failuresInARow ?? 0) + (limited ? 0 : 1);
  const delayMs = limited ? retryAfterMs(err) : apiBackoffMs(failuresInARow, capMs);
  return {
    failuresInARow,
    notBefore: limited ? now + delayMs : (previous.notBefore ?? 0),
    retryable: isRetryable(err, failuresInARow),
    delayMs,
    record: limited || streakStillCounts(previous.failuresInARow ?? 0, capMs),
  };
}

/**
 * Whether one more failure after `failuresInARow` can still change a decision: the backoff
 * has not reached its cap, or a contract violation's bounded retries are not used up. Past
 * that, a long outage's attempts record nothing, which halves their billed actions.
 */
export function streakStillCounts(failuresInARow: number, capMs: number): boolean {
  return failuresInARow <= CONTRACT_VIOLATION_RETRIES || apiBackoffMs(failuresInARow, capMs) < Math.max(1000, capMs);
}

/** A 429's wait: its Retry-After (the client reads a missing or invalid header as its default). */
export function retryAfterMs(err: Pick<ShippingApiError, 'retryAfterSeconds'>): number {
  return (err.retryAfterSeconds ?? 1) * 1000;
}

/**
 * What a next delay may be: up to 2^31−1 ms (24.8 days, the longest a timer holds). Every wait is
 * bounded well before this by its own rule; this is the guard for whatever slipped through.
 */
export const RETRY_DELAY_BOUNDS: WaitBounds = { minMs: 0, maxMs: 2 ** 31 - 1 };

/**
 * The one place an activity failure with a next delay is made: the delay goes through the shared
 * clamp, so NaN or Infinity (from an absurd answer a store or API sent) never reaches the SDK,
 * which stops the whole worker on it ("Invalid millis Infinity"). NaN becomes 1 s.
 */
export function activityFailure(
  options: Omit<ApplicationFailureOptions, 'nextRetryDelay'> & { nextRetryDelayMs?: number },
): ApplicationFailure {
  const { nextRetryDelayMs, ...rest } = options;
  const nextRetryDelay = nextRetryDelayMs === undefined ? undefined : clampWaitMs(nextRetryDelayMs, RETRY_DELAY_BOUNDS, 1000);
  return ApplicationFailure.create({ ...rest, nextRetryDelay });
}

/** What the workflow can read back from a failed call: the error's data plus call context. */
export type FailureDetails = ReturnType<ShippingApiError['toJSON']> & {
  idempotencyKey?: string;
  /**
   * A 429's: when its Retry-After ends (epoch ms), by the activity's clock when the answer came.
   * A workflow's clock stands at its task's start, so a first attempt made late in the task
   * (an order read after the label's) would count the wait from too early.
   */
  retryAfterEndsAt?: number;
};

export function toApplicationFailure(
  err: ShippingApiError,
  context: { idempotencyKey?: string; retryAfterEndsAt?: number } = {},
  overrides: { message?: string; nextRetryDelayMs?: number; nonRetryable?: boolean } = {},
): ApplicationFailure {
  const details: FailureDetails = { ...err.toJSON(), ...context };
  if (overrides.nonRetryable !== undefined) details.retryable = !overrides.nonRetryable;
  return activityFailure({
    message: overrides.message ?? err.message,
    type: FAILURE_TYPES[err.kind],
    nonRetryable: overrides.nonRetryable ?? !err.retryable,
    details: [details],
    nextRetryDelayMs: overrides.nextRetryDelayMs ?? (err.kind === 'rate_limited' ? retryAfterMs(err) : undefined),
    // A 429 is the API pacing us, not a fault: the SDK logs it at debug and counts no failure.
    category: err.kind === 'rate_limited' ? ApplicationFailureCategory.BENIGN : undefined,
  });
}
