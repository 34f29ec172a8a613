/**
 * Request parameters the way the WordPress REST API reads and checks them: query values
 * (`status=a,b`, `status[]=a&status[]=b`), a route's parameters merged with the body, and
 * schema checks that collect every problem into one rest_invalid_param answer, worded as
 * rest_validate_value_from_schema words it.
 */
import { isRestDate } from './clock';
import { invalidParams, type ParamProblem, type Reply } from './replies';

export type Params = Record<string, unknown>;

/**
 * The query string as PHP parses it: `name[]=x` and `name[0]=x` make arrays, a repeated plain
 * name keeps its last value.
 */
export function queryParams(url: URL): Params {
  const out: Params = {};
  for (const [rawKey, value] of url.searchParams) {
    const m = /^([^[\]]+)\[(\d*)\]$/.exec(rawKey);
    if (!m) {
      out[rawKey] = value;
      continue;
    }
    const current = out[m[1]!];
    const list = Array.isArray(current) ? (current as unknown[]) : [];
    list.push(value);
    out[m[1]!] = list;
  }
  return out;
}

/** WordPress's word list: "a and b", "a, b, and c" (wp_sprintf_l). */
export function wpList(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  if (items.length === 2) return `${items[0]} and ${items[1]}`;
  return `${items.slice(0, -1).join(', ')}, and ${items[items.length - 1]}`;
}

/** wp_parse_list: an array as it is, a string split on commas and spaces. */
function parseList(raw: unknown): unknown[] {
  if (Array.isArray(raw)) return raw as unknown[];
  if (typeof raw === 'string') return raw.split(/[\s,]+/).filter((s) => s !== '');
  return [raw];
}

function isInteger(raw: unknown): boolean {
  if (typeof raw === 'number') return Number.isInteger(raw);
  return typeof raw === 'string' && /^\s*[+-]?\d+\s*$/.test(raw);
}

/** Collects schema problems; `answer()` is the 400 to send, or null when all passed. */
export class ParamCheck {
  private readonly problems: ParamProblem[] = [];

  constructor(private readonly params: Params) {}

  /** Records a problem a route finds itself. */
  fail(param: string, code: string, message: string): undefined {
    this.problems.push({ param, code, message });
    return undefined;
  }

  has(name: string): boolean {
    return this.params[name] !== undefined;
  }

  integer(name: string, range: { min?: number; max?: number } = {}, raw = this.params[name]): number | undefined {
    if (raw === undefined) return undefined;
    if (!isInteger(raw)) return this.fail(name, 'rest_invalid_type', `${name} is not of type integer.`);
    const value = Number(raw);
    const { min, max } = range;
    if ((min !== undefined && value < min) || (max !== undefined && value > max)) {
      const message =
        min !== undefined && max !== undefined
          ? `${name} must be between ${min} (inclusive) and ${max} (inclusive)`
          : min !== undefined
            ? `${name} must be greater than or equal to ${min}`
            : `${name} must be less than or equal to ${max}`;
      return this.fail(name, 'rest_out_of_bounds', message);
    }
    return value;
  }

  /** rest_is_boolean: true/false, "true"/"false", 1/0, "1"/"0" and "" (false). */
  boolean(name: string): boolean | undefined {
    const raw = this.params[name];
    if (raw === undefined) return undefined;
    if (raw === true || raw === 'true' || raw === 1 || raw === '1') return true;
    if (raw === false || raw === 'false' || raw === 0 || raw === '0' || raw === '') return false;
    return this.fail(name, 'rest_invalid_type', `${name} is not of type boolean.`);
  }

  string(name: string): string | undefined {
    const raw = this.params[name];
    if (raw === undefined) return undefined;
    if (typeof raw === 'string') return raw;
    // WordPress accepts a number where a string is expected (it casts it).
    if (typeof raw === 'number') return String(raw);
    return this.fail(name, 'rest_invalid_type', `${name} is not of type string.`);
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], raw = this.params[name], label = name): T | undefined {
    if (raw === undefined) return undefined;
    if (typeof raw === 'string' && (allowed as readonly string[]).includes(raw)) return raw as T;
    return this.fail(label, 'rest_not_in_enum', `${label} is not one of ${wpList(allowed)}.`);
  }

  /** An array param of enum items (`status`): each bad item is named `name[i]`. */
  listOf<T extends string>(name: string, allowed: readonly T[]): T[] | undefined {
    const raw = this.params[name];
    if (raw === undefined) return undefined;
    const before = this.problems.length;
    const items = parseList(raw).map((item, i) => this.oneOf(`${name}[${i}]`, allowed, item));
    if (this.problems.length > before) {
      // WordPress reports the array param by its own name, with the item's message.
      const first = this.problems.splice(before)[0]!;
      return this.fail(name, first.code, first.message);
    }
    return items as T[];
  }

  integers(name: string): number[] | undefined {
    const raw = this.params[name];
    if (raw === undefined) return undefined;
    const items = parseList(raw);
    const bad = items.findIndex((item) => !isInteger(item));
    if (bad >= 0) return this.fail(name, 'rest_invalid_type', `${name}[${bad}] is not of type integer.`);
    return items.map(Number);
  }

  dateTime(name: string): string | undefined {
    const raw = this.params[name];
    if (raw === undefined) return undefined;
    if (typeof raw !== 'string' || !isRestDate(raw)) return this.fail(name, 'rest_invalid_date', 'Invalid date.');
    return raw;
  }

  /** An object of string fields (billing, shipping); other fields are left to the caller. */
  stringFields(name: string): Record<string, string> | undefined {
    const raw = this.params[name];
    if (raw === undefined) return undefined;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      return this.fail(name, 'rest_invalid_type', `${name} is not of type object.`);
    }
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
      if (typeof value !== 'string') return this.fail(`${name}[${key}]`, 'rest_invalid_type', `${name}[${key}] is not of type string.`);
      out[key] = value;
    }
    return out;
  }

  answer(): Reply | null {
    return this.problems.length === 0 ? null : invalidParams(this.problems);
  }
}
