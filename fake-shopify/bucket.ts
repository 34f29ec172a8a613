/**
 * The store's leaky bucket of query-cost points: `maximumAvailable` points, refilled at
 * `restoreRate` a second, continuously from the clock. A query takes its requested cost before
 * it runs and gets back the difference to its actual cost after.
 */
import { z } from 'zod';

export const BucketSettings = z.strictObject({
  maximumAvailable: z.number().int().min(1).max(1_000_000),
  restoreRate: z.number().positive().max(1_000_000),
});
export type BucketSettings = z.infer<typeof BucketSettings>;

export interface ThrottleStatus {
  maximumAvailable: number;
  currentlyAvailable: number;
  restoreRate: number;
}

export class LeakyBucket {
  private available: number;
  private at: number;

  constructor(
    private settings: BucketSettings,
    private readonly now: () => number,
  ) {
    this.available = settings.maximumAvailable;
    this.at = now();
  }

  private refill(): void {
    const t = this.now();
    this.available = Math.min(
      this.settings.maximumAvailable,
      this.available + (Math.max(0, t - this.at) / 1000) * this.settings.restoreRate,
    );
    this.at = t;
  }

  /** New size and rate; what is available now is kept, capped at the new size. */
  set(settings: BucketSettings): void {
    this.refill();
    this.settings = { ...settings };
    this.available = Math.min(this.available, settings.maximumAvailable);
  }

  /** Takes `cost` points; false (nothing taken) when fewer are available. */
  take(cost: number): boolean {
    this.refill();
    if (this.available < cost) return false;
    this.available -= cost;
    return true;
  }

  refund(points: number): void {
    this.refill();
    this.available = Math.min(this.settings.maximumAvailable, this.available + Math.max(0, points));
  }

  status(): ThrottleStatus {
    this.refill();
    const { maximumAvailable, restoreRate } = this.settings;
    return { maximumAvailable, currentlyAvailable: Math.floor(this.available), restoreRate };
  }
}
