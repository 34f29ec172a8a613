/**
 * The rate-limit bench's count of calls made inside a Retry-After (bench/rate-limit.ts): a call
 * counts by when it reached the API, from ON_THE_WIRE_MS after the 429 until its Retry-After ends.
 */
import { describe, expect, it } from 'vitest';
import { callsDuringRetryAfter, ON_THE_WIRE_MS } from '../bench/rate-limit';

const answered = (receivedAt: number, at: number, status = 201) => ({
  receivedAt,
  at,
  status,
  retryAfter: null,
  endpoint: 'GET /tracking/{id}',
});
const limited = (at: number, retryAfter = '1') => ({ receivedAt: at - 5, at, status: 429, retryAfter, endpoint: 'POST /labels' });

describe('calls during a Retry-After', () => {
  it('counts a call that arrived inside the hold, with how long after the 429, and whether it met a 429 too', () => {
    const calls = callsDuringRetryAfter([limited(1000), answered(1300, 1310), limited(1800)]);
    expect(calls).toEqual([
      { afterMs: 300, limited: false, limitedAt: 1000, endpoint: 'GET /tracking/{id}', noise: false },
      { afterMs: 795, limited: true, limitedAt: 1000, endpoint: 'POST /labels', noise: false },
    ]);
  });

  it('does not count a call already on the wire: sent before the 429, or arriving within the grace, however late its answer', () => {
    expect(callsDuringRetryAfter([limited(1000), answered(990, 1500), answered(1000 + ON_THE_WIRE_MS - 1, 1400)])).toEqual([]);
  });

  it('does not count a call after the Retry-After ended, and reads its seconds', () => {
    expect(callsDuringRetryAfter([limited(1000, '2'), answered(2900, 2910), answered(3000, 3010)])).toEqual([
      { afterMs: 1900, limited: false, limitedAt: 1000, endpoint: 'GET /tracking/{id}', noise: false },
    ]);
  });

  it("tells a call inside a noise 429's Retry-After alone (the fake's random 429s) from one inside the limit's", () => {
    const noise = { ...limited(1000, '3'), fault: 'rate-limited' as const };
    const limit = { ...limited(2000), fault: 'rate-limit' as const };
    expect(callsDuringRetryAfter([noise, answered(1500, 1510), limit, answered(2500, 2510)])).toEqual([
      { afterMs: 500, limited: false, limitedAt: 1000, endpoint: 'GET /tracking/{id}', noise: true },
      // The limit's 429 itself arrived inside the noise 429's hold.
      { afterMs: 995, limited: true, limitedAt: 1000, endpoint: 'POST /labels', noise: true },
      // In both holds: the limit's.
      { afterMs: 500, limited: false, limitedAt: 2000, endpoint: 'GET /tracking/{id}', noise: false },
    ]);
  });
});
