/**
 * Which shipments go first when the worker has a backlog: Temporal task queue priority
 * (https://docs.temporal.io/develop/task-queue-priority-fairness). A shipment's priority is set
 * when it starts and its activities inherit it; the server dispatches a queue's tasks of a lower
 * key first, and the account pacer sends a class's calls of a lower key first.
 *
 * - **live**: an order pulled from a shop that was placed or changed lately (its `modifiedAt`
 *   at most LIVE_ORDER_MAX_AGE before the shipment starts): a customer is waiting for it.
 * - **backlog**: everything else, e.g. a file import or a first pull of a shop's old open orders.
 *
 * Decided once, from the order as read and the start time, so a start repeated by a retried
 * page asks for what the first start asked.
 */
import type { ShipmentInput } from './shipment';

/** Temporal's keys run from 1 (first) to 5 by default; unset means 3. */
export const LIVE_PRIORITY_KEY = 1;
export const DEFAULT_PRIORITY_KEY = 3;
export const BACKLOG_PRIORITY_KEY = 5;
/**
 * A shipping account's workflow (workflows/account.ts) goes first: it relays the account's holds
 * and hands out its pace, and every moment its task waits behind shipments' tasks is calls the
 * other workers send into a Retry-After. The server keeps it over a continue-as-new.
 */
export const ACCOUNT_PRIORITY_KEY = 1;
export const DEFAULT_LIVE_ORDER_MAX_AGE_MS = 15 * 60_000;
/** The header that carries a shipment's priority key to its local activities, which have no task of their own. */
export const PRIORITY_HEADER = 'shipment-priority';

/**
 * The task queue of the live shipments a worker's pulls start, beside the shipments' own and
 * polled by a worker with slots of its own (worker/create-worker.ts, `createShipmentWorkers`).
 * Priority orders the tasks waiting in one queue, but cannot free the slots a backlog's tasks
 * already hold: a shipment's first task holds its slot through its local activities (the label's
 * first attempt waits up to 2 s in the pacer), so a live order's first task waited for one.
 */
export function liveShipmentTaskQueue(shipmentTaskQueue: string): string {
  return `${shipmentTaskQueue}-live`;
}

/** `off`: every shipment at the server's default priority (before live orders went first). */
export type ShipmentPriorities = { liveOrderMaxAgeMs: number } | 'off';

export const DEFAULT_SHIPMENT_PRIORITIES: ShipmentPriorities = { liveOrderMaxAgeMs: DEFAULT_LIVE_ORDER_MAX_AGE_MS };

/** The priority key a shipment starts with, or undefined (the server's default) when priorities are off. */
export function shipmentPriorityKey(
  input: Pick<ShipmentInput, 'shopOrder'>,
  priorities: ShipmentPriorities,
  now: number,
): number | undefined {
  if (priorities === 'off') return undefined;
  const modifiedAt = input.shopOrder ? Date.parse(input.shopOrder.modifiedAt) : Number.NaN;
  // A store clock ahead of ours makes a negative age: still live.
  return now - modifiedAt <= priorities.liveOrderMaxAgeMs ? LIVE_PRIORITY_KEY : BACKLOG_PRIORITY_KEY;
}

/** A call's priority key as an activity sees it; 0 (a local activity's, or none given) is Temporal's default. */
export function effectivePriorityKey(priorityKey: number | undefined): number {
  return priorityKey !== undefined && priorityKey > 0 ? priorityKey : DEFAULT_PRIORITY_KEY;
}
