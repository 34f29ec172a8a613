/**
 * Reads one page of a platform shop's orders at a pull position: the retry list first, then the
 * changes since the cursor. One instance per worker: Shopify reads share the store's cost bucket
 * with the write-back (PlatformConnections) and are paced to the shop's budget share;
 * WooCommerce products are cached across pulls.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ShopifyConnector, WooCommerceConnector } from './connectors';
import type { PlatformConnections } from './connections';
import { MAX_BUCKET_WAIT_MS } from './shopify/cost-bucket';
import { clampWaitMs } from '../shipping-api/retry-after';
import { WooClient } from './woocommerce/client';
import { firstChangesPosition, type PullCursor, type PullPosition } from '../workflow-definitions/shop-pull-cursor';
import { isRefused, type PlatformOrder, type ReadOrder } from '../domain/platform-order';
import { DEFAULT_PAGE_SIZE, type ShopImportSettings } from '../config/shop-import';
import { changesQuery, eligibleQuery, readShopifyPage } from './shopify/read';
import { WooOrderReader } from './woocommerce/read';
import { readStamp } from './read-clock';

export type ImportConnector = (ShopifyConnector | WooCommerceConnector) & { import: ShopImportSettings };

export interface PageRead {
  /** The orders read, each checked; a refused one is reported like a mapping problem. */
  orders: ReadOrder[];
  next: PullPosition | null;
  /** The newest last-modified value of the changes read (null for the retry list). */
  newest: string | null;
  /** Retry-list orders the platform no longer lists as needing a label. */
  gone: string[];
}

/** Shopify's search takes this many `id:` terms per retry query (the query string stays short). */
const IDS_PER_QUERY = 10;
/** The longest a read waits for Shopify points before giving the wait to Temporal's retry. */
const MAX_BUDGET_WAIT_MS = 20_000;

export class OrderSource {
  private readonly woo = new Map<string, { connector: WooCommerceConnector; reader: WooOrderReader }>();
  /** Per Shopify store: when the pull may send its next read, to keep to its share of the restore rate. */
  private readonly nextReadAt = new Map<string, number>();

  constructor(
    private readonly platforms: PlatformConnections,
    private readonly now: () => number = Date.now,
  ) {}

  async read(connector: ImportConnector, cursor: PullCursor, position: PullPosition, signal: AbortSignal): Promise<PageRead> {
    if (position.phase === 'retry') return this.retryList(connector, cursor, signal);
    const page = await this.changes(connector, position, signal);
    const ids = page.orders.map((o) => o.platformOrderId);
    const number = (position.page ?? 0) + 1;
    if (page.next) checkPaging(connector, position, page.next, ids, number);
    return {
      orders: page.orders,
      next: page.next && { ...page.next, page: number, seen: ids },
      newest: newestOf(page.orders),
      gone: [],
    };
  }

  /** One page of the changes since the cursor, and the position after it. */
  private async changes(
    connector: ImportConnector,
    position: Exclude<PullPosition, { phase: 'retry' }>,
    signal: AbortSignal,
  ): Promise<{ orders: ReadOrder[]; next: Exclude<PullPosition, { phase: 'retry' }> | null }> {
    if (position.phase === 'shopify' && connector.type === 'shopify') {
      const query = changesQuery(position.from, { fulfilled: position.firstPull !== true });
      const page = await this.shopify(connector, { query, after: position.after }, signal);
      return { orders: page.orders, next: page.endCursor === null ? null : { ...position, after: page.endCursor } };
    }
    if (position.phase === 'woocommerce' && connector.type === 'woocommerce') {
      const perPage = connector.import.pageSize ?? DEFAULT_PAGE_SIZE.woocommerce;
      const page = await this.wooReader(connector).page(position, perPage, signal);
      return { orders: page.orders, next: page.next && { phase: 'woocommerce', ...page.next } };
    }
    throw new Error(`pull position ${position.phase} does not belong to a ${connector.type} shop`);
  }

  /**
   * The orders of these platform ids as the platform has them now, in any status (to ship,
   * held, cancelled, refunded, fulfilled), each checked like a pulled order; an id the platform
   * does not list is left out. For reads the caller asks by name (a webhook's orders, the check
   * before a label): the platform's answer is the truth, the id only names the order.
   */
  async byIds(connector: ImportConnector, ids: readonly string[], signal: AbortSignal): Promise<ReadOrder[]> {
    if (connector.type === 'woocommerce') return this.wooReader(connector).byIds(ids, signal, 'any');
    return this.shopifyByIds(connector, ids, changesQuery(null), signal);
  }

  /** Orders by id that also match `query`, in searches of IDS_PER_QUERY ids, each paged to its end. */
  private async shopifyByIds(
    connector: ShopifyConnector & { import: ShopImportSettings },
    ids: readonly string[],
    query: string,
    signal: AbortSignal,
  ): Promise<ReadOrder[]> {
    const orders: ReadOrder[] = [];
    for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
      const terms = `(${ids
        .slice(i, i + IDS_PER_QUERY)
        .map((id) => `id:${id}`)
        .join(' OR ')})`;
      for (let after: string | null = null, first = true; first || after !== null; first = false) {
        const page = await this.shopify(connector, { query: `${query} ${terms}`, after }, signal);
        orders.push(...page.orders);
        after = page.endCursor;
      }
    }
    return orders;
  }

  private async retryList(connector: ImportConnector, cursor: PullCursor, signal: AbortSignal): Promise<PageRead> {
    const next = firstChangesPosition(connector.type, cursor, connector.import, this.now());
    const orders: ReadOrder[] = [];
    if (connector.type === 'shopify') {
      orders.push(...(await this.shopifyByIds(connector, cursor.retry, eligibleQuery(null), signal)));
    } else {
      orders.push(...(await this.wooReader(connector).byIds(cursor.retry, signal)));
    }
    const listed = new Set(orders.map((o) => o.platformOrderId));
    return { orders, next, newest: null, gone: cursor.retry.filter((id) => !listed.has(id)) };
  }

  /** One read, spaced so the pull spends at most its share of what the store restores. */
  private async shopify(
    connector: ShopifyConnector & { import: ShopImportSettings },
    args: { query: string; after: string | null },
    signal: AbortSignal,
  ) {
    const client = this.platforms.shopifyClient(connector);
    const store = connector.storeDomain;
    const waitMs = (this.nextReadAt.get(store) ?? 0) - this.now();
    if (waitMs > 0) await sleep(waitMs, undefined, { signal });
    let spent = 0;
    const first = connector.import.pageSize ?? DEFAULT_PAGE_SIZE.shopify;
    const size = { fulfillmentOrders: connector.import.maxFulfillmentOrders, lines: connector.import.maxOrderLines };
    const readAt = readStamp(this.now());
    const page = await readShopifyPage(
      client,
      { ...args, first },
      size,
      signal,
      MAX_BUDGET_WAIT_MS,
      this.now(),
      (points) => (spent += points),
    );
    const share = connector.import.budgetShare * client.bucket.restorePerSecond;
    if (share > 0) this.nextReadAt.set(store, this.now() + clampWaitMs((spent / share) * 1000, { minMs: 0, maxMs: MAX_BUCKET_WAIT_MS }));
    return { ...page, orders: page.orders.map((o) => (isRefused(o) ? o : { ...o, readAt })) };
  }

  private wooReader(connector: WooCommerceConnector & { import: ShopImportSettings }): WooOrderReader {
    const known = this.woo.get(connector.shop);
    if (known?.connector === connector) return known.reader;
    const reader = new WooOrderReader(new WooClient(connector, this.now), connector.import.mapping.productWeightUnit, this.now);
    this.woo.set(connector.shop, { connector, reader });
    return reader;
  }
}

/** The newest modified time of the orders taken: a refused order has none the cursor may believe. */
function newestOf(orders: ReadOrder[]): string | null {
  return orders
    .filter((o): o is PlatformOrder => !isRefused(o))
    .reduce<string | null>((max, o) => (max === null || o.modifiedAt > max ? o.modifiedAt : max), null);
}

/** A store whose paging does not end: the pull stops with this, naming the store; the next run starts again from the cursor. */
export class RunawayPaging extends Error {
  override readonly name = 'RunawayPaging';
}

/** Ends a pull whose next page repeats the cursor or the page, or that has read `maxPages` pages. */
function checkPaging(connector: ImportConnector, position: PullPosition, next: PullPosition, ids: string[], number: number): void {
  const store = connector.type === 'shopify' ? `Shopify store ${connector.storeDomain}` : `WooCommerce site ${connector.siteUrl}`;
  const stop = (what: string) =>
    new RunawayPaging(`${store}: ${what}; this pull stops after page ${number} (the next run starts again from the cursor)`);
  if (next.phase === 'shopify' && position.phase === 'shopify' && next.after === position.after)
    throw stop('the next page has the same cursor as this one');
  const seen = new Set(position.phase === 'retry' ? [] : (position.seen ?? []));
  if (ids.length > 0 && ids.every((id) => seen.has(id))) throw stop(`the page holds only orders of the page before (${ids.length})`);
  if (number >= connector.import.maxPages) throw stop(`more than ${connector.import.maxPages} pages in one pull (import.maxPages)`);
}
