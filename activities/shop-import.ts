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
import type { ShopConnectors } from '../shop-sync/connectors';
import type { PlatformConnections } from '../shop-sync/platform/connections';
import { describeStop, StopDelivery } from '../shop-sync/platform/result';
import { SHOP_BUSY, SHOP_UNAVAILABLE } from './failures';
import { ShopChangeNotifier } from '../shop-import/changes';
import { advanceCursor, type PullCursor } from '../shop-import/cursor';
import { pageRecords } from '../shop-import/records';
import { saveCursor } from '../shop-import/schedule';
import { OrderSource, type ImportConnector } from '../shop-import/source';
import {
  addCounts,
  KEPT_REJECTIONS,
  noCounts,
  type PullCounts,
  type PullPagesInput,
  type PullPagesResult,
  type PullRejection,
} from '../workflows/shop-pull/definitions';

/** How long one call reads pages before returning to the workflow (which saves the cursor). */
const CALL_BUDGET_MS = 45_000;
/** Well inside the workflow's 30 s heartbeat timeout. */
const HEARTBEAT_EVERY_MS = 10_000;
/** Shipments started at once per page. */
const START_CONCURRENCY = 8;

export interface ShopImportDeps {
  connectors: ShopConnectors;
  platforms: PlatformConnections;
  client: Client;
  taskQueue: string;
  now?: () => number;
}

export function createShopImportActivities(deps: ShopImportDeps) {
  const now = deps.now ?? Date.now;
  const source = new OrderSource(deps.platforms, now);
  const changes = new ShopChangeNotifier(deps.client);

  return {
    async pullShopOrders(input: PullPagesInput): Promise<PullPagesResult> {
      const ctx = Context.current();
      const connector = importConnector(deps.connectors, input.shop);
      const resumed = ctx.info.heartbeatDetails as PullPagesResult | undefined;
      let progress: PullPagesResult = resumed ?? {
        next: input.position,
        cursor: input.cursor,
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

  async function pullPage(connector: ImportConnector, progress: PullPagesResult): Promise<PullPagesResult> {
    const ctx = Context.current();
    const page = await source.read(connector, progress.cursor, progress.next!, ctx.cancellationSignal).catch(platformFailure);
    const { records, skipped } = pageRecords(connector.shop, page.orders, connector.import.mapping, progress.counts.read + 1);
    const failed: PullRejection[] = [];
    const startFailures: string[] = [];
    const startedNow = new Set<string>();
    const result = await importRecords({
      records: asAsync(records),
      start: async (order) => {
        const started = await startShipment(deps.client, deps.taskQueue, order);
        if (started.status === 'started') startedNow.add(started.workflowId);
        return started;
      },
      concurrency: START_CONCURRENCY,
      platformOf: () => connector.type,
      onRejected: (rejection, record) => {
        const platformOrderId = (record as (typeof records)[number]).platformOrderId;
        failed.push({ platformOrderId, orderId: rejection.orderId, reasons: rejection.reasons });
        ctx.log.warn('order not imported: it is tried again on the next pull', {
          shop: connector.shop,
          platformOrderId,
          fields: rejection.reasons.map((r) => r.field),
        });
      },
      onFailed: (failure) => void startFailures.push(failure.message),
    });
    // Temporal refused a start: the page is read again by the retry (its started orders are then already known).
    if (startFailures.length > 0)
      throw ApplicationFailure.retryable(`could not start ${startFailures.length} shipments: ${startFailures[0]}`, 'StartFailed');
    // Orders that already had a shipment: it hears of what the merchant changed (shop-import/changes.ts).
    const told = await changes.notice(connector.shop, page.orders, connector.import.mapping, startedNow);
    const settled = [
      ...records.filter((r) => !failed.some((f) => f.platformOrderId === r.platformOrderId)).map((r) => r.platformOrderId),
      ...skipped.map((o) => o.platformOrderId),
      ...page.gone,
    ];
    const { cursor, droppedFromRetry } = advanceCursor(progress.cursor, {
      newest: page.newest,
      failed: failed.map((f) => f.platformOrderId),
      settled,
    });
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

/** A platform's failure, as the shared rules classify it: wait Retry-After, back off, or stop the pull. */
function platformFailure(err: unknown): never {
  if (!(err instanceof StopDelivery)) throw err;
  const result = err.result;
  const message = `reading the shop: ${describeStop(result)}`;
  if (result.kind === 'retry_after') throw ApplicationFailure.create({ message, type: SHOP_BUSY, nextRetryDelay: result.retryAfterMs });
  if (result.kind === 'retry') throw ApplicationFailure.retryable(message, SHOP_UNAVAILABLE);
  throw ApplicationFailure.create({
    message,
    type: 'ShopRefused',
    nonRetryable: true,
    category: ApplicationFailureCategory.BENIGN,
  });
}
