/**
 * The guard at the one place activity failures with a next delay are made: NaN or Infinity from
 * an absurd answer never reaches the SDK, whose failure converter throws on it, and a worker
 * completing such an activity task stops (IllegalStateError) with every shop it serves.
 */
import { ApplicationFailure, DefaultFailureConverter, defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { activityFailure, RETRY_DELAY_BOUNDS } from '../workflow-definitions/activity-failures';
import { clampWaitMs } from '../shipping-api/retry-after';

const converter = new DefaultFailureConverter();

describe('activityFailure', () => {
  it.each([
    [Number.NaN, 1000],
    [Number.POSITIVE_INFINITY, RETRY_DELAY_BOUNDS.maxMs],
    [Number.NEGATIVE_INFINITY, 0],
    [-5, 0],
    [1e300, RETRY_DELAY_BOUNDS.maxMs],
    [3000, 3000],
  ])('a next delay of %s ms becomes %s ms, which the SDK converts', (given, expected) => {
    const failure = activityFailure({ message: 'shop busy', type: 'ShopBusy', nextRetryDelayMs: given });
    expect(failure.nextRetryDelay).toBe(expected);
    expect(() => converter.errorToFailure(failure, defaultPayloadConverter)).not.toThrow();
  });

  it('what the guard prevents: the SDK refuses a non-finite delay', () => {
    const raw = ApplicationFailure.create({ message: 'shop busy', nextRetryDelay: Number.POSITIVE_INFINITY });
    expect(() => converter.errorToFailure(raw, defaultPayloadConverter)).toThrow(/Invalid millis/);
  });

  it('no delay stays no delay (the retry policy decides)', () => {
    expect(activityFailure({ message: 'm', type: 'T' }).nextRetryDelay).toBeUndefined();
  });
});

describe('clampWaitMs, the one clamp waits pass through', () => {
  it('NaN and undefined take the fallback, infinities the bound they run into', () => {
    const bounds = { minMs: 1000, maxMs: 60_000 };
    expect(clampWaitMs(Number.NaN, bounds, 5000)).toBe(5000);
    expect(clampWaitMs(undefined, bounds, 5000)).toBe(5000);
    expect(clampWaitMs(Number.POSITIVE_INFINITY, bounds)).toBe(60_000);
    expect(clampWaitMs(Number.NEGATIVE_INFINITY, bounds)).toBe(1000);
    expect(clampWaitMs(2500, bounds)).toBe(2500);
  });
});
