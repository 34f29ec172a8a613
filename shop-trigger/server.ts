/**
 * The shop trigger: an HTTP endpoint for Shopify and WooCommerce order webhooks that verifies
 * them and runs the shop's pull at once. Of a verified body only the order's id is read
 * (order-id.ts), as a hint: the pull reads that order from the platform and decides what is
 * eligible, so a lost, late, repeated or forged webhook costs latency at most, never an order.
 *
 * Routes: POST /hooks/shopify/<shop>, POST /hooks/woocommerce/<shop>. See docs/shop-trigger.md.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { baseUrlOf, header, JSON_TYPE, LocalHttpServer, requestLine, writeAnswer } from '../local-http';
import { TriggerCoalescer } from './coalescer';
import { namedOrderId } from './order-id';
import { readRawBody } from './read-body';
import { RecentIds } from './recent-ids';
import { TriggerStats } from './stats';
import { SHOP_TRIGGER_DEFAULTS, type ShopTrigger, type ShopTriggerOptions, type TriggerPlatform, type TriggerShop } from './types';
import { verifySignature } from './verify';

const HEADERS = {
  shopify: { signature: 'x-shopify-hmac-sha256', topic: 'x-shopify-topic', delivery: 'x-shopify-webhook-id' },
  woocommerce: { signature: 'x-wc-webhook-signature', topic: 'x-wc-webhook-topic', delivery: 'x-wc-webhook-delivery-id' },
} as const;

/** WooCommerce's ping when a webhook is saved: unsigned, and it must get exactly 200. */
const WOO_PING = /^webhook_id=\d{1,20}$/;

/** Longer event ids are not remembered: headers are unsigned, so bound what one costs. */
const MAX_EVENT_ID_LENGTH = 128;

/** Header values and URL names quoted in logs are cut here; they come from strangers. */
const clip = (value: string | undefined): string | undefined => (value === undefined ? undefined : value.slice(0, 128));

interface Reply {
  status: number;
  body: Record<string, unknown>;
  /** Set when answering before the body was read to its end: the rest is not worth reading. */
  close?: boolean;
  headers?: Record<string, string>;
}

const refuse = (status: number, error: string, extra: Omit<Reply, 'status' | 'body'> = {}): Reply => ({
  status,
  body: { error },
  ...extra,
});

function send(res: ServerResponse, reply: Reply): void {
  if (res.destroyed || res.headersSent) return;
  writeAnswer(res, reply.status, JSON.stringify(reply.body), JSON_TYPE, {
    'cache-control': 'no-store',
    ...(reply.close ? { connection: 'close' } : {}),
    ...reply.headers,
  });
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`shop trigger: ${name} must be a positive integer, got ${value}`);
  return value;
}

export async function startShopTrigger(options: ShopTriggerOptions): Promise<ShopTrigger> {
  const { logger } = options;
  const maxBodyBytes = positiveInteger('maxBodyBytes', options.maxBodyBytes ?? SHOP_TRIGGER_DEFAULTS.maxBodyBytes);
  const readTimeoutMs = positiveInteger('readTimeoutMs', options.readTimeoutMs ?? SHOP_TRIGGER_DEFAULTS.readTimeoutMs);
  const triggerTimeoutMs = positiveInteger('triggerTimeoutMs', options.triggerTimeoutMs ?? SHOP_TRIGGER_DEFAULTS.triggerTimeoutMs);
  const closeTimeoutMs = positiveInteger('closeTimeoutMs', options.closeTimeoutMs ?? SHOP_TRIGGER_DEFAULTS.closeTimeoutMs);
  const dedupeIds = positiveInteger('dedupeIds', options.dedupeIds ?? SHOP_TRIGGER_DEFAULTS.dedupeIds);
  const maxOrderIds = positiveInteger('maxOrderIds', options.maxOrderIds ?? SHOP_TRIGGER_DEFAULTS.maxOrderIds);
  const coalesceMs = options.coalesceMs ?? SHOP_TRIGGER_DEFAULTS.coalesceMs;
  if (!Number.isFinite(coalesceMs) || coalesceMs < 0) throw new RangeError(`shop trigger: coalesceMs must be ≥ 0, got ${coalesceMs}`);

  const stats = new TriggerStats();
  const recentEvents = new Map<string, RecentIds>();
  const coalescer = new TriggerCoalescer({
    coalesceMs,
    timeoutMs: triggerTimeoutMs,
    maxOrderIds,
    trigger: options.trigger,
    onCall: (shop, wanted) => {
      stats.of(shop).triggersCalled += 1;
      logger.debug({ shop, orders: wanted.orderIds.length, fromCursor: wanted.fromCursor }, 'shop trigger: calling trigger');
    },
    onFailure: (shop, error) => {
      stats.of(shop).triggerFailures += 1;
      // The message only: the trigger never sees the body, so it cannot be in there.
      logger.warn({ shop, error: error instanceof Error ? error.message : String(error) }, 'shop trigger: trigger failed');
    },
  });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const { method, segments } = requestLine(req);
    const [first, platform, name, ...rest] = segments ?? [];
    if (first !== 'hooks' || (platform !== 'shopify' && platform !== 'woocommerce') || name === undefined || rest.length > 0) {
      stats.notFound += 1;
      return send(res, refuse(404, 'not found', { close: true }));
    }
    if (method !== 'POST') {
      stats.methodNotAllowed += 1;
      return send(res, refuse(405, 'method not allowed', { close: true, headers: { allow: 'POST' } }));
    }
    let shop: TriggerShop | null;
    try {
      shop = options.shops(name);
    } catch (e) {
      stats.errors += 1;
      logger.warn({ platform, shop: clip(name), error: (e as Error).message }, 'shop trigger: shop lookup threw');
      return send(res, refuse(500, 'internal error', { close: true }));
    }
    // Same answer for a shop on the other platform: the URL names no shop we know.
    if (shop === null || shop.platform !== platform) {
      stats.notFound += 1;
      logger.info({ platform, shop: clip(name) }, 'shop trigger: webhook for an unknown shop');
      return send(res, refuse(404, 'unknown shop', { close: true }));
    }
    const received = await receive(req, platform, shop);
    if (received) send(res, received.reply);
    // After the answer is on its way: the platform waits for nobody's pull (Shopify allows 5 s).
    if (received?.accepted) coalescer.request(shop.shop, received.accepted.orderId);
  };

  /** A known shop's delivery: bounded read, then signature, then de-duplication; `accepted` names its order, if any. */
  const receive = async (
    req: IncomingMessage,
    platform: TriggerPlatform,
    shop: TriggerShop,
  ): Promise<{ reply: Reply; accepted?: { orderId: string | null } } | null> => {
    const answer = (reply: Reply) => ({ reply });
    const counts = stats.of(shop.shop);
    counts.received += 1;
    const names = HEADERS[platform];
    const where = { shop: shop.shop, platform, delivery: clip(header(req, names.delivery)) };

    const read = await readRawBody(req, maxBodyBytes, readTimeoutMs);
    if (read.kind === 'aborted') {
      counts.aborted += 1;
      return null;
    }
    if (read.kind === 'too-large') {
      counts.tooLarge += 1;
      logger.warn({ ...where, maxBodyBytes }, 'shop trigger: body too large');
      return answer(refuse(413, `body larger than ${maxBodyBytes} bytes`, { close: true }));
    }
    if (read.kind === 'timed-out') {
      counts.timedOut += 1;
      logger.warn({ ...where, readTimeoutMs }, 'shop trigger: body not received in time');
      return answer(refuse(408, `body not received within ${readTimeoutMs} ms`, { close: true }));
    }
    const raw = read.body;
    const signature = header(req, names.signature);

    // No content-type test: WordPress sends this body form-encoded, but that is its transport's choice.
    if (platform === 'woocommerce' && signature === undefined && raw.length <= 40 && WOO_PING.test(raw.toString('latin1'))) {
      counts.pings += 1;
      logger.info({ ...where, webhookId: raw.toString('latin1').slice('webhook_id='.length) }, 'shop trigger: WooCommerce webhook ping');
      return answer({ status: 200, body: { result: 'ping' } });
    }
    if (!verifySignature(raw, signature, shop.secrets)) {
      counts.rejected += 1;
      const reason = signature === undefined ? 'missing signature' : 'signature mismatch';
      // The number of secrets tells "not configured" from "wrong secret"; never the secrets or the body.
      logger.warn({ ...where, reason, secrets: shop.secrets.filter((s) => s !== '').length }, 'shop trigger: webhook refused');
      return answer(refuse(401, reason));
    }
    counts.verified += 1;
    const topic = header(req, names.topic);
    stats.countTopic(shop.shop, topic);

    if (platform === 'shopify') {
      const eventId = header(req, 'x-shopify-event-id');
      if (eventId !== undefined && eventId !== '' && eventId.length <= MAX_EVENT_ID_LENGTH && recentIdsOf(shop.shop).seen(eventId)) {
        counts.duplicates += 1;
        logger.debug({ ...where, topic: clip(topic), eventId }, 'shop trigger: duplicate event');
        return answer({ status: 200, body: { result: 'duplicate' } });
      }
    }
    // Read only now that the signature matched; the id is a hint the pull checks with the platform.
    const orderId = namedOrderId(platform, topic, raw);
    if (orderId !== null) counts.namedOrders += 1;
    logger.debug({ ...where, topic: clip(topic), orderId }, 'shop trigger: webhook accepted');
    return { reply: { status: 200, body: { result: 'accepted' } }, accepted: { orderId } };
  };

  const recentIdsOf = (shop: string): RecentIds => {
    let ids = recentEvents.get(shop);
    if (!ids) {
      ids = new RecentIds(dedupeIds);
      recentEvents.set(shop, ids);
    }
    return ids;
  };

  const http = new LocalHttpServer(
    'shop trigger',
    async (req, res) => {
      try {
        await handle(req, res);
      } catch (e) {
        // A bug here must not leave the platform waiting: it counts a timeout as a failure too.
        stats.errors += 1;
        logger.warn({ error: e instanceof Error ? e.message : String(e) }, 'shop trigger: request failed');
        send(res, refuse(500, 'internal error', { close: true }));
      }
    },
    (res) => send(res, refuse(500, 'internal error', { close: true })),
  );
  await http.listen(options.port, options.host);
  const port = http.port();
  const url = baseUrlOf(options.host, port);
  logger.info({ url }, 'shop trigger: listening');

  let closing: Promise<void> | null = null;
  return {
    url,
    port,
    hookUrl: (platform, shop) => `${url}/hooks/${platform}/${encodeURIComponent(shop)}`,
    stats: () => stats.snapshot(),
    close: () =>
      (closing ??= (async () => {
        await http.stopListening();
        if (!(await coalescer.drain(closeTimeoutMs)))
          logger.warn({ closeTimeoutMs }, 'shop trigger: closed with trigger calls still pending (aborted)');
      })()),
  };
}
