/**
 * The rule for a failed call on its own (afterFailure in retry-policy.ts): when the next attempt
 * goes, whether it goes at all, and which failures must be recorded for it.
 */
import { describe, expect, it } from 'vitest';
import { afterFailure, type AttemptProgress } from '../workflow-definitions/activity-failures';

const serverError = { kind: 'server_error', retryable: true, retryAfterSeconds: undefined } as const;
const brokenBody = { kind: 'contract_violation', retryable: false, retryAfterSeconds: undefined } as const;
const rateLimited = { kind: 'rate_limited', retryable: true, retryAfterSeconds: 7 } as const;

/** Fails every attempt for `windowMs`, as the server would schedule them; counts what an activity would send. */
function outage(windowMs: number, capMs?: number) {
  let details: AttemptProgress = {};
  let elapsed = 0;
  const delays: number[] = [];
  let heartbeats = 0;
  while (elapsed < windowMs) {
    const next = afterFailure(serverError, details, elapsed, capMs);
    if (next.record) {
      heartbeats++;
      details = { failuresInARow: next.failuresInARow, notBefore: next.notBefore };
    }
    delays.push(next.delayMs);
    elapsed += next.delayMs;
  }
  return { attempts: delays.length, heartbeats, delays };
}

describe('afterFailure', () => {
  it('a 24-hour 5xx outage: 1 s doubling to the 5-minute cap, heartbeats only until the cap', () => {
    const { attempts, heartbeats, delays } = outage(24 * 3_600_000);
    expect(delays.slice(0, 11)).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300].map((s) => s * 1000));
    expect(new Set(delays.slice(9))).toEqual(new Set([300_000]));
    expect(attempts).toBe(296);
    expect(heartbeats).toBe(10);
  });

  it('with a small cap, failures are still counted until a broken answer has had its 3 retries', () => {
    let details: AttemptProgress = {};
    const seen: Array<{ retryable: boolean; record: boolean }> = [];
    for (let i = 0; i < 6; i++) {
      const next = afterFailure(brokenBody, details, 0, 1_000);
      seen.push({ retryable: next.retryable, record: next.record });
      if (next.record) details = { failuresInARow: next.failuresInARow };
    }
    // Asked again 3 times, then it stands, though every delay was at the 1 s cap from the start.
    expect(seen.map((s) => s.retryable)).toEqual([true, true, true, false, false, false]);
    expect(seen.slice(0, 4).every((s) => s.record)).toBe(true);
  });

  it('a 429 waits its Retry-After, keeps the streak and is always recorded (the next attempt must know when)', () => {
    const atCap = { failuresInARow: 12, notBefore: 0 };
    const next = afterFailure(rateLimited, atCap, 1_000);
    expect(next).toMatchObject({ delayMs: 7_000, failuresInARow: 12, notBefore: 8_000, record: true, retryable: true });
    expect(afterFailure(serverError, atCap, 1_000)).toMatchObject({ delayMs: 300_000, failuresInARow: 13, record: false });
  });
});
