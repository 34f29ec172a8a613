/**
 * Spends one store's GraphQL budget the way Shopify meters it: a leaky bucket of cost points per
 * app and store, refilled at `restoreRate` per second. Every answer carries the bucket's state
 * (`extensions.cost.throttleStatus`); a call takes its requested cost from this worker's view of
 * the bucket before it is sent, and waits `(cost − available) / restoreRate` when the bucket
 * cannot pay, so the store's restore rate is spent without being throttled. Several workers each
 * keep a view; each answer corrects it. Until the first answer, one call at a time goes out.
 *
 * A store's numbers are checked before they are believed (ThrottleStatus: Shopify's largest plan
 * has a bucket of 20,000 points restoring 2,000 a second; an answer far outside that is ignored)
 * and every wait is clamped to MAX_BUCKET_WAIT_MS. A view that has said "wait" that long without
 * an answer since lets one probe call through, so one bad answer heals with the next.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { clampWaitMs } from '../../shipping-api/retry-after';

/** Far above any plan's bucket (20,000 points, 2,000 a second), far below what breaks arithmetic. */
const MAX_POINTS = 100_000;

/** `extensions.cost.throttleStatus` as a sane store sends it. */
export const ThrottleStatus = z.object({
  maximumAvailable: z.number().min(1).max(MAX_POINTS),
  currentlyAvailable: z.number().min(-MAX_POINTS).max(MAX_POINTS),
  restoreRate: z.number().min(0.5).max(MAX_POINTS),
});
export type ThrottleStatus = z.infer<typeof ThrottleStatus>;

/** `extensions.cost` of an answer: the query's cost and the bucket after it. */
export const QueryCost = z.object({
  requestedQueryCost: z.number().min(0).max(MAX_POINTS),
  actualQueryCost: z.number().min(0).max(MAX_POINTS).nullable().optional(),
  throttleStatus: ThrottleStatus,
});

/**
 * The longest a call waits for points: a development store's bucket (40 points at 2 a second)
 * fills in 20 s. Past it, the view is stale and one probe goes out.
 */
export const MAX_BUCKET_WAIT_MS = 60_000;

/** A waiting call looks again at least this often: an answer may have changed the view. */
const RECHECK_MS = 500;

export class CostBucket {
  /** Points left after every call taken (null until the store has answered once). */
  private available: number | null = null;
  private maximum = 0;
  private restoreRate = 0;
  private at = 0;
  /** Since when the view has said "wait" with no answer and no call taken (null: it has not). */
  private waitingSince: number | null = null;
  /** Points taken by calls not yet answered. */
  private outstanding = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Takes `cost` points, waiting for them up to `maxWaitMs`; resolves with the release to call
   * once the answer is in. Rejects with BudgetWait (how long the points will take) when the wait
   * would be longer, so the caller retries later instead of holding a slot.
   */
  async take(cost: number, maxWaitMs: number, signal?: AbortSignal): Promise<() => void> {
    const deadline = this.now() + maxWaitMs;
    for (;;) {
      const waitMs = this.waitFor(cost);
      if (waitMs === 0) return this.hold(cost);
      if (this.now() + waitMs > deadline) throw new BudgetWait(waitMs);
      await sleep(Math.min(waitMs, RECHECK_MS), undefined, { signal });
    }
  }

  /** Points the store restores a second, as it last said (0 before its first answer). */
  get restorePerSecond(): number {
    return this.restoreRate;
  }

  /** Adopts the store's own account of the bucket, less what is taken and not yet answered. */
  observe(status: ThrottleStatus): void {
    this.maximum = status.maximumAvailable;
    this.restoreRate = Math.max(status.restoreRate, 0.001);
    this.available = Math.min(status.maximumAvailable, status.currentlyAvailable) - this.outstanding;
    this.at = this.now();
    this.waitingSince = null;
  }

  /** Wait for a throttled call: (requested − available) / restoreRate, as Shopify documents it. */
  throttledWaitMs(requested: number, status: ThrottleStatus): number {
    this.observe(status);
    const missing = requested - status.currentlyAvailable;
    return clampWaitMs(Math.ceil((Math.max(missing, 0) / status.restoreRate) * 1000), { minMs: 100, maxMs: MAX_BUCKET_WAIT_MS });
  }

  /** 0 when the points are there now, else how long until they are. */
  private waitFor(cost: number): number {
    if (this.available === null) return this.outstanding === 0 ? 0 : RECHECK_MS; // one probe until the store tells
    const now = this.now();
    this.available = Math.min(this.maximum - this.outstanding, this.available + ((now - this.at) / 1000) * this.restoreRate);
    this.at = now;
    // A call dearer than the whole bucket goes when the bucket is full (the store refuses it for ever otherwise).
    const needed = Math.min(cost, this.maximum);
    if (this.available >= needed) return 0;
    // "Wait" for the longest wait with no answer: the view is not believed any more, one probe goes and its answer corrects it.
    this.waitingSince ??= now;
    const untilProbe = this.waitingSince + MAX_BUCKET_WAIT_MS - now;
    if (untilProbe <= 0) return this.outstanding === 0 ? 0 : RECHECK_MS;
    return clampWaitMs(Math.ceil(((needed - this.available) / this.restoreRate) * 1000), { minMs: 1, maxMs: untilProbe });
  }

  private hold(cost: number): () => void {
    this.waitingSince = null;
    if (this.available !== null) this.available -= cost;
    this.outstanding += cost;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.outstanding -= cost;
    };
  }
}

/** The bucket needs `ms` to pay for the call: longer than the caller may wait. */
export class BudgetWait extends Error {
  constructor(readonly ms: number) {
    super(`the store's GraphQL budget needs ${Math.ceil(ms / 1000)} s`);
  }
}
