/**
 * The shop pull's activities: read pages of a shop's orders, map them and start their shipments
 * through the import pipeline (the one a file goes through), for about 45 s per call; and write
 * the pull's cursor into the shop's schedule. Each page's progress is heartbeated, so a retried
 * call goes on from the last page done; a page read again starts nothing twice (the shipment's
 * workflow id is the order's).
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { importRecords } from '../order-import/engine';
import { startShipment } from '../order-import/start-shipment';
import { DEFAULT_SHIPMENT_PRIORITIES, LIVE_PRIORITY_KEY, shipmentPriorityKey, type ShipmentPriorities } from '../domain/priority';
import type { ShopConnectors } from '../shop-sync/connectors';
import type { PlatformConnections } from '../shop-sync/platform/connections';
import { describeStop, StopDelivery } from '../shop-sync/platform/result';
import { activityFailure, SHOP_BUSY, SHOP_UNAVAILABLE } from './failures';
import { ShopChangeNotifier } from '../shop-import/changes';
import { clip, ORDER_LIMITS, RETRYABLE_ID } from '../shop-import/checks';
import { advanceCursor, firstPullCursor, soundCursor, type PullCursor } from '../shop-import/cursor';
import { pageRecords } from '../shop-import/records';
import { saveCursor } from '../shop-import/schedule';
import { OrderSource, RunawayPaging, type ImportConnector, type PageRead } from '../shop-import/source';
import type { FieldProblem } from '../shipping-api/contract';
import type { AccountOf } from '../config/shipping-accounts';
import {
  addCounts,
  KEPT_REJECTIONS,
  NAMED_ORDERS_PER_PULL,
  noCounts,
  type NamedOrdersPosition,
  type PullCounts,
  type PullPagesInput,
  type PullPagesResult,
  type PullRejection,
} from '../workflows/shop-pull/definitions';

/** How long one call reads pages before returning to the workflow (which saves the cursor). */
const CALL_BUDGET_MS = 45_000;
/** Well inside the workflow's 15 s heartbeat timeout; the SDK sends at most one per 12 s. */
const HEARTBEAT_EVERY_MS = 3_000;
/** Shipments started at once per page. */
const START_CONCURRENCY = 8;
/** Named orders read per page: one Shopify query's worth, so each page's progress is heartbeated. */
const NAMED_ORDERS_PER_PAGE = 10;

export interface ShopImportDeps {
  connectors: ShopConnectors;
  platforms: PlatformConnections;
  client: Client;
  taskQueue: string;
  /** Where live shipments start (domain/priority.ts `liveShipmentTaskQueue`, a worker polls it); unset: on taskQueue. */
  liveTaskQueue?: string;
  /** The shipping account of the shop's new shipments; absent: they name none (`default`). */
  accountOf?: AccountOf;
  /** Which new shipments go ahead of a backlog (LIVE_ORDER_MAX_AGE); default: orders changed in the last 15 minutes. */
  priorities?: ShipmentPriorities;
  now?: () => number;
}

export function createShopImportActivities(deps: ShopImportDeps) {
  const now = deps.now ?? Date.now;
  const source = new OrderSource(deps.platforms, now);
  const changes = new ShopChangeNotifier(deps.client);
  const rejectionsSeen = new LastSeen(10_000);

  return {
    async pullShopOrders(input: PullPagesInput): Promise<PullPagesResult> {
      const ctx = Context.current();
      const connector = importConnector(deps.connectors, input.shop);
      const resumed = ctx.info.heartbeatDetails as PullPagesResult | undefined;
      let progress: PullPagesResult = resumed ?? {
        next: input.position,
        cursor: soundCursorOf(input),
        counts: noCounts(),
        rejections: [],
        pages: 0,
      };
      const began = now();
      // A page may wait for Shopify points or a slow store: keep telling the server the worker is alive.
      const alive = setInterval(() => ctx.heartbeat(progress), HEARTBEAT_EVERY_MS);
      try {
        while (progress.next !== null && now() - began < CALL_BUDGET_MS) {
          progress = await pullPage(connector, progress);
          ctx.heartbeat(progress);
        }
      } finally {
        clearInterval(alive);
      }
      return progress;
    },

    async saveShopCursor(input: { shop: string; cursor: PullCursor }): Promise<{ saved: boolean }> {
      const saved = await saveCursor(deps.client, input.shop, input.cursor);
      if (!saved) Context.current().log.warn('the shop has no pull schedule: its cursor is not kept', { shop: input.shop });
      return { saved };
    },
  };

  /** The cursor as the workflow holds it, repaired (with a warning) when an older version let a store's wrong date in. */
  function soundCursorOf(input: PullPagesInput): PullCursor {
    const { cursor, problem } = soundCursor(input.cursor, now());
    if (problem !== null)
      Context.current().log.warn("the shop's pull cursor was unsound and is repaired: this pull reads import.firstPull back", {
        shop: input.shop,
        problem,
      });
    return cursor;
  }

  async function pullPage(connector: ImportConnector, progress: PullPagesResult): Promise<PullPagesResult> {
    const ctx = Context.current();
    const readStart = now();
    const position = progress.next!;
    const page = await (
      position.phase === 'ids'
        ? namedOrders(connector, position, ctx.cancellationSignal)
        : source.read(connector, progress.cursor, position, ctx.cancellationSignal)
    ).catch((err: unknown) => platformFailure(connector, err));
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
        if (rejectionsSeen.changed(`${connector.shop}\u0000${entry.platformOrderId}`, JSON.stringify(entry.reasons)))
          ctx.log.warn('order not imported: it is tried again on the next pull', meta);
        else ctx.log.debug('order still not imported (reasons unchanged)', meta);
      },
      onFailed: (failure) => void startFailures.push(failure.message),
    });
    // Temporal refused a start: the page is read again by the retry (its started orders are then already known).
    if (startFailures.length > 0)
      throw ApplicationFailure.retryable(`could not start ${startFailures.length} shipments: ${startFailures[0]}`, 'StartFailed');
    // Orders that already had a shipment: it hears of what the merchant changed (shop-import/changes.ts).
    const startsMs = now() - readStart - readMs;
    const told = await changes.notice(connector.shop, page.orders, connector.import.mapping, startedNow);
    // Where a slow pull's time goes: the platform's read, the starts, telling the shipments.
    ctx.log.debug('pull page done', {
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
      ctx.log.warn("a shipment could not take its order's change now: the order is read again next pull", {
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
    if (droppedFromRetry.length > 0)
      ctx.log.warn('retry list full: oldest orders dropped from it', { shop: connector.shop, droppedFromRetry });
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
  async function namedOrders(
    connector: ImportConnector,
    position: NamedOrdersPosition,
    signal: AbortSignal,
  ): Promise<Omit<PageRead, 'next'> & { next: NamedOrdersPosition | null }> {
    const ids = [...new Set(position.ids.filter((id) => RETRYABLE_ID.test(id)))].slice(0, NAMED_ORDERS_PER_PULL);
    const rest = ids.slice(NAMED_ORDERS_PER_PAGE);
    const orders = ids.length === 0 ? [] : await source.byIds(connector, ids.slice(0, NAMED_ORDERS_PER_PAGE), signal);
    return { orders, next: rest.length > 0 ? { phase: 'ids', ids: rest } : null, newest: null, gone: [] };
  }
}

async function* asAsync<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}

export type ShopImportActivities = ReturnType<typeof createShopImportActivities>;

function importConnector(connectors: ShopConnectors, shop: string): ImportConnector {
  const connector = connectors.connectorFor(shop);
  if (connector && connector.type !== 'webhook' && connector.import !== null) return connector as ImportConnector;
  throw ApplicationFailure.create({
    message: `shop ${shop} has no import settings in this worker's SHOP_CONNECTORS (a shopify or woocommerce connector with "import")`,
    type: 'NoImportSettings',
    nonRetryable: true,
  });
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

/**
 * A platform's failure, as the shared rules classify it: wait Retry-After, back off, or stop the
 * pull. A wait longer than the schedule's interval stops it too (the next run comes no later), so a
 * store's day-long Retry-After never holds the pull while the schedule skips its runs.
 */
function platformFailure(connector: ImportConnector, err: unknown): never {
  if (err instanceof RunawayPaging)
    throw ApplicationFailure.create({
      message: err.message,
      type: err.name,
      nonRetryable: true,
      category: ApplicationFailureCategory.BENIGN,
    });
  if (!(err instanceof StopDelivery)) throw err;
  const result = err.result;
  const message = `reading the shop: ${describeStop(result)}`;
  if (result.kind === 'retry_after' && result.retryAfterMs > connector.import.every)
    throw ApplicationFailure.create({
      message: `${message}: longer than the schedule's interval, so this pull stops and the next run starts from the cursor`,
      type: SHOP_BUSY,
      nonRetryable: true,
      category: ApplicationFailureCategory.BENIGN,
    });
  if (result.kind === 'retry_after') throw activityFailure({ message, type: SHOP_BUSY, nextRetryDelayMs: result.retryAfterMs });
  if (result.kind === 'retry') throw ApplicationFailure.retryable(message, SHOP_UNAVAILABLE);
  throw ApplicationFailure.create({
    message,
    type: 'ShopRefused',
    nonRetryable: true,
    category: ApplicationFailureCategory.BENIGN,
  });
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
