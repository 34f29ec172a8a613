/**
 * A WooCommerce store's time zone, as its orders show it: each order carries its dates twice,
 * in the site's local time (`date_modified`) and in GMT (`date_modified_gmt`), both without an
 * offset, so their difference is the site's offset at that moment. A date written to the store
 * (a tracking item's `date_shipped`) is the store's calendar day, not UTC's.
 */

const WALL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;
/** Offsets on Earth lie within −12 h … +14 h, in steps of 15 minutes. */
const MAX_OFFSET_MS = 14 * 3_600_000;
const STEP_MS = 15 * 60_000;

/** The site's offset from UTC in ms, from one of its orders; 0 (UTC) when the order's dates do not tell. */
export function storeOffsetMs(order: { date_modified?: string | null; date_modified_gmt?: string | null }): number {
  const local = order.date_modified ?? '';
  const gmt = order.date_modified_gmt ?? '';
  if (!WALL.test(local) || !WALL.test(gmt)) return 0;
  const offset = Date.parse(`${local}Z`) - Date.parse(`${gmt}Z`);
  if (!Number.isFinite(offset) || Math.abs(offset) > MAX_OFFSET_MS) return 0;
  return Math.round(offset / STEP_MS) * STEP_MS;
}

/** `YYYY-MM-DD` of `nowMs` in a store `offsetMs` from UTC. */
export function storeDate(nowMs: number, offsetMs: number): string {
  return new Date(nowMs + offsetMs).toISOString().slice(0, 10);
}
