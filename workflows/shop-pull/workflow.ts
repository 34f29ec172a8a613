/**
 * One pull of a shop's orders, started by the shop's schedule: pages through the platform from
 * the schedule's cursor (activities read, map and start the shipments), writes the cursor back to
 * the schedule as it goes, and returns what it did. A failed pull loses nothing: the next run
 * starts from the last cursor written, and an order read twice is "already known". A webhook's
 * pull (`input.webhook`, shop-import/schedule.ts `pullNow`) reads the same way and writes no cursor;
 * given `orderIds`, it reads only those orders (the retry list and the changes are the schedule's).
 */
import { continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ShopImportActivities } from '../../activities/shop-import';
import { PULL_RETRY } from '../../shop-import/pull-retry';
import {
  addCounts,
  KEPT_REJECTIONS,
  noCounts,
  type NamedOrdersPosition,
  type PullCounts,
  type PullPagesResult,
  type PullPosition,
  type PullRejection,
  type ShopPullInput,
  type ShopPullResult,
} from './definitions';

const pullOptions = {
  // A call reads pages for about 45 s; heartbeats carry its position, so a retry goes on from there.
  startToCloseTimeout: '3 minutes',
  retry: {
    initialInterval: PULL_RETRY.initialIntervalMs,
    backoffCoefficient: PULL_RETRY.backoffCoefficient,
    maximumInterval: PULL_RETRY.maximumIntervalMs,
    maximumAttempts: PULL_RETRY.maximumAttempts,
  },
} as const;
// The activity heartbeats every 3 s, also while a page waits for Shopify's points or a slow store:
// a killed worker's page reading is taken over after 15 s, so it holds the shop's pull (and every
// webhook's pull behind it) no longer than that.
const { pullShopOrders } = proxyActivities<ShopImportActivities>({ ...pullOptions, heartbeatTimeout: '15 seconds' });
const { saveShopCursor } = proxyActivities<ShopImportActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

/** Carried over a continue-as-new of a long pull. */
interface Carried {
  position: PullPosition | NamedOrdersPosition;
  counts: PullCounts;
  rejections: PullRejection[];
  pages: number;
}

export async function shopPullWorkflow(input: ShopPullInput, carried?: Carried): Promise<ShopPullResult> {
  const { shop } = input;
  let cursor = input.cursor;
  let position: PullPosition | NamedOrdersPosition | null = carried?.position ?? firstPosition(input);
  // Only the schedule's runs write the cursor: a webhook's pull may have read less than it says.
  const writesCursor = !input.webhook && input.orderIds === undefined;
  let counts = carried?.counts ?? noCounts();
  const rejections = carried?.rejections ?? [];
  let pages = carried?.pages ?? 0;
  while (position !== null) {
    const result: PullPagesResult = await pullShopOrders({ shop, cursor, position });
    counts = addCounts(counts, result.counts);
    rejections.push(...result.rejections.slice(0, KEPT_REJECTIONS - rejections.length));
    pages += result.pages;
    if (writesCursor && JSON.stringify(result.cursor) !== JSON.stringify(cursor)) await saveShopCursor({ shop, cursor: result.cursor });
    cursor = result.cursor;
    position = result.next;
    if (position !== null && workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof shopPullWorkflow>({ ...input, cursor }, { position, counts, rejections, pages });
    }
  }
  return { shop, cursor, counts, rejections, pages };
}

/** Named orders are read by id; any other pull begins with the cursor's retry list. */
function firstPosition(input: ShopPullInput): PullPosition | NamedOrdersPosition {
  return input.orderIds === undefined ? { phase: 'retry' } : { phase: 'ids', ids: input.orderIds };
}
