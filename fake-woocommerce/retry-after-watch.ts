/**
 * Counts calls that come before a Retry-After the store gave has ended: per order (a request of
 * an order's routes while that order was told to wait) and for the store as a whole. A request
 * that arrives within `inFlightMs` of the busy page going out may have been sent before the
 * client could read it, so the store-wide count leaves it out; the per-order one cannot have
 * that excuse (a client sends one request of an order at a time).
 */

export class RetryAfterWatch {
  private readonly orders = new Map<number, number>();
  private store: { told: number; until: number } | null = null;

  constructor(private readonly inFlightMs = 100) {}

  /** A busy page with Retry-After `seconds` went out at `now` to a request of `orderId` (undefined: not an order's route). */
  told(orderId: number | undefined, seconds: number, now: number): void {
    const until = now + seconds * 1000;
    if (orderId !== undefined) this.orders.set(orderId, Math.max(this.orders.get(orderId) ?? 0, until));
    if (!this.store || this.store.until < until) this.store = { told: now, until };
  }

  /** A request arrives: whether it is early for its order, and for the store. */
  arrive(orderId: number | undefined, now: number): { order: boolean; store: boolean } {
    const until = orderId === undefined ? undefined : this.orders.get(orderId);
    if (until !== undefined && until <= now) this.orders.delete(orderId!);
    const store = this.store !== null && now < this.store.until && now - this.store.told >= this.inFlightMs;
    return { order: until !== undefined && now < until, store };
  }
}
