/**
 * What a store's order must be before the import believes it, the same for Shopify and
 * WooCommerce: every text bounded and free of control and direction-override characters, every
 * number finite and in range, the last-modified time a real time no later than this worker's
 * clock plus a tolerance. The readers' zod schemas use these pieces per order, so an order that
 * fails is refused alone (a rejection with its platform id and the field path, kept in the retry
 * list) and the rest of its page goes on; a refused order never moves the cursor.
 */
import { z } from 'zod';
import { CONTROL_CHARACTER } from '../shipping-api/contract';
import { PLATFORM_ORDER_ID } from './shop-order';
import type { RefusedOrder } from './platform-order';

export const ORDER_LIMITS = {
  /** Characters of one text field (a name, an address line, a title, an e-mail): far above real ones, far below a page's budget. */
  textChars: 500,
  /** An order's name or number. */
  nameChars: 100,
  /** Lines of one order: Shopify reads 40 at most, a WooCommerce order of more is for a person. */
  lines: 500,
  /** Units of one line. */
  quantity: 100_000,
  /** A unit price, in the order's currency. */
  price: 1e9,
  /** A unit's weight in kilograms (a pallet, not a freight train). */
  unitWeightKg: 1_000,
  /** A modified time this far ahead of the worker's clock is a wrong clock, not an order: it would hold the cursor for good. */
  futureToleranceMs: 10 * 60_000,
  /** Characters of a refused order's id kept in reports (the retry list keeps only ids that can be read again). */
  idChars: 40,
} as const;

/** Direction overrides and isolates (U+202A–U+202E, U+2066–U+2069): they make a label or a log line read other than it is. */
const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069]/;

/** A text field as a sane store sends it. */
export const StoreText = (max: number = ORDER_LIMITS.textChars) =>
  z
    .string()
    .max(max, `longer than ${max} characters`)
    .refine((t) => !CONTROL_CHARACTER.test(t) && !BIDI_CONTROL.test(t), 'holds control or direction-override characters');

/** A currency as ISO 4217 writes it. */
export const StoreCurrency = z.string().regex(/^[A-Z]{3}$/, 'must be a three-letter ISO 4217 currency code');

/** A platform's numeric order id as text: what the retry list holds and the retry queries send. */
export const RETRYABLE_ID = PLATFORM_ORDER_ID;

/** A store's last-modified time → ISO UTC to the second, or why it cannot be the cursor. */
export function modifiedTime(text: string, now: number, assumeUtc = false): { ok: true; value: string } | { ok: false; message: string } {
  const withZone = assumeUtc && !/(Z|[+-]\d\d:?\d\d)$/.test(text) ? `${text}Z` : text;
  const ms = Date.parse(withZone);
  const shown = JSON.stringify(clip(text, ORDER_LIMITS.idChars));
  if (Number.isNaN(ms)) return { ok: false, message: `${shown} is not a time` };
  if (ms > now + ORDER_LIMITS.futureToleranceMs)
    return { ok: false, message: `${shown} is in the future (this worker's clock says ${new Date(now).toISOString()})` };
  return { ok: true, value: new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z') };
}

/** An order the reader's schema refused: its id and name as far as they can be read, and the first problem with its path. */
export function refusedOrder(raw: unknown, idField: string, error: z.ZodError, prefix = ''): RefusedOrder {
  const issue = error.issues[0]!;
  const path = issue.path.map(String).join('.');
  return refused(raw, idField, { field: `${prefix}${path || '(order)'}`, message: issue.message });
}

/** An order refused for `problem`, named by what it says of itself (clipped: a hostile id stays short). */
export function refused(raw: unknown, idField: string, problem: { field: string; message: string }): RefusedOrder {
  const fields = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  const id = fields[idField];
  const name = fields.name ?? fields.number;
  return {
    refused: true,
    platformOrderId: typeof id === 'string' || typeof id === 'number' ? clip(String(id), ORDER_LIMITS.idChars) : '(none)',
    name: typeof name === 'string' || typeof name === 'number' ? clip(String(name), ORDER_LIMITS.idChars) : null,
    problem,
  };
}

/** At most `max` characters, control characters shown as U+FFFD, with … when cut. */
export function clip(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex -- control characters are what it replaces
  const safe = text.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '\ufffd');
  return safe.length > max ? `${safe.slice(0, max)}…` : safe;
}
