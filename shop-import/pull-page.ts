/**
 * One page of a shop pull through the import pipeline: read it from the platform, start the
 * shipments of its new orders, tell the known ones what the merchant changed, and move the
 * cursor past what is settled. The pull's activity (activities/shop-import.ts) drives it page by
 * page and heartbeats the result; a page read again starts nothing twice (the shipment's
 * workflow id is the order's).
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { importRecords } from '../order-import/engine';
import { startShipment } from '../order-import/start-shipment';
import { DEFAULT_SHIPMENT_PRIORITIES, LIVE_PRIORITY_KEY, shipmentPriorityKey, type ShipmentPriorities } from '../domain/priority';
import { clip, ORDER_LIMITS, RETRYABLE_ID } from '../domain/platform-order-checks';
import type { OrderSource, ImportConnector, PageRead } from '../platforms/order-source';
import type { FieldProblem } from '../shipping-api/contract';
import type { AccountOf } from '../config/shipping-accounts';
import { advanceCursor, firstPullCursor } from '../workflow-definitions/shop-pull-cursor';
import {
  addCounts,
  KEPT_REJECTIONS,
  NAMED_ORDERS_PER_PULL,
  type NamedOrdersPosition,
  type PullCounts,
  type PullPagesResult,
  type PullRejection,
} from '../workflow-definitions/shop-pull';
import type { ShopChangeNotifier } from './changes';
import { pageRecords } from './records';

/** Shipments started at once per page. */
const START_CONCURRENCY = 8;
/** Named orders read per page: one Shopify query's worth, so each page's progress is heartbeated. */
const NAMED_ORDERS_PER_PAGE = 10;

export interface PagePullDeps {
  source: OrderSource;
  changes: ShopChangeNotifier;
  client: Client;
  taskQueue: string;
  /** Where live shipments start; unset: on taskQueue. */
  liveTaskQueue?: string;
  accountOf?: AccountOf;
  priorities?: ShipmentPriorities;
  now: () => number;
}

export interface PullLog {
  warn(message: string, meta: Record<string, unknown>): void;
  debug(message: string, meta: Record<string, unknown>): void;
}

export class PagePull {
  private readonly rejectionsSeen = new LastSeen(10_000);

  constructor(private readonly deps: PagePullDeps) {}

  async page(connector: ImportConnector, progress: PullPagesResult, log: PullLog, signal: AbortSignal): Promise<PullPagesResult> {
    const { deps } = this;
    const now = deps.now;
    const readStart = now();
    const position = progress.next!;
    const page = await (position.phase === 'ids'
      ? this.namedOrders(connector, position, signal)
      : deps.source.read(connector, progress.cursor, position, signal));
    const readMs = now() - readStart;
    const { records, skipped } = pageRecords(connector.shop, page.orders, connector.import.mapping, progress.counts.read + 1);
    const failed: PullRejection[] = [];
    const startFailures: string[] = [];
    const startedNow = new Set<string>();
    const result = await importRecords({
      records: asAsync(records),
      start: async (order) => {
        const priority = shipmentPriorityKey(order, deps.priorities ?? DEFAULT_SHIPMENT_PRIORITIES, now());
        const queue = priority === LIVE_PRIORITY_KEY && deps.liveTaskQueue ? deps.liveTaskQueue : deps.taskQueue;
        const started = await startShipment(deps.client, queue, order, priority);
        if (started.status === 'started') startedNow.add(started.workflowId);
        return started;
      },
      accountOf: deps.accountOf,
      concurrency: START_CONCURRENCY,
      platformOf: () => connector.type,
      onRejected: (rejection, record) => {
        const platformOrderId = (record as (typeof records)[number]).platformOrderId;
        const entry = clippedRejection(platformOrderId, rejection.orderId, rejection.reasons);
        failed.push(entry);
        // Re-read on every pull: warned when first rejected or its reasons change, not once a minute.
        const meta = { shop: connector.shop, platformOrderId: entry.platformOrderId, fields: entry.reasons.map((r) => r.field) };
        if (this.rejectionsSeen.changed(`${connector.shop}\u0000${entry.platformOrderId}`, JSON.stringify(entry.reasons)))
          log.warn('order not imported: it is tried again on the next pull', meta);
        else log.debug('order still not imported (reasons unchanged)', meta);
      },
      onFailed: (failure) => void startFailures.push(failure.message),
    });
    // Temporal refused a start: the page is read again by the retry (its started orders are then already known).
    if (startFailures.length > 0)
      throw ApplicationFailure.retryable(`could not start ${startFailures.length} shipments: ${startFailures[0]}`, 'StartFailed');
    // Orders that already had a shipment: it hears of what the merchant changed (shop-import/changes.ts).
    const startsMs = now() - readStart - readMs;
    const told = await deps.changes.notice(connector.shop, page.orders, connector.import.mapping, startedNow);
    // Where a slow pull's time goes: the platform's read, the starts, telling the shipments.
    log.debug('pull page done', {
      shop: connector.shop,
      phase: position.phase, // 'ids': the orders a webhook named; else the cursor's or the retry list's
      orders: page.orders.length,
      told: told.told,
      readMs,
      startsMs,
      changesMs: now() - readStart - readMs - startsMs,
    });
    // An order whose shipment could not hear its change now is read again by the next pull, as a rejected one is.
    const deferred = new Set(told.deferred);
    if (deferred.size > 0)
      log.warn("a shipment could not take its order's change now: the order is read again next pull", {
        shop: connector.shop,
        deferred: [...deferred],
      });
    const settled = [
      ...records.filter((r) => !failed.some((f) => f.platformOrderId === r.platformOrderId)).map((r) => r.platformOrderId),
      ...skipped.map((o) => o.platformOrderId),
      ...page.gone,
    ].filter((id) => !deferred.has(id));
    const advanced = advanceCursor(progress.cursor, {
      newest: page.newest,
      failed: [...failed.map((f) => f.platformOrderId), ...deferred],
      settled,
    });
    const { droppedFromRetry } = advanced;
    const cursor = firstPullCursor(position, advanced.cursor);
    if (droppedFromRetry.length > 0) log.warn('retry list full: oldest orders dropped from it', { shop: connector.shop, droppedFromRetry });
    const counts: PullCounts = {
      read: page.orders.length,
      started: result.counts.started,
      alreadyKnown: result.counts.alreadyKnown,
      skipped: skipped.length,
      rejected: result.counts.rejected,
      changed: told.told,
    };
    return {
      next: page.next,
      cursor,
      counts: addCounts(progress.counts, counts),
      rejections: [...progress.rejections, ...failed].slice(0, KEPT_REJECTIONS),
      pages: progress.pages + 1,
    };
  }

  /**
   * A page of the orders a shop's webhooks named, read by id in any status: the platform's answer
   * is the truth (an id it does not list, or not this shop's, reads as nothing). Ids are checked
   * again here: the workflow's input is not only ours to write.
   */
  private async namedOrders(
    connector: ImportConnector,
    position: NamedOrdersPosition,
    signal: AbortSignal,
  ): Promise<Omit<PageRead, 'next'> & { next: NamedOrdersPosition | null }> {
    const ids = [...new Set(position.ids.filter((id) => RETRYABLE_ID.test(id)))].slice(0, NAMED_ORDERS_PER_PULL);
    const rest = ids.slice(NAMED_ORDERS_PER_PAGE);
    const orders = ids.length === 0 ? [] : await this.deps.source.byIds(connector, ids.slice(0, NAMED_ORDERS_PER_PAGE), signal);
    return { orders, next: rest.length > 0 ? { phase: 'ids', ids: rest } : null, newest: null, gone: [] };
  }
}

async function* asAsync<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}

/**
 * What a pull's result and heartbeats keep of a rejection: ids and messages clipped, a few
 * reasons (the worker's log has each one), so a hostile order cannot fill the result.
 */
function clippedRejection(platformOrderId: string, orderId: string | null, reasons: FieldProblem[]): PullRejection {
  return {
    platformOrderId: clip(platformOrderId, ORDER_LIMITS.idChars),
    orderId: orderId === null ? null : clip(orderId, 2 * ORDER_LIMITS.nameChars),
    reasons: reasons.slice(0, 5).map((r) => ({ field: clip(r.field, 100), message: clip(r.message, 300) })),
  };
}

/** What was last seen per key, bounded (the oldest forgotten first): tells a change from a repeat. */
class LastSeen {
  private readonly seen = new Map<string, string>();
  constructor(private readonly max: number) {}

  changed(key: string, value: string): boolean {
    if (this.seen.get(key) === value) return false;
    this.seen.delete(key);
    this.seen.set(key, value);
    if (this.seen.size > this.max) this.seen.delete(this.seen.keys().next().value!);
    return true;
  }
}
