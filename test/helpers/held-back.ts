/**
 * Labels held back by the shipping API (429 + Retry-After 1 s on POST /labels), as the tests of
 * merchants acting on an order before its label use it.
 */
import type { FakeShippingApi } from '../../fake-shipping-api/types';

/** Every label answers 429 + Retry-After 1 s until the returned function is called. */
export function holdLabelsBack(fake: FakeShippingApi): () => void {
  fake.setFaults({ rateLimitedRate: 1, rateLimitedRetryAfter: { minSeconds: 1, maxSeconds: 1 }, endpoints: ['POST /labels'] });
  return () => void fake.setFaults({ rateLimitedRate: 0, endpoints: null });
}

/**
 * How many of the order's labels (one per parcel, by idempotency key) the API has answered 429.
 * Read on the API's side: an attempt that meets an account the pace already holds waits inside
 * the regular activity and never reaches the shipment's state as a 429, so waiting for
 * `lastError` races with the pace.
 */
export function labelsHeldBack(fake: FakeShippingApi, customerOrderNumber: string): number {
  const keys = fake
    .requestLog()
    .filter((r) => r.endpoint === 'POST /labels' && r.status === 429 && r.customerOrderNumber === customerOrderNumber)
    .map((r) => r.idempotencyKey);
  return new Set(keys).size;
}
