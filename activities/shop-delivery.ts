/**
 * Delivers an order's shipment events to its shop, in sequence order, through the shop's
 * connector: a signed webhook, or the shop's platform itself (Shopify, WooCommerce). The workflow
 * hands over the pending events (and the platform ids it remembers); the connector and its
 * secrets stay here, in the worker.
 *
 * Run as a local activity first (inside the workflow task: a delivered event costs no task and
 * no activity events), which reports a retryable failure instead of throwing it; the workflow
 * then continues with the regular activity, which throws it so the server schedules the retry
 * (after Retry-After for 429/503, else backoff by the shop's failures in a row) without writing history.
 */
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import { makeShipmentEvent } from '../domain/events';
import type { ShopConnector, ShopConnectors } from '../platforms/connectors';
import { PlatformConnections } from '../platforms/connections';
import type { PlatformDelivery } from '../platforms/connection/result';
import { deliverWebhook, type DeliveryResult } from '../platforms/webhook/write-back';
import type { OrderIdentity, ParcelRef, PlatformRefs, ShopDeliveryResult, ShopEventDraft } from '../domain/shipment';
import { withHeartbeat } from './heartbeat';
import {
  activityFailure,
  apiBackoffMs,
  INVALID_SHIPMENT_EVENT,
  SHOP_BUSY,
  SHOP_UNAVAILABLE,
  streakStillCounts,
  WRITE_SETTLING,
} from '../workflow-definitions/activity-failures';

export interface DeliverShopEventsInput extends OrderIdentity {
  /** Consecutive pending events, the lowest sequence first. */
  events: ShopEventDraft[];
  /** An operator's redeliver: send even to an endpoint this worker saw answer 410. */
  resumeGone?: boolean;
  /** The order's id on the shop platform (platform connectors need it). */
  platformOrderId?: string;
  /** The shipment's courier code, for a tracking number that reaches the platform after the label. */
  courier?: string;
  /** Platform ids the workflow remembers from earlier deliveries. */
  platform?: PlatformRefs;
  /** One parcel of an order shipping from several locations: its events name it, its fulfillment is its location's. */
  parcel?: ParcelRef;
  /** No call to the shop before this time (epoch ms): the Retry-After a platform gave the first attempt, or its write settling. */
  notBefore?: number;
  /**
   * The first attempt was cut off (its seconds ran out): a platform write it sent may still land,
   * so this activity reads nothing before the connector's timeout has passed since it was scheduled.
   */
  afterCutOffAttempt?: boolean;
}

/** Inside a first attempt (a local activity of a few seconds) a platform's budget is waited for this long at most. */
const FIRST_ATTEMPT_MAX_WAIT_MS = 1_000;
/** Inside a retried attempt; a longer wait becomes the attempt's retry delay instead. */
const MAX_WAIT_MS = 20_000;

/** Carried from a failed attempt to the next in heartbeat details, which the server keeps across attempts. */
interface DeliveryProgress {
  /** Events of the batch already acknowledged. */
  delivered: number;
  /** The shop's failures in a row (5xx, 408, unreachable); a 429/503 neither counts nor resets it. */
  failuresInARow?: number;
  /** Platform ids learned by earlier attempts. */
  platform?: PlatformRefs;
}

export function createShopDeliveryActivities(connectors: ShopConnectors, platforms = new PlatformConnections()) {
  /** Endpoints that answered 410 since this worker started: other orders of the shop stop without calling. */
  const goneUrls = new Set<string>();

  return {
    async deliverShopEvents(input: DeliverShopEventsInput): Promise<ShopDeliveryResult> {
      const { shop, orderId, events, resumeGone, platformOrderId } = input;
      const ctx = Context.current();
      const connector = connectors.connectorFor(shop);
      if (connector?.type === 'webhook' && resumeGone) goneUrls.delete(connector.url);
      const first = events[0];
      if (!first) return { delivered: 0, stopped: null, retry: null };
      if (!connector) {
        return {
          delivered: 0,
          retry: null,
          stopped: { reason: 'no_connector', sequence: first.sequence, status: null, message: `no connector configured for shop ${shop}` },
        };
      }
      if (connector.type !== 'webhook' && platformOrderId === undefined) {
        return {
          delivered: 0,
          retry: null,
          stopped: {
            reason: 'rejected',
            sequence: first.sequence,
            status: null,
            message: `shop ${shop} has a ${connector.type} connector, which writes to the platform's order: the order needs a platformOrderId (import again with it, or change the connector)`,
          },
        };
      }
      if (!ctx.info.isLocal) holdBack(input, connector, first.sequence);
      const progress = ctx.info.heartbeatDetails as Partial<DeliveryProgress> | undefined;
      const already = ctx.info.isLocal ? 0 : Math.min(events.length, Math.max(0, Number(progress?.delivered ?? 0)));
      // Ids learned by an earlier attempt (heartbeat) win over the workflow's older copy.
      const platform: PlatformRefs = { ...input.platform, ...(ctx.info.isLocal ? {} : progress?.platform) };
      const refsOf = () => (connector.type === 'webhook' ? {} : { platform: { ...platform } });
      let delivered = already;
      for (const draft of events.slice(already)) {
        if (connector.type === 'webhook' && goneUrls.has(connector.url)) {
          return {
            delivered,
            retry: null,
            stopped: {
              reason: 'gone',
              sequence: draft.sequence,
              status: 410,
              message: `the shop's endpoint answered 410 Gone earlier: ${connector.url}`,
            },
          };
        }
        let event;
        try {
          event = makeShipmentEvent({ ...draft, shop, orderId, ...(input.parcel ? { parcel: input.parcel } : {}) });
        } catch (err) {
          // A bug, not the shop: sending it again would not help.
          throw ApplicationFailure.create({ type: INVALID_SHIPMENT_EVENT, message: (err as Error).message, nonRetryable: true });
        }
        /** When a write of this event's that may still land settles: no read of the order before then. */
        let settlesAt = 0;
        const result = await withHeartbeat(async (signal): Promise<DeliveryResult> => {
          if (connector.type === 'webhook')
            return deliverWebhook({ url: connector.url, secrets: connector.secrets, timeoutMs: connector.timeoutMs, event, signal });
          const delivery: PlatformDelivery = {
            event,
            platformOrderId: platformOrderId!,
            courier: input.courier ?? null,
            ...(input.parcel ? { location: input.parcel.location } : {}),
            refs: platform,
            signal,
            maxWaitMs: ctx.info.isLocal ? FIRST_ATTEMPT_MAX_WAIT_MS : MAX_WAIT_MS,
          };
          const delivered = await platforms.for(connector).deliver(delivery);
          if (delivery.uncertainWriteAt !== undefined) settlesAt = delivery.uncertainWriteAt + connector.timeoutMs;
          return delivered;
        });
        const at = { sequence: draft.sequence };
        switch (result.kind) {
          case 'delivered':
            delivered++;
            continue;
          case 'gone':
            if (connector.type === 'webhook') goneUrls.add(connector.url);
            ctx.log.warn('shop endpoint is gone (410): delivery stopped', { shop, orderId, ...at });
            return {
              delivered,
              retry: null,
              stopped: {
                reason: 'gone',
                ...at,
                status: 410,
                message: `the shop's endpoint answered 410 Gone: ${describeConnector(connector)}`,
              },
            };
          case 'rejected':
            ctx.log.warn('shop refused an event', { shop, orderId, ...at, status: result.status, body: result.bodyExcerpt });
            return {
              delivered,
              retry: null,
              ...refsOf(),
              stopped: {
                reason: 'rejected',
                ...at,
                status: result.status,
                message: `HTTP ${result.status}${result.bodyExcerpt ? `: ${result.bodyExcerpt}` : ''}`,
              },
            };
          case 'retry_after':
          case 'retry': {
            const message = describeRetry(result);
            // A platform's budget is waited for by the retried activity, not by a workflow timer (history).
            const retryAfterMs =
              result.kind === 'retry_after' && !(ctx.info.isLocal && connector.type !== 'webhook') ? result.retryAfterMs : null;
            // The shop pacing us is expected; a failing shop is worth a warning once per streak.
            if (result.kind === 'retry_after') ctx.log.info('shop asked to wait', { shop, orderId, ...at, retryAfterMs });
            else if (ctx.info.isLocal || ctx.info.attempt === 1)
              ctx.log.warn('shop delivery failed, retrying', { shop, orderId, ...at, message });
            else ctx.log.debug('shop delivery failed again', { shop, orderId, ...at, attempt: ctx.info.attempt, message });
            if (ctx.info.isLocal) {
              // A platform's wait (its Retry-After, a write settling) goes to the regular activity as notBefore, not to a workflow timer.
              const notBefore = Math.max(
                result.kind === 'retry_after' && retryAfterMs === null ? Date.now() + result.retryAfterMs : 0,
                settlesAt,
              );
              const retry = { ...at, status: result.status, message, retryAfterMs, ...(notBefore > 0 ? { notBefore } : {}) };
              return { delivered, stopped: null, ...refsOf(), retry };
            }
            // An event acknowledged in this attempt ends the streak.
            const before = delivered > already ? 0 : Math.max(0, Number(progress?.failuresInARow ?? 0));
            const failuresInARow = before + (result.kind === 'retry' ? 1 : 0);
            // Recorded only when it changes what the next attempt does: a heartbeat that reaches the server is a billed action.
            const counts = failuresInARow !== before && streakStillCounts(before, connectors.maxBackoffMs);
            const learned = JSON.stringify(platform) !== JSON.stringify({ ...input.platform, ...progress?.platform });
            if (delivered > already || counts || learned)
              ctx.heartbeat({ delivered, failuresInARow, ...refsOf() } satisfies DeliveryProgress);
            const settling = settlesAt - Date.now();
            if (result.kind === 'retry_after') throw busy(`event ${draft.sequence}: ${message}`, Math.max(result.retryAfterMs, settling));
            const failure = activityFailure({
              type: SHOP_UNAVAILABLE,
              message: `event ${draft.sequence}: ${message}`,
              // Set here, not left to the policy: the attempt number also counts 429s and attempts lost with a worker.
              nextRetryDelayMs: Math.max(apiBackoffMs(failuresInARow, connectors.maxBackoffMs), settling),
            });
            failure.stack = ''; // the shop's answer says it all; a stack would be stored with every retry
            throw failure;
          }
        }
      }
      return { delivered, stopped: null, retry: null, ...refsOf() };
    },
  };
}

/**
 * A regular attempt calls the shop no earlier than the first attempt was told (notBefore, on any
 * worker) and, after a first attempt cut off with a platform write maybe on its way, not before
 * that write has landed or been refused: the connector's timeout after this activity was
 * scheduled. Else it ends unsent, and the server's retry waits the rest.
 */
function holdBack(input: DeliverShopEventsInput, connector: ShopConnector, sequence: number): void {
  const now = Date.now();
  const scheduled = Context.current().info.scheduledTimestampMs;
  const settles = input.afterCutOffAttempt && connector.type !== 'webhook' ? scheduled + connector.timeoutMs : 0;
  const until = Math.max(input.notBefore ?? 0, settles);
  if (until <= now) return;
  const settling = until === settles;
  const why = settling ? 'a write of the first attempt may still land' : 'the shop asked to wait';
  throw busy(`event ${sequence}: ${why}; ${Math.ceil((until - now) / 1000)} s left`, until - now, settling ? WRITE_SETTLING : SHOP_BUSY);
}

/** The shop asked to wait, or a write is settling: the next attempt comes after exactly `waitMs` (not a fault). */
function busy(message: string, waitMs: number, type = SHOP_BUSY): ApplicationFailure {
  const failure = activityFailure({
    type,
    message,
    nextRetryDelayMs: waitMs,
    category: ApplicationFailureCategory.BENIGN,
  });
  failure.stack = ''; // the shop's answer says it all; a stack would be stored with every retry
  return failure;
}

/** Where a connector delivers, for messages: a webhook's URL, a platform's store or site. */
function describeConnector(connector: ShopConnector): string {
  if (connector.type === 'webhook') return connector.url;
  return connector.type === 'shopify' ? connector.storeDomain : connector.siteUrl;
}

export type ShopDeliveryActivities = ReturnType<typeof createShopDeliveryActivities>;

function describeRetry(result: Extract<DeliveryResult, { kind: 'retry' | 'retry_after' }>): string {
  if (result.kind === 'retry_after') return `HTTP ${result.status}, Retry-After ${Math.round(result.retryAfterMs / 1000)} s`;
  return result.message;
}
