/**
 * The `query:` search syntax of Query.orders: `field:value` terms with the comparators
 * `: :> :>= :< :<=`, quoted values, AND / OR / NOT (and a leading `-`), parentheses, and
 * implicit AND between terms. Unknown fields are ignored (they match everything), as Shopify
 * ignores filters it does not know: a misspelt filter silently widens the result.
 */
import { displayFulfillmentStatus } from './fo-state';
import type { OrderRecord } from './model';

type Op = ':' | ':>' | ':>=' | ':<' | ':<=';
export type SearchNode =
  | { kind: 'term'; field: string | null; op: Op; value: string; wantedMs?: number }
  | { kind: 'and' | 'or'; items: SearchNode[] }
  | { kind: 'not'; item: SearchNode };

/** Splits into words, parentheses and quoted runs (a quote may start mid-word: `a:'b c'`). */
function tokenize(text: string): string[] {
  const tokens: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' || c === "'") {
      const end = text.indexOf(c, i + 1);
      const stop = end < 0 ? text.length : end;
      current += text.slice(i, stop + 1);
      i = stop;
    } else if (c === '(' || c === ')' || /\s/.test(c)) {
      if (current !== '') tokens.push(current);
      current = '';
      if (c === '(' || c === ')') tokens.push(c);
    } else current += c;
  }
  if (current !== '') tokens.push(current);
  return tokens;
}

const unquote = (v: string): string => v.replace(/^(["'])(.*)\1$/s, '$2').replace(/^["']/, '');

function term(token: string): SearchNode {
  if (token.startsWith('-') && token.length > 1) return { kind: 'not', item: term(token.slice(1)) };
  const match = /^([A-Za-z_]+)(:>=|:<=|:>|:<|:)(.*)$/s.exec(token);
  if (!match) return { kind: 'term', field: null, op: ':', value: unquote(token) };
  const field = match[1]!.toLowerCase();
  const value = unquote(match[3]!);
  // A date is read once per query, not once per order: a bench store holds 20,000 orders.
  const dated = field === 'updated_at' || field === 'created_at';
  return { kind: 'term', field, op: match[2] as Op, value, ...(dated ? { wantedMs: parseWanted(value) } : {}) };
}

/** Parses leniently: a stray parenthesis or operator is skipped, never an error. */
export function parseSearch(text: string): SearchNode {
  const tokens = tokenize(text);
  let pos = 0;
  const orExpr = (): SearchNode => {
    const items = [andExpr()];
    while (tokens[pos] === 'OR') {
      pos++;
      items.push(andExpr());
    }
    return items.length === 1 ? items[0]! : { kind: 'or', items };
  };
  const andExpr = (): SearchNode => {
    const items: SearchNode[] = [];
    while (pos < tokens.length && tokens[pos] !== ')' && tokens[pos] !== 'OR') {
      if (tokens[pos] === 'AND') pos++;
      else items.push(unary());
    }
    return items.length === 1 ? items[0]! : { kind: 'and', items };
  };
  const unary = (): SearchNode => {
    const token = tokens[pos++]!;
    if (token === 'NOT') return pos < tokens.length ? { kind: 'not', item: unary() } : { kind: 'and', items: [] };
    if (token !== '(') return term(token);
    const inner = orExpr();
    if (tokens[pos] === ')') pos++;
    return inner;
  };
  const items: SearchNode[] = [];
  while (pos < tokens.length) {
    items.push(orExpr());
    if (tokens[pos] === ')') pos++;
  }
  return items.length === 1 ? items[0]! : { kind: 'and', items };
}

export function matches(node: SearchNode, order: OrderRecord): boolean {
  switch (node.kind) {
    case 'and':
      return node.items.every((n) => matches(n, order));
    case 'or':
      return node.items.some((n) => matches(n, order));
    case 'not':
      return !matches(node.item, order);
    case 'term':
      return matchTerm(node, order);
  }
}

/** fulfillment_status values → the display statuses they select (unfulfilled as in REST: not shipped yet or partly). */
const FULFILLMENT_STATUS: Record<string, string[] | null> = {
  any: null,
  unshipped: ['UNFULFILLED', 'ON_HOLD', 'SCHEDULED'],
  unfulfilled: ['UNFULFILLED', 'ON_HOLD', 'SCHEDULED', 'PARTIALLY_FULFILLED'],
  partial: ['PARTIALLY_FULFILLED'],
  shipped: ['FULFILLED'],
  fulfilled: ['FULFILLED'],
  on_hold: ['ON_HOLD'],
  scheduled: ['SCHEDULED'],
};

function matchTerm(t: Extract<SearchNode, { kind: 'term' }>, order: OrderRecord): boolean {
  const value = t.value.toLowerCase();
  switch (t.field) {
    case null:
      return freeText(order, value);
    case 'status':
      return status(order, value);
    case 'fulfillment_status': {
      const wanted = FULFILLMENT_STATUS[value];
      return wanted === undefined ? false : wanted === null || wanted.includes(displayFulfillmentStatus(order));
    }
    case 'financial_status':
      return value === 'any' || order.financialStatus.toLowerCase() === value;
    case 'updated_at':
    case 'created_at':
      return compareDate(t.field === 'updated_at' ? order.updatedAt : order.createdAt, t.op, t.value, t.wantedMs!);
    case 'id':
      return /^\d+$/.test(t.value) && compare(BigInt(order.legacyResourceId), BigInt(t.value), t.op);
    case 'name':
      return order.name.toLowerCase().replace(/^#/, '') === value.replace(/^#/, '');
    case 'tag':
      return order.tags.some((tag) => tag.toLowerCase() === value);
    case 'email':
      return (order.email ?? '').toLowerCase() === value;
    case 'sku':
      return order.lineItems.some((l) => l.sku.toLowerCase() === value);
    default:
      return true;
  }
}

function status(order: OrderRecord, value: string): boolean {
  if (value === 'open') return !order.closed && order.cancelledAt === null;
  if (value === 'closed') return order.closed;
  if (value === 'cancelled') return order.cancelledAt !== null;
  return value === 'any';
}

function freeText(order: OrderRecord, value: string): boolean {
  const haystack = [order.name, order.email ?? '', ...order.tags, ...order.lineItems.map((l) => l.sku)].join(' ').toLowerCase();
  return haystack.includes(value);
}

function compare<T extends number | bigint>(actual: T, wanted: T, op: Op): boolean {
  if (op === ':>') return actual > wanted;
  if (op === ':>=') return actual >= wanted;
  if (op === ':<') return actual < wanted;
  if (op === ':<=') return actual <= wanted;
  return actual === wanted;
}

/**
 * A date-time without a zone is read as UTC, not as the host's local time (which is what
 * Date.parse would do). Shopify may read it in the shop's time zone: unverified, so send a zone.
 */
function parseWanted(raw: string): number {
  const zoneless = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(raw);
  return Date.parse(zoneless ? `${raw.replace(' ', 'T')}Z` : raw);
}

/** A date-only value with `:` selects that UTC day; an unreadable date matches nothing. */
function compareDate(iso: string, op: Op, raw: string, wanted: number): boolean {
  if (Number.isNaN(wanted)) return false;
  const actual = Date.parse(iso);
  if (op === ':' && /^\d{4}-\d{2}-\d{2}$/.test(raw)) return actual >= wanted && actual < wanted + 86_400_000;
  return compare(actual, wanted, op);
}
