/**
 * The activities the shipment workflow calls, with the options of each kind of call (the retry
 * rules themselves are `workflow-definitions/retry-options.ts`). Each call is labelled for the Web UI's
 * event history by its summary.
 */
import { ActivityCancellationType, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { ShipmentActivities } from '../../activities/shipping-api';
import type { ShopDeliveryActivities } from '../../activities/shop-delivery';
import type { TrackingPollerActivities } from '../../activities/tracking-poller';
import {
  FIRST_ATTEMPT_OPTIONS,
  FIRST_DELIVERY_OPTIONS,
  SHIPPING_ACTIVITY_OPTIONS,
  shopDeliveryOptions,
  TRACKING_POLLER_SIGNAL_OPTIONS,
} from '../../workflow-definitions/retry-options';
import type { ShopSyncPolicy } from '../../domain/shipment';

/**
 * A shop-aware label call, cancelled when the merchant changes the order, waits for an attempt
 * already sent to finish: a label it made is then known, not lost (label.ts, `sendLabel`).
 */
export const HEED_SENT_ATTEMPT = { cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED } as const;
type CallOptions = Partial<typeof HEED_SENT_ATTEMPT>;

/** Local activities the run has out: its search attributes wait for their results (published.ts). */
let localActivities = 0;
export const localActivityOut = (): boolean => localActivities > 0;

/** The same local activities, each call counted while it is out. */
function counted<A extends object>(activities: A): A {
  return new Proxy(activities, {
    get(target, name) {
      const call: unknown = Reflect.get(target, name);
      if (typeof call !== 'function') return call;
      return async (...args: unknown[]) => {
        localActivities++;
        try {
          return await (call as (...a: unknown[]) => Promise<unknown>)(...args);
        } finally {
          localActivities--;
        }
      };
    },
  });
}

/** A shipping API call as a regular activity, with the full retry policy. */
export const shippingApi = (summary: string, options: CallOptions = {}) =>
  proxyActivities<ShipmentActivities>({ ...SHIPPING_ACTIVITY_OPTIONS, ...options, summary });

/** The worker's tracking policy (and shop connector settings), read once per workflow. */
export const { trackingPolicy } = counted(proxyLocalActivities<ShipmentActivities>({ startToCloseTimeout: '10 seconds' }));

/**
 * A call's first attempt inside the workflow task (a local activity): no task round trip and no
 * activity events when it succeeds, which most do. A retryable failure goes on as a regular
 * activity, with the full retry policy and visible in the Web UI. Safe for labels: the key
 * makes a second send of the same revision return the same label.
 */
export const firstAttempt = (summary: string, options: CallOptions = {}) =>
  counted(proxyLocalActivities<ShipmentActivities>({ ...FIRST_ATTEMPT_OPTIONS, ...options, summary: `${summary} (first attempt)` }));

/** Joining and leaving the fleet's tracking pollers: a signal each, inside the workflow task. */
export const trackingPoller = (summary: string) =>
  counted(proxyLocalActivities<TrackingPollerActivities>({ ...TRACKING_POLLER_SIGNAL_OPTIONS, summary }));

/** Shop delivery: a first attempt inside the workflow task, then the retried activity. */
export const firstDelivery = (summary: string) =>
  counted(proxyLocalActivities<ShopDeliveryActivities>({ ...FIRST_DELIVERY_OPTIONS, summary: `${summary} (first attempt)` }));
export const shopDelivery = (summary: string, settings: ShopSyncPolicy) =>
  proxyActivities<ShopDeliveryActivities>({ ...shopDeliveryOptions(settings), summary });
