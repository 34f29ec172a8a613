/**
 * Retry-After, read once for every HTTP answer the worker gets (the shipping API's and the shops'):
 * delay-seconds or an HTTP-date (RFC 9110 §10.2.3). No dependencies: the account workflow bundles
 * the bounds.
 */

/**
 * The longest hold a shipping API answer can put on the account, and so on the whole fleet: a
 * Retry-After of 999999999 or 1e23 once held every worker for decades. Every hold (this worker's
 * 429, one relayed by the fleet, one read back from the account workflow at start) is bounded by it.
 */
export const MAX_RETRY_AFTER_SECONDS = 15 * 60;
export const MAX_HOLD_MS = MAX_RETRY_AFTER_SECONDS * 1000;

/** The header's wait in ms, as the server wrote it (unbounded, may be ≤ 0), or undefined when it is neither form. */
export function readRetryAfterMs(
  header: string | string[] | undefined,
  nowMs: number,
): { ms: number; form: 'seconds' | 'date' } | undefined {
  const raw = (Array.isArray(header) ? header[0] : header)?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (/^\d+$/.test(raw)) {
    const ms = Number(raw) * 1000;
    return Number.isFinite(ms) ? { ms, form: 'seconds' } : undefined;
  }
  // An HTTP-date names a weekday and a month; Date.parse would also take "1e3" or "2030".
  if (!/[a-z]{3}/i.test(raw)) return undefined;
  const at = Date.parse(raw);
  return Number.isFinite(at) ? { ms: at - nowMs, form: 'date' } : undefined;
}

/** A hold until `until` (epoch ms), no later than MAX_HOLD_MS from `nowMs`. */
export function boundHold(until: number, nowMs: number): number {
  if (!Number.isFinite(until)) return until > 0 ? nowMs + MAX_HOLD_MS : 0;
  return Math.min(until, nowMs + MAX_HOLD_MS);
}

/** The range a wait may take: at least `minMs`, at most `maxMs` (both finite). */
export interface WaitBounds {
  minMs: number;
  maxMs: number;
}

/**
 * The one clamp every wait in ms passes through before it reaches a timer or a retry delay
 * (Retry-After of a shop, a Shopify bucket's wait, a failure's next delay): NaN or undefined
 * becomes `fallbackMs`, anything else (±Infinity included) the nearest value within `bounds`.
 */
export function clampWaitMs(ms: number | undefined, bounds: WaitBounds, fallbackMs = bounds.minMs): number {
  const wanted = ms === undefined || Number.isNaN(ms) ? fallbackMs : ms;
  return Math.min(bounds.maxMs, Math.max(bounds.minMs, wanted));
}
