/**
 * Counts the project's metrics from the outside of the activities: a worker activity interceptor
 * sees each activity's type, input and result or failure. It runs for local activities too (a
 * label's first attempt inside the workflow task): the SDK runs both through the same path.
 *
 * Shipment outcomes are counted here from the tracking result that carries a terminal tag, not
 * from the workflow: workflow interceptors run inside the workflow sandbox, where prom-client's
 * registry does not exist. So label_failed, cancelled_by_operator and tracking_timed_out are not
 * counted (they are searchable as ShipmentStatus).
 */
import type { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { FAILURE_TYPES } from '../workflow-definitions/activity-failures';
import { outcomeOfTag } from '../domain/shipment';
import { courierLabels } from './courier-labels';
import {
  apiCalls,
  labelsCreated,
  labelsRejected,
  rateLimited,
  recordShopDelivery,
  recordShopPull,
  SHIPPING_API_ACTIVITIES,
  trackingCompleted,
} from './counters';

/** Failure types of a label the shipment cannot get without corrected data (see `CORRECTABLE_KINDS` in workflows/shipment/label.ts). */
const REJECTION_KINDS: ReadonlyMap<string, string> = new Map([
  [FAILURE_TYPES.courier_error, 'courier_error'],
  [FAILURE_TYPES.validation, 'validation'],
]);

const API_ACTIVITIES: ReadonlySet<string> = new Set(SHIPPING_API_ACTIVITIES);

/** `terminalTags`: the worker's tracking policy's, which decides when a shipment ends. */
export function shipmentMetricsInterceptor(terminalTags: readonly string[]): ActivityInterceptorsFactory {
  const terminal = new Set(terminalTags);
  return (ctx: Context) => ({
    inbound: {
      async execute(input, next) {
        const activity = ctx.info.activityType;
        if (API_ACTIVITIES.has(activity)) apiCalls.inc({ activity });
        let result: unknown;
        try {
          result = await next(input);
        } catch (err) {
          countSafely(() => countFailure(activity, input.args, err));
          throw err;
        }
        countSafely(() => countResult(activity, input.args, result, terminal));
        return result;
      },
    },
  });
}

/** Metrics must never change what an activity returns or throws. */
function countSafely(count: () => void): void {
  try {
    count();
  } catch {
    // an unexpected shape: not counted
  }
}

function countResult(activity: string, args: unknown[], result: unknown, terminal: ReadonlySet<string>): void {
  switch (activity) {
    case 'createLabel':
      labelsCreated.inc({ courier: courierOf(args) });
      return;
    case 'awaitTrackingChange':
    case 'getTracking': {
      // getTracking: the timer loop of workflows started before change-driven tracking.
      const tag = field(result, 'tag');
      if (typeof tag === 'string' && terminal.has(tag)) trackingCompleted.inc({ outcome: outcomeOfTag(tag), tag });
      return;
    }
    case 'deliverShopEvents': {
      // A ShopDeliveryResult: events acknowledged, then why delivery stopped or must be retried.
      const shop = shopOf(args);
      const delivered = field(result, 'delivered');
      if (isCount(delivered)) recordShopDelivery('delivered', shop, delivered);
      const stopped = field(field(result, 'stopped'), 'reason');
      if (stopped === 'gone') recordShopDelivery('gone', shop);
      else if (stopped === 'rejected') recordShopDelivery('failed', shop);
      if (field(result, 'retry')) recordShopDelivery('retry', shop);
      return;
    }
    case 'pullShopOrders':
      recordShopPull('ok', shopOf(args));
      return;
  }
}

function countFailure(activity: string, args: unknown[], err: unknown): void {
  if (activity === 'deliverShopEvents') {
    // A thrown delivery is retried by the server unless it is marked non-retryable.
    const final = err instanceof ApplicationFailure && err.nonRetryable;
    recordShopDelivery(final ? 'failed' : 'retry', shopOf(args));
  }
  if (activity === 'pullShopOrders') recordShopPull('failed', shopOf(args));
  if (!(err instanceof ApplicationFailure)) return;
  if (err.type === FAILURE_TYPES.rate_limited) rateLimited.inc({ activity });
  const rejection = REJECTION_KINDS.get(err.type ?? '');
  if (activity === 'createLabel' && rejection) labelsRejected.inc({ courier: courierOf(args), kind: rejection });
}

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

/** createLabel's input carries the label request; its courier is order data, so the label is from the account's closed list. */
function courierOf(args: unknown[]): string {
  return courierLabels.label(field(field(args[0], 'labelRequest'), 'courier'));
}

function shopOf(args: unknown[]): string {
  const shop = field(args[0], 'shop');
  return typeof shop === 'string' ? shop : 'unknown';
}
