/**
 * What a shop's pull keeps between runs, and where it is within a run. The cursor is the newest
 * platform last-modified value the pulls have read (never this machine's clock) plus the orders
 * that could not be mapped, read again by id on every pull until they map or stop needing a label.
 * It lives in the shop's schedule (shop-import/schedule.ts), so the next run, however it is started, begins there.
 */
import { z } from 'zod';
import { modifiedTime, RETRYABLE_ID } from '../domain/platform-order-checks';

/** Orders kept for another try; beyond it the oldest are reported as dropped from the list (they stay rejected in the pull's result). */
export const MAX_RETRY = 200;

const IsoUtc = z.string().regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'must be an ISO 8601 UTC time to the second');

export const PullCursor = z.strictObject({
  since: IsoUtc.nullable(),
  retry: z.array(z.string().regex(RETRYABLE_ID)).max(MAX_RETRY),
});
export type PullCursor = z.infer<typeof PullCursor>;

export const EMPTY_CURSOR: PullCursor = { since: null, retry: [] };

/**
 * The cursor a pull may go by: a `since` that is no time, or lies beyond this worker's clock plus
 * the tolerance (an older version adopted a store's wrong date), is dropped, so the pull reads
 * `firstPull` back; retry ids that cannot be read again are dropped. `problem` says what was
 * repaired, for a warning; null when the cursor was sound.
 */
export function soundCursor(held: unknown, now: number): { cursor: PullCursor; problem: string | null } {
  const parsed = PullCursor.safeParse(held);
  if (parsed.success) {
    const since = parsed.data.since === null ? null : modifiedTime(parsed.data.since, now);
    if (since === null || since.ok) return { cursor: parsed.data, problem: null };
    return { cursor: { ...parsed.data, since: null }, problem: `since ${since.message}` };
  }
  const fields = typeof held === 'object' && held !== null ? (held as Record<string, unknown>) : {};
  const retry = Array.isArray(fields.retry)
    ? fields.retry.filter((id): id is string => typeof id === 'string' && RETRYABLE_ID.test(id))
    : [];
  const issue = parsed.error.issues[0]!;
  return { cursor: { since: null, retry: retry.slice(-MAX_RETRY) }, problem: `${issue.path.join('.') || 'cursor'}: ${issue.message}` };
}

/**
 * Within one pull: first the retry list, then the changes, page by page. `page` counts the
 * changes-pages read before this position and `seen` holds the ids of the last one, so a store
 * whose paging does not end is found (platforms/order-source.ts).
 */
export type PullPosition =
  | { phase: 'retry' }
  /** `firstPull`: the shop has no cursor yet, so no shipment of ours can be among its fulfilled orders (they are not read). */
  | { phase: 'shopify'; from: string | null; after: string | null; page?: number; seen?: string[]; firstPull?: true }
  | { phase: 'woocommerce'; after: string; exclude: number[]; page?: number; seen?: string[] };

/** The first changes-page: the cursor less the overlap, or the first pull's reach when there is none. */
export function firstChangesPosition(
  platform: 'shopify' | 'woocommerce',
  cursor: PullCursor,
  settings: { overlap: number; firstPull: number },
  now: number,
): PullPosition {
  const fromMs = cursor.since === null ? now - settings.firstPull : Date.parse(cursor.since) - settings.overlap;
  const from = new Date(Math.floor(fromMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  if (platform === 'woocommerce') return { phase: 'woocommerce', after: from, exclude: [] };
  return { phase: 'shopify', from, after: null, ...(cursor.since === null ? { firstPull: true as const } : {}) };
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
  // Only ids that can be read again by id go into the list (a refused order's may be anything); the pull's result reports the rest.
  const retry = [...kept, ...new Set(page.failed.filter((id) => RETRYABLE_ID.test(id) && !kept.includes(id)))];
  const droppedFromRetry = retry.length > MAX_RETRY ? retry.slice(0, retry.length - MAX_RETRY) : [];
  return { cursor: { since, retry: retry.slice(-MAX_RETRY) }, droppedFromRetry };
}

/**
 * A Shopify shop's first pull (no cursor) leaves fulfilled orders out, yet shipments of its orders
 * may exist already (started by `import --from`, labelled before the schedule first ran). So a
 * first pull's cursor is the start of its window, read or not: the next pull reads that window
 * again with fulfilled orders, and every pull after it reads the changes of orders we fulfilled.
 * Before, a first pull that read nothing left the cursor empty, and every later pull was a first
 * pull again: the merchant's edits and cancels after a label never reached its shipment.
 */
export function firstPullCursor(position: PullPosition | { phase: string }, cursor: PullCursor): PullCursor {
  if (!('firstPull' in position) || position.firstPull !== true || position.from === null) return cursor;
  return { ...cursor, since: position.from };
}
