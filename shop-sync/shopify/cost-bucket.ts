/**
 * Spends one store's GraphQL budget the way Shopify meters it: a leaky bucket of cost points per
 * app and store, refilled at `restoreRate` per second. Every answer carries the bucket's state
 * (`extensions.cost.throttleStatus`); a call takes its requested cost from this worker's view of
 * the bucket before it is sent, and waits `(cost − available) / restoreRate` when the bucket
 * cannot pay, so the store's restore rate is spent without being throttled. Several workers each
 * keep a view; each answer corrects it. Until the first answer, one call at a time goes out.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface ThrottleStatus {
  maximumAvailable: number;
  currentlyAvailable: number;
  restoreRate: number;
}

/** A waiting call looks again at least this often: an answer may have changed the view. */
const RECHECK_MS = 500;

export class CostBucket {
  /** Points left after every call taken (null until the store has answered once). */
  private available: number | null = null;
  private maximum = 0;
  private restoreRate = 0;
  private at = 0;
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
  }

  /** Wait for a throttled call: (requested − available) / restoreRate, as Shopify documents it. */
  throttledWaitMs(requested: number, status: ThrottleStatus): number {
    this.observe(status);
    const missing = requested - status.currentlyAvailable;
    return Math.max(100, Math.ceil((Math.max(missing, 0) / Math.max(status.restoreRate, 0.001)) * 1000));
  }

  /** 0 when the points are there now, else how long until they are. */
  private waitFor(cost: number): number {
    if (this.available === null) return this.outstanding === 0 ? 0 : RECHECK_MS; // one probe until the store tells
    const now = this.now();
    this.available = Math.min(this.maximum - this.outstanding, this.available + ((now - this.at) / 1000) * this.restoreRate);
    this.at = now;
    // A call dearer than the whole bucket goes when the bucket is full (the store refuses it for ever otherwise).
    const needed = Math.min(cost, this.maximum);
    return this.available >= needed ? 0 : Math.ceil(((needed - this.available) / this.restoreRate) * 1000);
  }

  private hold(cost: number): () => void {
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
