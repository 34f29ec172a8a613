/**
 * Spends one store's GraphQL budget the way Shopify meters it: a leaky bucket of cost points per
 * app and store, refilled at `restoreRate` per second. Every answer carries the bucket's state
 * (`extensions.cost.throttleStatus`); calls reserve their requested cost first and wait
 * `(cost − available) / restoreRate` when the bucket cannot pay, so the store's restore rate is
 * spent without being throttled. Several workers each keep a view; each answer corrects it.
 */

export interface ThrottleStatus {
  maximumAvailable: number;
  currentlyAvailable: number;
  restoreRate: number;
}

export class CostBucket {
  /** Points left after every reservation made (negative: calls queued behind the refill). */
  private available: number | null = null;
  private maximum = 0;
  private restoreRate = 0;
  private at = 0;
  /** Points reserved by calls not yet answered (waiting or in flight). */
  private outstanding = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Reserves `cost` points and says how long to wait before sending; null when the wait would
   * pass `maxWaitMs` (nothing is reserved then: the caller retries later, at `retryInMs`).
   */
  reserve(cost: number, maxWaitMs: number): { waitMs: number; release: () => void } | { retryInMs: number } {
    this.refill();
    if (this.available === null) return this.take(cost, 0); // nothing known yet: the first answer tells
    const after = this.available - cost;
    const waitMs = after >= 0 ? 0 : Math.ceil((-after / this.restoreRate) * 1000);
    if (waitMs > maxWaitMs) return { retryInMs: waitMs };
    this.available = after;
    return this.take(cost, waitMs);
  }

  /** Adopts the store's own account of the bucket, less what is reserved and not yet spent. */
  observe(status: ThrottleStatus): void {
    this.maximum = status.maximumAvailable;
    this.restoreRate = Math.max(status.restoreRate, 0.001);
    this.available = Math.min(status.maximumAvailable, status.currentlyAvailable) - this.outstanding;
    this.at = this.now();
  }

  /** Wait for a throttled call: (requested − available) / restoreRate, as Shopify documents it. */
  throttledWaitMs(requested: number, status: ThrottleStatus): number {
    this.observe(status);
    const missing = requested - status.currentlyAvailable;
    return Math.max(100, Math.ceil((Math.max(missing, 0) / Math.max(status.restoreRate, 0.001)) * 1000));
  }

  private take(cost: number, waitMs: number): { waitMs: number; release: () => void } {
    this.outstanding += cost;
    let released = false;
    return {
      waitMs,
      release: () => {
        if (released) return;
        released = true;
        this.outstanding -= cost;
      },
    };
  }

  private refill(): void {
    if (this.available === null) return;
    const now = this.now();
    this.available = Math.min(this.maximum - this.outstanding, this.available + ((now - this.at) / 1000) * this.restoreRate);
    this.at = now;
  }
}
