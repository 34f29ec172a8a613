/**
 * Activities: one thin wrapper per shipping API call. The client (and so the credentials) is
 * given to them by the worker; workflows pass only order identity and label data.
 */
import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { ShippingApiClient } from '../shipping-api/client';
import type { LabelRequestWithoutKey, OrderDetail, TrackingRecord } from '../shipping-api/contract';
import { ShippingApiError } from '../shipping-api/errors';
import type { OrderIdentity, TrackingPolicy } from '../workflows/definitions';
import { toApplicationFailure } from './retry-policy';

export interface CreateLabelInput extends OrderIdentity {
  revision: number;
  labelRequest: LabelRequestWithoutKey;
}

export interface CreatedLabel {
  idempotencyKey: string;
  labelId: string;
  customerOrderNumber: string;
  courierOrderNumber: string | null;
  courierTrackingNumber: string | null;
}

/**
 * The label's idempotencyKey: a pure function of the order and the label data revision, so
 * every retry, crash, redeploy, reset and re-import of the same revision sends the same key.
 * Readable when short enough; otherwise a SHA-256 of the identity keeps it within 100 chars.
 */
export function labelIdempotencyKey({ shop, orderId, revision }: OrderIdentity & { revision: number }): string {
  const readable = `${encodeURIComponent(shop)}:${encodeURIComponent(orderId)}:r${revision}`;
  if (readable.length <= 100) return readable;
  const digest = createHash('sha256').update(shop).update('\u0000').update(orderId).digest('hex');
  return `sha256-${digest}:r${revision}`;
}

export function createActivities(api: ShippingApiClient, trackingPolicy: TrackingPolicy) {
  return {
    async createLabel({ shop, orderId, revision, labelRequest }: CreateLabelInput): Promise<CreatedLabel> {
      const idempotencyKey = labelIdempotencyKey({ shop, orderId, revision });
      const label = await apiCall((signal) => api.createLabel({ ...labelRequest, idempotencyKey }, { signal }), {
        idempotencyKey,
      });
      Context.current().log.info('label created', { orderId, shop, labelId: label.id, idempotencyKey });
      return {
        idempotencyKey,
        labelId: label.id,
        customerOrderNumber: label.customerOrderNumber,
        courierOrderNumber: label.courierOrderNumber,
        courierTrackingNumber: label.courierTrackingNumber,
      };
    },

    async readOrder(labelId: string): Promise<OrderDetail> {
      return apiCall((signal) => api.getOrder(labelId, { signal }));
    },

    /** null while the courier has not registered the shipment yet (404). */
    async getTracking(labelId: string): Promise<TrackingRecord | null> {
      return apiCall(async (signal) => {
        try {
          return await api.getTracking(labelId, { signal });
        } catch (err) {
          if (err instanceof ShippingApiError && err.kind === 'not_found') return null;
          throw err;
        }
      });
    },

    /** The worker's configured tracking policy, read once per workflow run (a local activity). */
    async trackingPolicy(): Promise<TrackingPolicy> {
      return trackingPolicy;
    },
  };
}

export type ShipmentActivities = ReturnType<typeof createActivities>;

/**
 * Runs one API call: passes the activity's cancellation signal so a cancelled activity aborts
 * its HTTP request, heartbeats while waiting so a dead worker is noticed within the heartbeat
 * timeout rather than the start-to-close timeout, and turns a ShippingApiError into the
 * Temporal failure the retry policy expects.
 */
async function apiCall<T>(
  call: (signal: AbortSignal) => Promise<T>,
  context: { idempotencyKey?: string } = {},
): Promise<T> {
  const ctx = Context.current();
  const heartbeatMs = ctx.info.heartbeatTimeoutMs;
  ctx.heartbeat();
  const timer = heartbeatMs ? setInterval(() => ctx.heartbeat(), Math.max(200, heartbeatMs / 3)) : undefined;
  try {
    return await call(ctx.cancellationSignal);
  } catch (err) {
    // A cancelled activity must report the cancellation, not the abort error it caused.
    if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
    if (!(err instanceof ShippingApiError)) throw err;
    ctx.log.warn('shipping API call failed', { ...err.toJSON(), ...context });
    throw toApplicationFailure(err, context);
  } finally {
    clearInterval(timer);
  }
}
