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
 * before execution (cost.ts), so one of them is set here.
 */
export function paginate<T, N>(rows: T[], keyOf: (row: T) => SortKey, args: PageArgs, toNode: (row: T) => N): Connection<N> {
  const dir = args.reverse ? -1 : 1;
  const keyed = rows.map((row) => ({ row, key: keyOf(row) })).sort((a, b) => dir * compareKeys(a.key, b.key));
  let window = keyed;
  if (args.after != null) {
    const after = decodeCursor(args.after);
    window = window.filter((k) => dir * compareKeys(k.key, after) > 0);
  }
  if (args.before != null) {
    const before = decodeCursor(args.before);
    window = window.filter((k) => dir * compareKeys(k.key, before) < 0);
  }
  let page = window;
  if (args.first != null) page = page.slice(0, Math.max(0, args.first));
  else if (args.last != null) page = page.slice(Math.max(0, page.length - args.last));
  const start = keyed.indexOf(page[0]!);
  const end = keyed.indexOf(page[page.length - 1]!);
  const edges = page.map((k) => ({ cursor: encodeCursor(k.key), node: toNode(k.row) }));
  return {
    edges,
    nodes: edges.map((e) => e.node),
    pageInfo: {
      hasNextPage: page.length > 0 ? end < keyed.length - 1 && (args.first == null || window.length > page.length) : false,
      hasPreviousPage: page.length > 0 ? start > 0 : false,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
  };
}

/** The numeric part of a global id, for sort keys. */
export function idNumber(gid: string): number {
  return Number(gid.slice(gid.lastIndexOf('/') + 1));
}
