/** The Shopify connector's pure parts: the cost bucket it keeps per store, and which fulfillment event is news. */
import { describe, expect, it } from 'vitest';
import { BudgetWait, CostBucket, MAX_BUCKET_WAIT_MS, QueryCost } from '../platforms/shopify/cost-bucket';
import { isNews } from '../platforms/shopify/write-back';

function bucketAt(start = 1_000_000) {
  const clock = { now: start };
  return { clock, bucket: new CostBucket(() => clock.now) };
}

/** The wait `take` would need, read from the BudgetWait it throws when it may not wait at all. */
async function waitNeeded(bucket: CostBucket, cost: number): Promise<number> {
  try {
    await bucket.take(cost, 0);
    return 0;
  } catch (err) {
    if (err instanceof BudgetWait) return err.ms;
    throw err;
  }
}

describe('CostBucket', () => {
  it('before the first answer one call goes out and the rest wait for it', async () => {
    const { bucket } = bucketAt();
    const release = await bucket.take(30, 0);
    expect(await waitNeeded(bucket, 30)).toBe(500);
    release();
    expect(await waitNeeded(bucket, 30)).toBe(0);
  });

  it('after an answer a call waits (cost − available) / restoreRate', async () => {
    const { bucket } = bucketAt();
    bucket.observe({ maximumAvailable: 40, currentlyAvailable: 10, restoreRate: 2 });
    expect(await waitNeeded(bucket, 30)).toBe(10_000);
  });

  it('calls taken and not yet answered count: the next one waits for their points too', async () => {
    const { bucket } = bucketAt();
    bucket.observe({ maximumAvailable: 40, currentlyAvailable: 40, restoreRate: 2 });
    await bucket.take(30, 0);
    expect(await waitNeeded(bucket, 30)).toBe(10_000);
  });

  it('refills with time, never beyond the maximum', async () => {
    const { clock, bucket } = bucketAt();
    bucket.observe({ maximumAvailable: 40, currentlyAvailable: 0, restoreRate: 2 });
    clock.now += 60_000; // 120 points restored, but the bucket holds 40
    await bucket.take(40, 0);
    expect(await waitNeeded(bucket, 2)).toBe(1_000);
  });

  it("the store's answer replaces the view, less what is taken and not yet answered", async () => {
    const { bucket } = bucketAt();
    bucket.observe({ maximumAvailable: 100, currentlyAvailable: 100, restoreRate: 10 });
    const release = await bucket.take(50, 0);
    // Another worker spent points: the store says 60 are left; 50 of them are ours, still unanswered.
    bucket.observe({ maximumAvailable: 100, currentlyAvailable: 60, restoreRate: 10 });
    expect(await waitNeeded(bucket, 20)).toBe(1_000);
    release();
  });

  it('a call dearer than the whole bucket waits for a full bucket, not for ever', async () => {
    const { bucket } = bucketAt();
    bucket.observe({ maximumAvailable: 40, currentlyAvailable: 20, restoreRate: 2 });
    expect(await waitNeeded(bucket, 100)).toBe(10_000);
  });

  it('a waiting call goes as soon as the points are there', async () => {
    const bucket = new CostBucket();
    bucket.observe({ maximumAvailable: 10, currentlyAvailable: 9, restoreRate: 20 });
    const started = Date.now();
    await bucket.take(10, 5_000);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a throttled call waits what Shopify documents: (requested − currentlyAvailable) / restoreRate', () => {
    const { bucket } = bucketAt();
    expect(bucket.throttledWaitMs(32, { maximumAvailable: 40, currentlyAvailable: 12, restoreRate: 2 })).toBe(10_000);
  });
});

describe('CostBucket against an absurd store', () => {
  it('throttleStatus outside sane ranges is refused before the bucket sees it (the client then ignores it, with a warning)', () => {
    const cost = (throttleStatus: Record<string, number>) => QueryCost.safeParse({ requestedQueryCost: 10, throttleStatus }).success;
    expect(cost({ maximumAvailable: 1000, currentlyAvailable: 900, restoreRate: 100 })).toBe(true);
    expect(cost({ maximumAvailable: 1000, currentlyAvailable: -1e308, restoreRate: 1e-300 })).toBe(false);
    expect(cost({ maximumAvailable: 1e308, currentlyAvailable: 0, restoreRate: 100 })).toBe(false);
    expect(cost({ maximumAvailable: 1000, currentlyAvailable: 0, restoreRate: 0.001 })).toBe(false);
    expect(
      QueryCost.safeParse({ requestedQueryCost: 1e300, throttleStatus: { maximumAvailable: 1, currentlyAvailable: 1, restoreRate: 1 } })
        .success,
    ).toBe(false);
  });

  it('a wait within range but absurd is clamped, and once the clamp has passed without an answer one probe goes', async () => {
    const { clock, bucket } = bucketAt();
    // Sane ranges, a lying store: 100,000 points missing at half a point a second would be 55 hours.
    bucket.observe({ maximumAvailable: 100_000, currentlyAvailable: -100_000, restoreRate: 0.5 });
    expect(await waitNeeded(bucket, 500)).toBe(MAX_BUCKET_WAIT_MS);
    clock.now += MAX_BUCKET_WAIT_MS / 2;
    expect(await waitNeeded(bucket, 500)).toBe(MAX_BUCKET_WAIT_MS / 2);
    clock.now += MAX_BUCKET_WAIT_MS / 2;
    const probe = await bucket.take(500, 0);
    expect(await waitNeeded(bucket, 500)).toBe(MAX_BUCKET_WAIT_MS); // the view stands until the probe's answer
    bucket.observe({ maximumAvailable: 1000, currentlyAvailable: 1000, restoreRate: 100 }); // its answer heals the view
    probe();
    expect(await waitNeeded(bucket, 500)).toBe(0);
  });

  it('a throttled wait is finite and clamped', () => {
    const { bucket } = bucketAt();
    expect(bucket.throttledWaitMs(1000, { maximumAvailable: 100_000, currentlyAvailable: -100_000, restoreRate: 0.5 })).toBe(
      MAX_BUCKET_WAIT_MS,
    );
  });
});

describe('isNews: which fulfillment event the Shopify connector writes', () => {
  const events = [
    { status: 'CONFIRMED', happenedAt: '2026-11-20T08:00:00Z' },
    { status: 'IN_TRANSIT', happenedAt: '2026-11-20T12:00:00Z' },
  ];

  it('a new status at a later time is written', () => {
    expect(isNews(events, 'OUT_FOR_DELIVERY', '2026-11-21T07:30:00.250Z')).toBe(true);
  });

  it('the same status at the same second is an earlier attempt’s write (Shopify keeps whole seconds)', () => {
    expect(isNews(events, 'IN_TRANSIT', '2026-11-20T12:00:00.900Z')).toBe(false);
  });

  it('without a checkpoint time the status alone decides', () => {
    expect(isNews(events, 'IN_TRANSIT', null)).toBe(false);
    expect(isNews(events, 'OUT_FOR_DELIVERY', null)).toBe(true);
  });

  it('a late event (older than the newest on the fulfillment) and anything after DELIVERED are not written', () => {
    expect(isNews(events, 'CARRIER_PICKED_UP', '2026-11-20T09:00:00Z')).toBe(false);
    const delivered = [...events, { status: 'DELIVERED', happenedAt: '2026-11-21T10:00:00Z' }];
    expect(isNews(delivered, 'OUT_FOR_DELIVERY', '2026-11-21T11:00:00Z')).toBe(false);
    expect(isNews(delivered, 'DELIVERED', '2026-11-21T10:00:00Z')).toBe(false);
  });
});
