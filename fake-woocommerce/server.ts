/**
 * A local fake of a WooCommerce store's REST API (wc/v3) with the Shipment Tracking extension,
 * on plain node:http, for the connector's tests, the dev server and the bench.
 *
 * This file wires the parts: serve-api.ts takes a /wp-json request through the host's faults
 * (fault-injector.ts), authentication (auth.ts) and routing (router.ts) to its route in
 * routes/; admin.ts answers /_fake/, page.ts the merchant's page at /. state.ts holds what one
 * running fake knows. What it reproduces and what it does not: docs/fake-woocommerce.md.
 */
import type { ServerResponse } from 'node:http';
import { baseUrlOf, cancellableDelays, HTML_TYPE, JSON_TYPE, jsonText, LocalHttpServer, requestLine, writeAnswer } from '../local-http';
import { handleAdmin } from './admin';
import { DEFAULTS } from './defaults';
import { generateOrders } from './generate';
import { GenerateOrdersSchema, OrderEditSchema, parseInput, WebhookInputSchema } from './inputs';
import { editOrder } from './order-actions';
import { renderPage } from './page';
import { criticalError, hostPage, noRoute, type Reply } from './replies';
import { parseSeed } from './seed';
import { serveApi } from './serve-api';
import { keepOrders } from './persistence';
import { WooState } from './state';
import type { FakeWooCommerce, FakeWooCommerceOptions } from './types';
import { orderView } from './views';

export async function startFakeWooCommerce(options: FakeWooCommerceOptions = {}): Promise<FakeWooCommerce> {
  const host = options.host ?? DEFAULTS.host;
  const state = new WooState(options);
  const kept =
    options.stateFile === undefined
      ? undefined
      : keepOrders(options.stateFile, state.store, (message) => process.stderr.write(`${message}\n`));
  let closed = false;
  const { delay, releaseAll } = cancellableDelays();

  function send(res: ServerResponse, reply: Reply): void {
    if (closed || res.destroyed || !res.socket || res.socket.destroyed) return;
    if (reply.html !== undefined) return writeAnswer(res, reply.status, reply.html, HTML_TYPE, reply.headers);
    writeAnswer(res, reply.status, jsonText(reply.body), JSON_TYPE, reply.headers);
  }

  const http = new LocalHttpServer(
    'fake WooCommerce',
    async (req, res) => {
      const { method, url, segments } = requestLine(req);
      if (segments === null) return send(res, noRoute());
      if (segments.length === 0 && method === 'GET') return send(res, { status: 200, html: renderPage(state) });
      if (segments[0] === '_fake') return send(res, await handleAdmin(state, req, method, segments.slice(1)));
      if (segments[0] === 'wp-json') return serveApi({ state, send, delay }, req, res, url, method, segments.slice(1));
      // Outside the REST API: the theme's "page not found".
      return send(res, hostPage(404));
    },
    // A bug in the fake: answer as WordPress's fatal-error handler would.
    (res) => send(res, criticalError()),
  );
  await http.listen(options.port ?? DEFAULTS.port, host);
  const port = http.port();
  state.baseUrl = baseUrlOf(host, port);

  return {
    baseUrl: state.baseUrl,
    port,
    restored: kept?.restored ?? false,
    createOrder: (seed) => orderView(state.store.createOrder(parseSeed(seed))),
    generateOrders: (generate) => generateOrders(state.store, parseInput(GenerateOrdersSchema, generate, 'generate options')),
    editOrder: (id, edit) => {
      const parsed = parseInput(OrderEditSchema, edit, 'order edit');
      const order = state.store.orders.get(id);
      if (!order) return null;
      editOrder(state.actions(), order, parsed);
      return orderView(order);
    },
    order: (id) => {
      const order = state.store.orders.get(id);
      return order ? orderView(order) : null;
    },
    orders: () => [...state.store.orders.values()].map(orderView),
    createWebhook: (input) => state.webhooks.create(parseInput(WebhookInputSchema, input, 'webhook')),
    webhooks: () => state.webhooks.list(),
    deleteWebhook: (id) => state.webhooks.remove(id) !== null,
    webhooksIdle: () => state.webhooks.idle(),
    setFaults: (patch) => void state.faults.set(patch),
    setShipmentTracking: (installed) => {
      state.shipmentTracking = installed;
    },
    stats: () => state.traffic.snapshot(),
    resetStats: () => state.traffic.reset(),
    close: async () => {
      if (closed) return;
      closed = true;
      kept?.close();
      releaseAll();
      // No delivery goes out after close(); one in flight is cut off.
      state.webhooks.close();
      await http.stopListening();
    },
  };
}
