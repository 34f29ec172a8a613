/**
 * An order larger than the page query reads (more fulfillment orders or lines than it asks
 * for), read alone in pages as Shopify documents cursor pagination (`first`/`after`, pageInfo's
 * hasNextPage and endCursor): its fulfillment orders a few at a time, each with its first lines,
 * then the lines of any fulfillment order with more, page by page. Each query stays far under
 * Shopify's 1,000-point cap; every point is counted (onCost) like the page query's, so the pull's
 * budget share pays for them. Bounded by the import settings maxFulfillmentOrders and
 * maxOrderLines, and by paging that must advance: a larger order, or a store whose pages do not
 * move on, is one rejection naming why, read again on the next pull.
 */
import { z } from 'zod';
import type { Operation, ShopifyClient } from './client';
import { refused, refusedOrder } from '../../domain/platform-order-checks';
import type { RefusedOrder } from '../../domain/platform-order';
import { FoLines, LINE_FIELDS, Order, ORDER_FIELDS, PageInfo, type FulfillmentOrder } from './order-fields';

/** The bounds of one order's reading (ShopImportSettings). */
export interface OrderSize {
  fulfillmentOrders: number;
  lines: number;
}

/** Fulfillment orders a page, with this many lines each: 529 requested points (measured on the fake's cost rules). */
const FO_PAGE = 4;
const LINES_WITH_FO = 25;
/** Lines a page of one fulfillment order's: 503 points. */
const LINE_PAGE = 100;

const orderPage: Operation<{ order: unknown }> = {
  name: 'wholeOrderToLabel',
  estimatedCost: 530,
  document: `query WholeOrderToLabel($id: ID!, $after: String) { order(id: $id) { ${ORDER_FIELDS(FO_PAGE, LINES_WITH_FO, '$after')} } }`,
  data: z.object({ order: z.unknown() }),
};

const linePage: Operation<{ fulfillmentOrder: unknown }> = {
  name: 'fulfillmentOrderLinesToLabel',
  estimatedCost: 505,
  document: `query FulfillmentOrderLinesToLabel($id: ID!, $after: String) {
  fulfillmentOrder(id: $id) {
    lineItems(first: ${LINE_PAGE}, after: $after) {
      pageInfo { hasNextPage endCursor }
      nodes { ${LINE_FIELDS} }
    }
  }
}`,
  data: z.object({ fulfillmentOrder: z.unknown() }),
};

const FoLinePage = z.object({ lineItems: FoLines });

type Call = <T>(operation: Operation<T>, variables: Record<string, unknown>) => Promise<T>;

/** The order with every fulfillment order and every line, or why it is refused. */
export async function readWholeOrder(
  client: ShopifyClient,
  first: Order,
  size: OrderSize,
  signal: AbortSignal,
  maxWaitMs: number,
  onCost?: (points: number) => void,
): Promise<Order | RefusedOrder> {
  const call: Call = (operation, variables) => client.call(operation, variables, signal, maxWaitMs, onCost);
  const tooLarge = (message: string) => refused(first, 'legacyResourceId', { field: 'fulfillmentOrders', message });
  const id = `gid://shopify/Order/${first.legacyResourceId}`;
  const fulfillmentOrders: FulfillmentOrder[] = [];
  let order: Order | undefined;
  for (let after: string | null = null; ;) {
    const { order: node }: { order: unknown } = await call(orderPage, { id, after });
    if (node === null || node === undefined)
      return refused(first, 'legacyResourceId', {
        field: 'order',
        message: 'too large for a page, and the store gave no order when it was read alone',
      });
    const parsed = Order.safeParse(node);
    if (!parsed.success) return refusedOrder(first, 'legacyResourceId', parsed.error);
    order = parsed.data;
    fulfillmentOrders.push(...order.fulfillmentOrders.nodes);
    if (fulfillmentOrders.length > size.fulfillmentOrders)
      return tooLarge(`more than ${size.fulfillmentOrders} fulfillment orders (the import's maxFulfillmentOrders)`);
    const next = nextCursor(order.fulfillmentOrders);
    if (next === false) return tooLarge('the store pages its fulfillment orders without moving on');
    if (next === null) break;
    after = next;
  }
  let lines = 0;
  for (const fo of fulfillmentOrders) {
    const all = [...fo.lineItems.nodes];
    for (let next = nextCursor(fo.lineItems); next !== null;) {
      if (next === false) return tooLarge(`the store pages the lines of fulfillment order ${fo.id} without moving on`);
      if (lines + all.length > size.lines) break;
      const { fulfillmentOrder } = await call(linePage, { id: fo.id, after: next });
      const page = FoLinePage.safeParse(fulfillmentOrder);
      if (!page.success) return refusedOrder(first, 'legacyResourceId', page.error);
      all.push(...page.data.lineItems.nodes);
      next = nextCursor(page.data.lineItems);
    }
    lines += all.length;
    if (lines > size.lines) return tooLarge(`more than ${size.lines} lines (the import's maxOrderLines)`);
    fo.lineItems = { pageInfo: { hasNextPage: false }, nodes: all };
  }
  return { ...order, fulfillmentOrders: { pageInfo: { hasNextPage: false }, nodes: fulfillmentOrders } };
}

/** The cursor of the next page, null after the last; false when the page claims more but gives nothing to go on. */
function nextCursor(connection: { pageInfo: z.infer<typeof PageInfo>; nodes: unknown[] }): string | null | false {
  if (!connection.pageInfo.hasNextPage) return null;
  const cursor = connection.pageInfo.endCursor;
  return cursor && connection.nodes.length > 0 ? cursor : false;
}
