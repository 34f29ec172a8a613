/**
 * When a reading of an order is taken: this worker's clock just before the request that reads
 * it is sent, in milliseconds, strictly increasing within the process (two requests in one
 * millisecond, or a clock stepped back, still get increasing stamps). It orders readings that the
 * platforms' modified times cannot: both are to the second, so two readings within one second
 * (the schedule's pull and a webhook's, the label's check) have the same `modifiedAt`, and the
 * one taken later must win whichever reaches the shipment first (domain/shop-order.ts
 * `readBefore`). A reading whose answer came before another's request was sent has the smaller
 * stamp, on one worker and, with clocks kept in step (NTP), across workers and restarts.
 */
let last = 0;

export function readStamp(now: number = Date.now()): string {
  last = Math.max(Math.floor(now), last + 1);
  return new Date(last).toISOString();
}
