/**
 * The shop trigger: an HTTP endpoint for Shopify and WooCommerce order webhooks that verifies
 * them and runs the shop's pull at once. Of a verified body only the order's id is read
 * (order-id.ts), as a hint: the pull reads that order from the platform and decides what is
 * eligible, so a lost, late, repeated or forged webhook costs latency at most, never an order.
 *
 * Routes: POST /hooks/shopify/<shop>, POST /hooks/woocommerce/<shop>. See docs/shop-trigger.md.
 */
import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify';
import { TriggerCoalescer } from './coalescer';
import { namedOrderId } from './order-id';
import { READ_TIMED_OUT, timedBody } from './read-body';
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

function send(reply: FastifyReply, answer: Reply): FastifyReply {
  if (reply.sent || reply.raw.destroyed) return reply;
  return reply
    .code(answer.status)
    .headers({ 'cache-control': 'no-store', ...(answer.close ? { connection: 'close' } : {}), ...answer.headers })
    .send(answer.body);
}

/** Every method is routed, so that one we do not take is a 405 with `allow`, not a 404. */
const METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'];

const headerOf = (req: FastifyRequest, name: string): string | undefined => {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

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
  /** The known shop each request is for, found before its body is read. */
  const shopOf = new WeakMap<FastifyRequest, TriggerShop>();
  const recentIdsOf = (shop: string): RecentIds => {
    let ids = recentEvents.get(shop);
    if (!ids) {
      ids = new RecentIds(dedupeIds);
      recentEvents.set(shop, ids);
    }
    return ids;
  };
  const notFound = (reply: FastifyReply, error = 'not found') => {
    stats.notFound += 1;
    return send(reply, refuse(404, error, { close: true }));
  };

  const app = Fastify({
    bodyLimit: maxBodyBytes,
    exposeHeadRoutes: false,
    // A URL that does not even decode names nothing we serve.
    frameworkErrors: (_error, _req, reply) => void notFound(reply),
  });
  // Every body is taken as bytes: the signature is over them, and WordPress's ping is form-encoded.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.setNotFoundHandler((_req, reply) => notFound(reply));
  app.setErrorHandler((error: FastifyError, req, reply) => refused(error, req, reply));

  /** Before the body: the path names a known shop of its platform, and the method is POST. */
  const admit = async (req: FastifyRequest<{ Params: { platform: string; shop: string } }>, reply: FastifyReply) => {
    const { platform, shop: name } = req.params;
    if (platform !== 'shopify' && platform !== 'woocommerce') return notFound(reply);
    if (req.method !== 'POST') {
      stats.methodNotAllowed += 1;
      return send(reply, refuse(405, 'method not allowed', { close: true, headers: { allow: 'POST' } }));
    }
    let shop: TriggerShop | null;
    try {
      shop = options.shops(name);
    } catch (e) {
      stats.errors += 1;
      logger.warn({ platform, shop: clip(name), error: (e as Error).message }, 'shop trigger: shop lookup threw');
      return send(reply, refuse(500, 'internal error', { close: true }));
    }
    // Same answer for a shop on the other platform: the URL names no shop we know.
    if (shop === null || shop.platform !== platform) {
      logger.info({ platform, shop: clip(name) }, 'shop trigger: webhook for an unknown shop');
      return notFound(reply, 'unknown shop');
    }
    stats.of(shop.shop).received += 1;
    shopOf.set(req, shop);
  };

  /** A body that was too large, too slow or cut off; or a bug, which must not leave the platform waiting. */
  const refused = (error: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    const shop = shopOf.get(req);
    const where = shop && { shop: shop.shop, platform: shop.platform, delivery: clip(headerOf(req, HEADERS[shop.platform].delivery)) };
    if (shop && req.raw.destroyed && reply.raw.destroyed) {
      stats.of(shop.shop).aborted += 1; // the sender hung up: there is no one to answer
      return reply;
    }
    if (shop && error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      stats.of(shop.shop).tooLarge += 1;
      logger.warn({ ...where, maxBodyBytes }, 'shop trigger: body too large');
      return send(reply, refuse(413, `body larger than ${maxBodyBytes} bytes`, { close: true }));
    }
    if (shop && error.code === READ_TIMED_OUT) {
      stats.of(shop.shop).timedOut += 1;
      logger.warn({ ...where, readTimeoutMs }, 'shop trigger: body not received in time');
      return send(reply, refuse(408, `body not received within ${readTimeoutMs} ms`, { close: true }));
    }
    stats.errors += 1;
    logger.warn({ ...where, error: error.message }, 'shop trigger: request failed');
    return send(reply, refuse(500, 'internal error', { close: true }));
  };

  /** A known shop's whole body: signature, then de-duplication; `accepted` names its order, if any. */
  const receive = (req: FastifyRequest, shop: TriggerShop, raw: Buffer): { reply: Reply; accepted?: { orderId: string | null } } => {
    const counts = stats.of(shop.shop);
    const names = HEADERS[shop.platform];
    const where = { shop: shop.shop, platform: shop.platform, delivery: clip(headerOf(req, names.delivery)) };
    const signature = headerOf(req, names.signature);

    // No content-type test: WordPress sends this body form-encoded, but that is its transport's choice.
    if (shop.platform === 'woocommerce' && signature === undefined && raw.length <= 40 && WOO_PING.test(raw.toString('latin1'))) {
      counts.pings += 1;
      logger.info({ ...where, webhookId: raw.toString('latin1').slice('webhook_id='.length) }, 'shop trigger: WooCommerce webhook ping');
      return { reply: { status: 200, body: { result: 'ping' } } };
    }
    if (!verifySignature(raw, signature, shop.secrets)) {
      counts.rejected += 1;
      const reason = signature === undefined ? 'missing signature' : 'signature mismatch';
      // The number of secrets tells "not configured" from "wrong secret"; never the secrets or the body.
      logger.warn({ ...where, reason, secrets: shop.secrets.filter((s) => s !== '').length }, 'shop trigger: webhook refused');
      return { reply: refuse(401, reason) };
    }
    counts.verified += 1;
    const topic = headerOf(req, names.topic);
    stats.countTopic(shop.shop, topic);

    if (shop.platform === 'shopify') {
      const eventId = headerOf(req, 'x-shopify-event-id');
      if (eventId !== undefined && eventId !== '' && eventId.length <= MAX_EVENT_ID_LENGTH && recentIdsOf(shop.shop).seen(eventId)) {
        counts.duplicates += 1;
        logger.debug({ ...where, topic: clip(topic), eventId }, 'shop trigger: duplicate event');
        return { reply: { status: 200, body: { result: 'duplicate' } } };
      }
    }
    // Read only now that the signature matched; the id is a hint the pull checks with the platform.
    const orderId = namedOrderId(shop.platform, topic, raw);
    if (orderId !== null) counts.namedOrders += 1;
    logger.debug({ ...where, topic: clip(topic), orderId }, 'shop trigger: webhook accepted');
    return { reply: { status: 200, body: { result: 'accepted' } }, accepted: { orderId } };
  };

  app.route<{ Params: { platform: string; shop: string } }>({
    method: METHODS,
    url: '/hooks/:platform/:shop',
    onRequest: admit,
    preParsing: async (_req, reply, payload) => timedBody(payload, readTimeoutMs, reply.raw),
    handler: async (req, reply) => {
      const shop = shopOf.get(req)!;
      const received = receive(req, shop, Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
      send(reply, received.reply);
      // After the answer is on its way: the platform waits for nobody's pull (Shopify allows 5 s).
      if (received.accepted) coalescer.request(shop.shop, received.accepted.orderId);
      return reply;
    },
  });

  await app.listen({ port: options.port, host: options.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
  logger.info({ url }, 'shop trigger: listening');

  let closing: Promise<void> | null = null;
  return {
    url,
    port,
    hookUrl: (platform: TriggerPlatform, shop: string) => `${url}/hooks/${platform}/${encodeURIComponent(shop)}`,
    stats: () => stats.snapshot(),
    close: () =>
      (closing ??= (async () => {
        await app.close();
        if (!(await coalescer.drain(closeTimeoutMs)))
          logger.warn({ closeTimeoutMs }, 'shop trigger: closed with trigger calls still pending (aborted)');
      })()),
  };
}
