/**
 * Store time: WooCommerce keeps every date twice, the site-local wall clock (`date_created`,
 * the posts table's post_date) and GMT (`date_created_gmt`), both `YYYY-MM-DDTHH:MM:SS` with
 * one-second granularity and no offset. Filters compare against one or the other column,
 * which is where the time trap lives (filterWall).
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Throws naming the option when `timeZone` is not an IANA zone this runtime knows. */
export function checkTimeZone(timeZone: string): void {
  try {
    formatterFor(timeZone);
  } catch {
    throw new Error(`fake WooCommerce: timezone "${timeZone}" is not a known IANA time zone`);
  }
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** GMT wall clock of epoch seconds, as `date_*_gmt` shows it. */
export function gmtWall(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 19);
}

function zoneWall(seconds: number, timeZone: string): string {
  const parts: Record<string, string> = {};
  for (const p of formatterFor(timeZone).formatToParts(new Date(seconds * 1000))) parts[p.type] = p.value;
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}`;
}

/** The zone's offset from UTC at `seconds`, in seconds. */
function offsetAt(seconds: number, timeZone: string): number {
  return (Date.parse(`${zoneWall(seconds, timeZone)}Z`) - seconds * 1000) / 1000;
}

const HOUR = 3600;
/** Offset per zone and hour, for hours without a transition (null: one happens inside). */
const offsets = new Map<string, number | null>();

/**
 * Site-local wall clock of epoch seconds, as `date_*` (no suffix) shows it. Intl is slow for
 * the thousands of orders a list filters, so the offset is cached per hour; an hour holding a
 * DST transition is formatted second by second.
 */
export function localWall(seconds: number, timeZone: string): string {
  const hour = Math.floor(seconds / HOUR);
  const key = `${timeZone}|${hour}`;
  let offset = offsets.get(key);
  if (offset === undefined) {
    const start = offsetAt(hour * HOUR, timeZone);
    offset = start === offsetAt(hour * HOUR + HOUR - 1, timeZone) ? start : null;
    if (offsets.size > 100_000) offsets.clear();
    offsets.set(key, offset);
  }
  return offset === null ? zoneWall(seconds, timeZone) : gmtWall(seconds + offset);
}

/** rest_parse_date's pattern: RFC 3339 with `T`, `t` or a space, optional fraction and offset. */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?([Zz]|[+-]\d{2}(?::\d{2})?)?$/;

interface Parsed {
  wall: string;
  /** Minutes east of UTC when the value carries an offset, else null. */
  offsetMinutes: number | null;
  utcMs: number;
}

function parseDateTime(value: string): Parsed | null {
  const m = DATE_TIME.exec(value);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const utcMs = Date.UTC(y, mo - 1, d, h, mi, s);
  const check = new Date(utcMs);
  // strtotime rejects what does not exist (month 13, 31 April); so do we.
  if (check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) return null;
  const zone = m[7];
  let offsetMinutes: number | null = null;
  if (zone !== undefined) {
    const sign = zone.startsWith('-') ? -1 : 1;
    offsetMinutes = zone === 'Z' || zone === 'z' ? 0 : sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6) || 0));
  }
  return { wall: `${pad(y, 4)}-${pad(mo)}-${pad(d)}T${pad(h)}:${pad(mi)}:${pad(s)}`, offsetMinutes, utcMs };
}

/** Whether a request value passes WordPress's `date-time` format check ("Invalid date." otherwise). */
export function isRestDate(value: string): boolean {
  return parseDateTime(value) !== null;
}

/**
 * The wall clock a date filter value is compared with, as WP_Date_Query builds it: a value
 * without an offset is taken as it stands; one with an offset (`Z`, `+10:00`) is converted
 * to the *site's* wall clock. WooCommerce then compares that string with the local column,
 * or with the GMT column under `dates_are_gmt=true`. So the safe form is a UTC value without
 * an offset plus dates_are_gmt=true; an offset value with dates_are_gmt is off by the site's
 * offset. Null for an invalid value.
 */
export function filterWall(value: string, timeZone: string): string | null {
  const p = parseDateTime(value);
  if (!p) return null;
  if (p.offsetMinutes === null) return p.wall;
  return localWall((p.utcMs - p.offsetMinutes * 60_000) / 1000, timeZone);
}

/**
 * Epoch seconds of a seed date given in GMT: `YYYY-MM-DDTHH:MM:SS`, optionally with a
 * fraction and an offset (then honoured). Null when invalid.
 */
export function parseGmtSeed(value: string): number | null {
  const p = parseDateTime(value);
  if (!p) return null;
  return Math.floor((p.utcMs - (p.offsetMinutes ?? 0) * 60_000) / 1000);
}
