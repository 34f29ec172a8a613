/**
 * The shop pull's activities: read pages of a shop's orders through the import pipeline
 * (shop-import/pull-page.ts) for about 45 s per call, heartbeating each page's progress so a
 * retried call goes on from the last page done; and write the pull's cursor into the shop's
 * schedule.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { ShipmentPriorities } from '../domain/priority';
import type { ShopConnectors } from '../platforms/connectors';
import type { PlatformConnections } from '../platforms/connections';
import { describeStop, StopDelivery } from '../platforms/connection/result';
import { OrderSource, RunawayPaging, type ImportConnector } from '../platforms/order-source';
import { activityFailure, SHOP_BUSY, SHOP_UNAVAILABLE } from '../workflow-definitions/activity-failures';
import { ShopChangeNotifier } from '../shop-import/changes';
import { PagePull } from '../shop-import/pull-page';
import { saveCursor } from '../shop-import/schedule';
import { soundCursor, type PullCursor } from '../workflow-definitions/shop-pull-cursor';
import type { AccountOf } from '../config/shipping-accounts';
import { noCounts, type PullPagesInput, type PullPagesResult } from '../workflow-definitions/shop-pull';

/** How long one call reads pages before returning to the workflow (which saves the cursor). */
const CALL_BUDGET_MS = 45_000;
/** Well inside the workflow's 15 s heartbeat timeout; the SDK sends at most one per 12 s. */
const HEARTBEAT_EVERY_MS = 3_000;

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
  const pull = new PagePull({
    source: new OrderSource(deps.platforms, now),
    changes: new ShopChangeNotifier(deps.client),
    client: deps.client,
    taskQueue: deps.taskQueue,
    liveTaskQueue: deps.liveTaskQueue,
    accountOf: deps.accountOf,
    priorities: deps.priorities,
    now,
  });

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
          progress = await pull
            .page(connector, progress, ctx.log, ctx.cancellationSignal)
            .catch((err: unknown) => platformFailure(connector, err));
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

  /** The cursor as the workflow holds it, repaired (with a warning) when a store's impossible date is in it. */
  function soundCursorOf(input: PullPagesInput): PullCursor {
    const { cursor, problem } = soundCursor(input.cursor, now());
    if (problem !== null)
      Context.current().log.warn("the shop's pull cursor was unsound and is repaired: this pull reads import.firstPull back", {
        shop: input.shop,
        problem,
      });
    return cursor;
  }
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
