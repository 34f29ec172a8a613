/**
 * What a shop's pull keeps between runs, and where it is within a run. The cursor is the newest
 * platform last-modified value the pulls have read (never this machine's clock) plus the orders
 * that could not be mapped, read again by id on every pull until they map or stop needing a label.
 * It lives in the shop's schedule (schedule.ts), so the next run, however it is started, begins there.
 */
import { z } from 'zod';

/** Orders kept for another try; beyond it the oldest are reported as dropped from the list (they stay rejected in the pull's result). */
export const MAX_RETRY = 200;

const IsoUtc = z.string().regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'must be an ISO 8601 UTC time to the second');

export const PullCursor = z.strictObject({
  since: IsoUtc.nullable(),
  retry: z.array(z.string().regex(/^\d{1,20}$/)).max(MAX_RETRY),
});
export type PullCursor = z.infer<typeof PullCursor>;

export const EMPTY_CURSOR: PullCursor = { since: null, retry: [] };

/** Within one pull: first the retry list, then the changes, page by page. */
export type PullPosition =
  | { phase: 'retry' }
  | { phase: 'shopify'; from: string | null; after: string | null }
  | { phase: 'woocommerce'; after: string; exclude: number[] };

/** The first changes-page: the cursor less the overlap, or the first pull's reach when there is none. */
export function firstChangesPosition(
  platform: 'shopify' | 'woocommerce',
  cursor: PullCursor,
  settings: { overlap: number; firstPull: number },
  now: number,
): PullPosition {
  const fromMs = cursor.since === null ? now - settings.firstPull : Date.parse(cursor.since) - settings.overlap;
  const from = new Date(Math.floor(fromMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  return platform === 'shopify' ? { phase: 'shopify', from, after: null } : { phase: 'woocommerce', after: from, exclude: [] };
}

/** The cursor after a page: the newest change read, the retry list with this page's verdicts. */
export function advanceCursor(
  cursor: PullCursor,
  page: { newest: string | null; failed: readonly string[]; settled: readonly string[] },
): { cursor: PullCursor; droppedFromRetry: string[] } {
  const since = page.newest !== null && (cursor.since === null || page.newest > cursor.since) ? page.newest : cursor.since;
  const settled = new Set(page.settled);
  // An order failing again keeps its place: when the list is full, the longest-failing go first.
  const kept = cursor.retry.filter((id) => !settled.has(id));
  const retry = [...kept, ...new Set(page.failed.filter((id) => !kept.includes(id)))];
  const droppedFromRetry = retry.length > MAX_RETRY ? retry.slice(0, retry.length - MAX_RETRY) : [];
  return { cursor: { since, retry: retry.slice(-MAX_RETRY) }, droppedFromRetry };
}
