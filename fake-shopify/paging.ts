/**
 * Cursor pagination as Shopify does it: opaque base64 cursors holding the last id and the
 * last sort value, so a page boundary stays put when records are added or re-sorted between
 * pages. Connections answer edges, nodes and pageInfo.
 */
import { GraphQLError } from 'graphql';

export interface PageArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
  reverse?: boolean | null;
}

/** The sort position of a record: its sort value, then its numeric id. */
export interface SortKey {
  value: string | number;
  id: number;
}

export function encodeCursor(key: SortKey): string {
  return Buffer.from(JSON.stringify({ last_id: key.id, last_value: key.value })).toString('base64');
}

function decodeCursor(raw: string): SortKey {
  try {
    const parsed = JSON.parse(Buffer.from(raw, 'base64').toString('utf8')) as { last_id?: unknown; last_value?: unknown };
    const { last_id: id, last_value: value } = parsed;
    if (typeof id === 'number' && (typeof value === 'number' || typeof value === 'string')) return { id, value };
  } catch {
    // falls through to the error below
  }
  throw new GraphQLError(`Invalid cursor for current pagination sort: ${raw.slice(0, 100)}`, { extensions: { code: 'BAD_REQUEST' } });
}

function compareKeys(a: SortKey, b: SortKey): number {
  if (a.value !== b.value) return a.value < b.value ? -1 : 1;
  return a.id - b.id;
}

export interface Connection<N> {
  edges: Array<{ cursor: string; node: N }>;
  nodes: N[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

/**
 * One page of `rows` in sort order (`reverse` flips it). `first`/`last` presence is checked
 * before execution (cost.ts), so one of them is set here. Only the rows between the cursors are
 * sorted: late pages of a 20,000-order bench store stay cheap.
 */
export function paginate<T, N>(rows: T[], keyOf: (row: T) => SortKey, args: PageArgs, toNode: (row: T) => N): Connection<N> {
  const dir = args.reverse ? -1 : 1;
  const keyed = rows.map((row) => ({ row, key: keyOf(row) }));
  const after = args.after == null ? null : decodeCursor(args.after);
  const before = args.before == null ? null : decodeCursor(args.before);
  const window = keyed
    .filter((k) => (after === null || dir * compareKeys(k.key, after) > 0) && (before === null || dir * compareKeys(k.key, before) < 0))
    .sort((a, b) => dir * compareKeys(a.key, b.key));
  let page = window;
  if (args.first != null) page = page.slice(0, Math.max(0, args.first));
  else if (args.last != null) page = page.slice(Math.max(0, page.length - args.last));
  const edges = page.map((k) => ({ cursor: encodeCursor(k.key), node: toNode(k.row) }));
  const firstKey = page[0]?.key;
  const lastKey = page[page.length - 1]?.key;
  return {
    edges,
    nodes: edges.map((e) => e.node),
    pageInfo: {
      hasNextPage:
        lastKey !== undefined &&
        (args.first != null ? window.length > page.length : keyed.some((k) => dir * compareKeys(k.key, lastKey) > 0)),
      hasPreviousPage: firstKey !== undefined && keyed.some((k) => dir * compareKeys(k.key, firstKey) < 0),
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
  };
}

/** The numeric part of a global id, for sort keys. */
export function idNumber(gid: string): number {
  return Number(gid.slice(gid.lastIndexOf('/') + 1));
}
