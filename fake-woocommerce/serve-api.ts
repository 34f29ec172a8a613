/**
 * One request under /wp-json, in the order a real one meets things: the host (down, body size,
 * injected 429/503/504/500), then WordPress (a wrong consumer key, the route, the JSON body,
 * the route's parameters, its permission check, the route itself), then what becomes of the
 * answer (cut off after the write, never sent, late). Every step counts in the stats.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { header, readBody } from '../local-http';
import { authenticate, permissionRefusal } from './auth';
import { DEFAULTS } from './defaults';
import { queryParams, type Params } from './params';
import { hostPage, invalidJson, noRoute, type Reply } from './replies';
import { matchRoute, WRITE_ROUTES, type Matched, type RouteKey } from './router';
import type { RouteHandler } from './routes/context';
import { listOrders } from './routes/list-orders';
import { listNotes, getNote, postNote, removeNote } from './routes/notes';
import { getOrder, putOrder } from './routes/orders';
import { getProduct } from './routes/products';
import { getTracking, listProviders, listTrackings, postTracking, removeTracking } from './routes/trackings';
import type { WooState } from './state';

const ROUTES: Readonly<Record<RouteKey, RouteHandler>> = {
  'GET orders': listOrders,
  'GET order': getOrder,
  'PUT order': putOrder,
  'GET notes': listNotes,
  'POST notes': postNote,
  'GET note': getNote,
  'DELETE note': removeNote,
  'GET shipment-trackings': listTrackings,
  'POST shipment-trackings': postTracking,
  'GET shipment-tracking': getTracking,
  'DELETE shipment-tracking': removeTracking,
  'GET providers': listProviders,
  'GET product': getProduct,
};

export interface ApiServer {
  state: WooState;
  send(res: ServerResponse, reply: Reply): void;
  /** Injected latency; closing the server cuts it short. */
  delay(ms: number): Promise<void>;
}

/** The body's parameters: a JSON object, a form, or nothing; null when the JSON is broken. */
function bodyParams(req: IncomingMessage, raw: Buffer): Params | null {
  const text = raw.toString('utf8');
  const type = header(req, 'content-type') ?? '';
  if (text.trim() === '') return {};
  if (/application\/x-www-form-urlencoded/i.test(type)) return queryParams(new URL(`http://form.invalid/?${text}`));
  if (!/json/i.test(type)) return {};
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Params) : {};
  } catch {
    return null;
  }
}

/** WordPress's part: authentication, routing, body, then the route. */
function runWordPress(state: WooState, req: IncomingMessage, url: URL, route: Matched | null, raw: Buffer): Reply {
  const auth = authenticate(state, req, url);
  if (auth.kind === 'refused') return auth.reply;
  if (route === null) return noRoute();
  const body = bodyParams(req, raw);
  if (body === null) return invalidJson();
  return ROUTES[route.key]({
    state,
    match: route,
    params: { ...queryParams(url), ...body },
    url,
    permit: () => (auth.kind === 'user' ? null : permissionRefusal(route.key)),
  });
}

export async function serveApi(
  server: ApiServer,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  method: string,
  path: string[],
): Promise<void> {
  const { state } = server;
  const matched = matchRoute(method, path);
  // A missing extension's routes are not registered: WordPress finds no route.
  const route = matched?.extension && !state.shipmentTracking ? null : matched;
  const traffic = state.traffic;
  traffic.request(route?.key ?? '(unmatched)');
  if (route?.key === 'GET orders') traffic.orderList(url.searchParams);
  // An order's routes: the Retry-After watch keeps a hold per order.
  const orderId = route && route.key !== 'GET product' ? route.id : undefined;
  const early = state.retryAfterWatch.arrive(orderId, Date.now());
  if (early.order) traffic.bump('callsBeforeRetryAfter');
  if (early.store) traffic.bump('storeCallsBeforeRetryAfter');
  const reply = (answer: Reply): void => {
    traffic.status(answer.status);
    const retryAfter = answer.headers?.['retry-after'];
    if ((answer.status === 429 || answer.status === 503) && retryAfter !== undefined)
      state.retryAfterWatch.told(orderId, Number(retryAfter), Date.now());
    server.send(res, answer);
  };
  const cutOff = (): void => {
    traffic.bump('dropped');
    res.socket?.destroy();
  };

  if (state.faults.isDown()) return cutOff();
  const raw = await readBody(req, DEFAULTS.maxBodyBytes);
  if (raw === null) return reply(hostPage(413));
  const isWrite = route !== null && WRITE_ROUTES.has(route.key);
  const before = state.faults.before(route?.key ?? null, isWrite, url.search);
  if (before.kind === 'drop') return cutOff();
  if (before.kind === 'reply') {
    traffic.bump(before.counter);
    return reply(before.reply);
  }

  // A slow host's queue: the request runs (and its write lands) only after the wait, answered or not.
  if (before.late?.queued) await server.delay(before.late.ms);
  const answer = runWordPress(state, req, url, route, raw);
  const fate = state.faults.after(isWrite, before.entry, before.late);
  if (fate.kind === 'drop') {
    if (isWrite && answer.status < 300) traffic.bump('droppedAfterCommit');
    return cutOff();
  }
  if (fate.kind === 'hang') {
    traffic.bump('hung');
    return; // handled, never answered: the socket stays open until the client gives up
  }
  if (fate.counter) traffic.bump(fate.counter);
  if (fate.delayMs > 0) await server.delay(fate.delayMs);
  reply(fate.replace ?? answer);
}
