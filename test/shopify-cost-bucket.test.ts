/** The Shopify cost bucket a worker keeps per store: what it makes a call wait, from the store's own throttleStatus. */
import { describe, expect, it } from 'vitest';
import { CostBucket } from '../shop-sync/shopify/cost-bucket';

function bucketAt(start = 1_000_000) {
  const clock = { now: start };
  return { clock, bucket: new CostBucket(() => clock.now) };
}

describe('CostBucket', () => {
  it('before the first answer nothing waits; after it a call waits (cost − available) / restoreRate', () => {
    const { bucket } = bucketAt();
    expect(bucket.reserve(30, 1_000)).toMatchObject({ waitMs: 0 });
    const { bucket: b2 } = bucketAt();
    b2.observe({ maximumAvailable: 40, currentlyAvailable: 10, restoreRate: 2 });
    expect(b2.reserve(30, 60_000)).toMatchObject({ waitMs: 10_000 });
  });

  it('reservations queue behind each other: the second waits for the first one’s points too', () => {
    const { bucket } = bucketAt();
    bucket.observe({ maximumAvailable: 40, currentlyAvailable: 40, restoreRate: 2 });
    expect(bucket.reserve(30, 60_000)).toMatchObject({ waitMs: 0 });
    expect(bucket.reserve(30, 60_000)).toMatchObject({ waitMs: 10_000 });
  });

  it('refills with time, never beyond the maximum', () => {
    const { clock, bucket } = bucketAt();
    bucket.observe({ maximumAvailable: 40, currentlyAvailable: 0, restoreRate: 2 });
    clock.now += 60_000; // 120 points restored, but the bucket holds 40
    expect(bucket.reserve(40, 0)).toMatchObject({ waitMs: 0 });
    expect(bucket.reserve(2, 60_000)).toMatchObject({ waitMs: 1_000 });
  });

  it('a wait beyond maxWaitMs reserves nothing and says when to come back', () => {
    const { bucket } = bucketAt();
    bucket.observe({ maximumAvailable: 40, currentlyAvailable: 0, restoreRate: 2 });
    expect(bucket.reserve(30, 1_000)).toEqual({ retryInMs: 15_000 });
    expect(bucket.reserve(2, 1_000)).toMatchObject({ waitMs: 1_000 }); // nothing was taken by the refused one
  });

  it("the store's answer replaces the view, less what is reserved and not yet answered", () => {
    const { bucket } = bucketAt();
    bucket.observe({ maximumAvailable: 100, currentlyAvailable: 100, restoreRate: 10 });
    const held = bucket.reserve(50, 0);
    expect(held).toMatchObject({ waitMs: 0 });
    // Another worker spent points: the store says 60 are left; 50 of them are ours, still unanswered.
    bucket.observe({ maximumAvailable: 100, currentlyAvailable: 60, restoreRate: 10 });
    expect(bucket.reserve(20, 60_000)).toMatchObject({ waitMs: 1_000 });
    if ('release' in held) held.release();
  });

  it('a throttled call waits what Shopify documents: (requested − currentlyAvailable) / restoreRate', () => {
    const { bucket } = bucketAt();
    expect(bucket.throttledWaitMs(32, { maximumAvailable: 40, currentlyAvailable: 12, restoreRate: 2 })).toBe(10_000);
  });
});
