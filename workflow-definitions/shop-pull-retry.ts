/**
 * The retry rules of reading a shop's orders, once for the schedule's pulls (the activity options
 * of workflows/shop-pull) and for `import --from`: a 429/503 waits exactly its Retry-After, other
 * passing failures (5xx, a network failure, no answer, a THROTTLED answer the client could not
 * wait out) back off from 2 s, doubling, up to a minute; a refusal retrying cannot fix ends the
 * read. No I/O: workflow code imports it.
 */

export const PULL_RETRY = {
  initialIntervalMs: 2_000,
  backoffCoefficient: 2,
  maximumIntervalMs: 60_000,
  /** The schedule's pull gives up after this many attempts (its next run goes on); a hand import has a deadline instead. */
  maximumAttempts: 8,
} as const;

/** A failed read, as the platform clients classify it. */
export type ReadFailure = { kind: 'retry_after'; retryAfterMs: number } | { kind: 'retry' } | { kind: 'rejected' | 'delivered' };

/** The wait before reading again after the `failuresInARow`-th failure in a row (1 for the first); null: do not. */
export function pullRetryDelayMs(failure: ReadFailure, failuresInARow: number): number | null {
  if (failure.kind === 'retry_after') return failure.retryAfterMs;
  if (failure.kind !== 'retry') return null;
  const backoff = PULL_RETRY.initialIntervalMs * PULL_RETRY.backoffCoefficient ** Math.min(30, Math.max(0, failuresInARow - 1));
  return Math.min(backoff, PULL_RETRY.maximumIntervalMs);
}
