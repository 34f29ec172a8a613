/**
 * GET /wc/v3/orders: WooCommerce's collection query over the fake's orders. Statuses as an
 * array or comma list; created (`after`/`before`) and modified (`modified_after`/`_before`)
 * filters against the site-local dates unless `dates_are_gmt` (the time trap, see clock.ts);
 * `orderby` with the id as tie-break in the same direction; offset paging computed at request
 * time, so an order created or modified between two page requests shifts the pages (drift).
 * Headers X-WP-Total, X-WP-TotalPages and Link (rel="prev"/"next") as WooCommerce sends them.
 *
 * Ties: WooCommerce turns orderby=date into "date ID" (the id breaks ties, same direction), but
 * orderby=modified is a bare `ORDER BY post_modified` (HPOS: date_updated_gmt) and MySQL leaves
 * tied rows in no promised order. The fake breaks ties on the id (orderby=modified&order=asc:
 * id ascending); listTies 'random' shuffles them per request instead, for clients that must not
 * rely on it. Sorting by `modified`/`date` uses the site-local column, as the posts table does:
 * in a DST zone the hour repeated in autumn sorts out of GMT order.
 *
 * Reads here never bump date_modified, HPOS or not: the HPOS quirk is on viewing one order.
 */
import { filterWall, gmtWall, localWall } from '../clock';
import { ORDER_STATUSES } from '../defaults';
import { orderJson } from '../order-json';
import { ParamCheck } from '../params';
import type { Reply } from '../replies';
import type { StoredOrder } from '../store';
import type { RouteContext } from './context';

const LIST_STATUSES = ['any', 'trash', ...ORDER_STATUSES] as const;
const ORDER_BY = ['date', 'id', 'include', 'title', 'slug', 'modified'] as const;
const DATE_FILTERS = [
  { param: 'after', column: 'created', op: 'after' },
  { param: 'before', column: 'created', op: 'before' },
  { param: 'modified_after', column: 'modified', op: 'after' },
  { param: 'modified_before', column: 'modified', op: 'before' },
] as const;

interface DateFilter {
  column: 'created' | 'modified';
  op: 'after' | 'before';
  wall: string;
}

interface ListQuery {
  page: number;
  perPage: number;
  offset: number | undefined;
  order: 'asc' | 'desc';
  orderBy: (typeof ORDER_BY)[number];
  statuses: Array<(typeof LIST_STATUSES)[number]>;
  include: number[] | undefined;
  exclude: number[] | undefined;
  gmt: boolean;
  dates: DateFilter[];
}

/** Checks the parameters in the order WooCommerce registers them (the 400 lists them so). */
function parseQuery(ctx: RouteContext): ListQuery | Reply {
  const p = new ParamCheck(ctx.params);
  const page = p.integer('page', { min: 1 }) ?? 1;
  const perPage = p.integer('per_page', { min: 1, max: 100 }) ?? 10;
  const raw = DATE_FILTERS.map((f) => ({ ...f, value: p.dateTime(f.param) }));
  const gmt = p.boolean('dates_are_gmt') ?? false;
  const exclude = p.integers('exclude');
  const include = p.integers('include');
  const offset = p.integer('offset');
  const order = p.oneOf('order', ['asc', 'desc'] as const) ?? 'desc';
  const orderBy = p.oneOf('orderby', ORDER_BY) ?? 'date';
  const statuses = p.listOf('status', LIST_STATUSES) ?? ['any'];
  const bad = p.answer() ?? ctx.permit();
  if (bad) return bad;
  const dates = raw.flatMap((f) =>
    f.value === undefined ? [] : [{ column: f.column, op: f.op, wall: filterWall(f.value, ctx.state.timezone)! }],
  );
  return { page, perPage, offset, order, orderBy, statuses, include, exclude, gmt, dates };
}

/** The column a filter reads: the site-local date, or the GMT one under dates_are_gmt. */
function column(order: StoredOrder, which: DateFilter['column'], gmt: boolean, tz: string): string {
  const seconds = which === 'created' ? order.createdAt : order.modifiedAt;
  return gmt ? gmtWall(seconds) : localWall(seconds, tz);
}

function selected(order: StoredOrder, q: ListQuery, tz: string): boolean {
  const statusOk = q.statuses.some((s) => (s === 'any' ? order.status !== 'checkout-draft' : s === order.status));
  if (!statusOk) return false;
  if (q.include && q.include.length > 0 && !q.include.includes(order.id)) return false;
  if (q.exclude?.includes(order.id)) return false;
  // WP_Date_Query: strictly after / strictly before.
  return q.dates.every((f) => {
    const value = column(order, f.column, q.gmt, tz);
    return f.op === 'after' ? value > f.wall : value < f.wall;
  });
}

function sortKey(order: StoredOrder, q: ListQuery, tz: string): string | number {
  switch (q.orderBy) {
    case 'date':
      return localWall(order.createdAt, tz);
    case 'modified':
      return localWall(order.modifiedAt, tz);
    case 'include':
      return q.include && q.include.length > 0 ? q.include.indexOf(order.id) : localWall(order.createdAt, tz);
    default:
      return order.id;
  }
}

function sorted(orders: StoredOrder[], q: ListQuery, tz: string, tieRandom: (() => number) | null): StoredOrder[] {
  const dir = q.order === 'asc' ? 1 : -1;
  // orderby=include keeps the list's order whatever `order` says.
  const keyDir = q.orderBy === 'include' && q.include && q.include.length > 0 ? 1 : dir;
  const ties = q.orderBy === 'id' || q.orderBy === 'date' || tieRandom === null ? null : tieRandom;
  return orders
    .map((o) => ({ o, key: sortKey(o, q, tz), tie: ties === null ? dir * o.id : ties() }))
    .sort((a, b) => (a.key < b.key ? -keyDir : a.key > b.key ? keyDir : a.tie - b.tie))
    .map((x) => x.o);
}

function linkHeader(ctx: RouteContext, page: number, pages: number): string | undefined {
  const link = (n: number, rel: string): string => {
    const params = new URLSearchParams(ctx.url.searchParams);
    params.set('page', String(n));
    return `<${ctx.state.json().apiRoot}/wc/v3/orders?${params.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page > 1) links.push(link(Math.min(page - 1, pages), 'prev'));
  if (pages > page) links.push(link(page + 1, 'next'));
  return links.length > 0 ? links.join(', ') : undefined;
}

export function listOrders(ctx: RouteContext): Reply {
  const q = parseQuery(ctx);
  if ('status' in q) return q;
  const tz = ctx.state.timezone;
  const matching = sorted(
    [...ctx.state.store.orders.values()].filter((o) => selected(o, q, tz)),
    q,
    tz,
    ctx.state.tieRandom,
  );
  const start = q.offset ?? (q.page - 1) * q.perPage;
  const pages = Math.ceil(matching.length / q.perPage);
  const headers: Record<string, string> = { 'x-wp-total': String(matching.length), 'x-wp-totalpages': String(pages) };
  const link = linkHeader(ctx, q.page, pages);
  if (link) headers.link = link;
  const body = matching.slice(start, start + q.perPage).map((o) => orderJson(o, ctx.state.json()));
  return { status: 200, body, headers };
}
