/**
 * A local fake of the Shopify GraphQL Admin API on plain node:http, for the connector's tests
 * and local runs: a real schema subset executed by graphql-js, Shopify's cost model and
 * throttling, the fulfillment-order state machine, tokens, injectable faults, webhook
 * deliveries, a merchant's page at / and admin routes under /_fake.
 *
 * This file wires the parts: graphql-endpoint.ts takes an API request to its answer,
 * admin.ts and page.ts serve the rest, state.ts holds what one fake knows.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { baseUrlOf, cancellableDelays, HTML_TYPE, JSON_TYPE, jsonText, LocalHttpServer, requestLine, writeAnswer } from '../local-http';
import { handleAdmin } from './admin';
import { methodNotAllowed, NOT_FOUND, type Reply } from './answers';
import { tokenParams } from './auth';
import { BucketSettings } from './bucket';
import { DEFAULTS } from './defaults';
import { admitted, serveGraphql, type ShopifyServer } from './graphql-endpoint';
import { parseOrThrow } from './invalid';
import { renderPage } from './page';
import { keepOrders } from './persistence';
import { ShopifyState } from './state';
import { emptyStats } from './stats';
import type { FakeShopify, FakeShopifyOptions } from './types';

const VERSION = /^\d{4}-\d{2}$/;

/** POST /admin/oauth/access_token: the client credentials grant. */
async function serveToken(server: ShopifyServer, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const { state, send } = server;
  const raw = await admitted(server, req, res);
  if (raw === null) return;
  const reply = state.tokens.grant(tokenParams(raw.toString('utf8'), url));
  if (reply.status === 200) state.stats.tokensIssued++;
  send(res, reply);
}

/** Every GraphQL answer names the version it was served as, as Shopify's X-Shopify-API-Version does. */
function answeringVersion(server: ShopifyServer, version: string): ShopifyServer {
  return {
    ...server,
    send: (res, reply) => server.send(res, { ...reply, headers: { 'x-shopify-api-version': version, ...reply.headers } }),
  };
}

export async function startFakeShopify(options: FakeShopifyOptions = {}): Promise<FakeShopify> {
  const host = options.host ?? DEFAULTS.host;
  const state = new ShopifyState(options);
  const kept =
    options.stateFile === undefined
      ? undefined
      : keepOrders(options.stateFile, state.store, (message) => process.stderr.write(`${message}\n`));
  let closed = false;
  const { delay, releaseAll } = cancellableDelays();

  const send = (res: ServerResponse, reply: Reply): void => {
    if (closed || res.destroyed || !res.socket || res.socket.destroyed) return;
    if (reply.html !== undefined) return writeAnswer(res, reply.status, reply.html, HTML_TYPE, reply.headers);
    const text = jsonText(reply.body);
    writeAnswer(res, reply.status, text, text === '' ? null : JSON_TYPE, reply.headers);
  };
  const server: ShopifyServer = { state, send, delay };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const { method, url, segments } = requestLine(req);
    if (segments === null) return send(res, NOT_FOUND);
    const path = segments.join('/');
    if (segments[0] === '_fake') return send(res, await handleAdmin(req, method, segments.slice(1), state));
    if (path === '') return method === 'GET' ? send(res, { status: 200, html: renderPage(state) }) : send(res, methodNotAllowed('GET'));
    if (segments.length === 4 && path.startsWith('admin/api/') && VERSION.test(segments[2]!) && segments[3] === 'graphql.json') {
      return method === 'POST' ? serveGraphql(answeringVersion(server, segments[2]!), req, res) : send(res, methodNotAllowed('POST'));
    }
    if (path === 'admin/oauth/access_token') {
      return method === 'POST' ? serveToken(server, req, res, url) : send(res, methodNotAllowed('POST'));
    }
    return send(res, NOT_FOUND);
  };

  // A bug in the fake itself: answer 500 rather than leave the client hanging.
  const http = new LocalHttpServer('fake Shopify', route, (res) =>
    send(res, { status: 500, body: { errors: 'Internal Server Error (fake bug)' } }),
  );
  await http.listen(options.port ?? DEFAULTS.port, host);
  const port = http.port();

  return {
    baseUrl: baseUrlOf(host, port),
    port,
    restored: kept?.restored ?? false,
    createOrder: (seed) => state.view(state.createOrder(seed)),
    generateOrders: (options) => state.generateOrders(options).map((o) => state.view(o)),
    order: (id) => {
      const order = state.store.anyOrder(id);
      return order ? state.view(order) : null;
    },
    orders: () => state.store.all().map((o) => state.view(o)),
    editOrder: (id, edit) => state.view(state.editOrder(id, edit)),
    cancelOrder: (id) => state.view(state.cancelOrder(id)),
    closeOrder: (id) => state.view(state.closeOrder(id)),
    holdOrder: (id, request) => state.view(state.holdOrder(id, request)),
    moveFulfillmentOrder: (fulfillmentOrderId, newLocationId, lines) =>
      state.view(state.moveFulfillmentOrder(fulfillmentOrderId, newLocationId, lines)),
    releaseHold: (id, request) => state.view(state.releaseHold(id, request)),
    refundOrder: (id, request) => state.view(state.refundOrder(id, request)),
    subscribeWebhook: (subscription) => state.webhooks.subscribe(subscription),
    unsubscribeWebhook: (id) => state.webhooks.unsubscribe(id),
    webhookSubscriptions: () => state.webhooks.list(),
    webhooksIdle: () => state.webhooks.whenIdle(),
    setFaults: (patch) => state.faults.set(patch),
    setBucket: (bucket) => state.bucket.set(parseOrThrow(BucketSettings, 'bucket', bucket)),
    throttleStatus: () => state.bucket.status(),
    stats: () => JSON.parse(JSON.stringify(state.stats)) as ReturnType<FakeShopify['stats']>,
    resetStats: () => {
      state.stats = emptyStats();
    },
    close: async () => {
      if (closed) return;
      closed = true;
      kept?.close();
      state.webhooks.close();
      releaseAll();
      await http.stopListening();
    },
  };
}
