/**
 * The shop pull: what its workflow, its activities, the schedule and the CLI share. Plain types
 * and pure functions only (this file is part of the workflow bundle).
 */
import type { FieldProblem } from '../../shipping-api/contract';
import type { PullCursor, PullPosition } from '../../shop-import/cursor';

export type { PullCursor, PullPosition };

export const SHOP_PULL_WORKFLOW_TYPE = 'shopPullWorkflow';

/**
 * The task queue of the shop pulls, beside the shipments' own: pulls get worker slots of their
 * own (worker/create-worker.ts, `createPullWorker`), so an order placed while thousands of
 * shipments wait for a workflow task is read at once instead of behind them. The shipments a
 * pull starts still run on the shipments' queue.
 */
export function shopPullTaskQueue(shipmentTaskQueue: string): string {
  return `${shipmentTaskQueue}-shop-pulls`;
}

/** One schedule per shop; its runs are `<schedule id>-<time>` (Temporal appends the time). */
export function shopPullScheduleId(shop: string): string {
  return `shop-pull-${encodeURIComponent(shop)}`;
}

/** A webhook's pull (shop-import/schedule.ts `pullNow`): one of a few per shop, `<schedule id>-webhook-<slot>`. */
export function webhookPullId(shop: string, slot: number): string {
  return `${shopPullScheduleId(shop)}-webhook-${slot}`;
}

/** A webhook's pull of the orders its webhooks named: one of a few per shop, `<schedule id>-webhook-ids-<slot>`. */
export function namedOrdersPullId(shop: string, slot: number): string {
  return `${shopPullScheduleId(shop)}-webhook-ids-${slot}`;
}

/** The most order ids one pull is given; a webhook naming more asks for a pull from the cursor. */
export const NAMED_ORDERS_PER_PULL = 100;

/** Within a pull of named orders: the ids still to read, a page at a time. */
export interface NamedOrdersPosition {
  phase: 'ids';
  ids: string[];
}

export interface ShopPullInput {
  shop: string;
  /** The schedule keeps the newest cursor here (each pull writes it back). */
  cursor: PullCursor;
  /** A webhook's pull: reads from the cursor it was given and never writes it (the schedule's runs do). */
  webhook?: true;
  /**
   * The platform ids of the orders the shop's webhooks named (at most NAMED_ORDERS_PER_PULL): the
   * pull reads those orders, not the changes since the cursor, and writes no cursor.
   */
  orderIds?: string[];
}

export interface PullCounts {
  /** Orders the platform listed (a re-read one counts again). */
  read: number;
  started: number;
  alreadyKnown: number;
  /** Not ours to label: fulfilled elsewhere, on hold, picked up, only virtual items. */
  skipped: number;
  /** Could not be mapped or validated: kept in the cursor's retry list. */
  rejected: number;
  /** Orders whose shipment was told that the merchant changed them. */
  changed?: number;
}

export interface PullRejection {
  platformOrderId: string;
  orderId: string | null;
  reasons: FieldProblem[];
}

export interface PullPagesInput {
  shop: string;
  cursor: PullCursor;
  position: PullPosition | NamedOrdersPosition;
}

export interface PullPagesResult {
  /** Where the next call goes on; null: the pull has read everything. */
  next: PullPosition | NamedOrdersPosition | null;
  cursor: PullCursor;
  counts: PullCounts;
  /** The first few, for the result and the Web UI; every one is in the worker's log. */
  rejections: PullRejection[];
  pages: number;
}

export interface ShopPullResult {
  shop: string;
  cursor: PullCursor;
  counts: PullCounts;
  rejections: PullRejection[];
  pages: number;
}

export const KEPT_REJECTIONS = 20;

export function noCounts(): PullCounts {
  return { read: 0, started: 0, alreadyKnown: 0, skipped: 0, rejected: 0, changed: 0 };
}

export function addCounts(a: PullCounts, b: PullCounts): PullCounts {
  return {
    read: a.read + b.read,
    started: a.started + b.started,
    alreadyKnown: a.alreadyKnown + b.alreadyKnown,
    skipped: a.skipped + b.skipped,
    rejected: a.rejected + b.rejected,
    changed: (a.changed ?? 0) + (b.changed ?? 0),
  };
}
