/**
 * The admin routes under /_fake, for a fake in another process (dev server, bench): seed,
 * generate, read and edit orders, subscribe webhooks, set faults and the bucket, read and reset
 * the counters. No authentication, not counted in the stats, and still answering while the fake
 * is `down`.
 */
import type { IncomingMessage } from 'node:http';
import { parseJson, readBody } from '../local-http';
import { NOT_FOUND, TOO_LARGE, methodNotAllowed, type Reply } from './answers';
import { BucketSettings } from './bucket';
import { LIMITS } from './defaults';
import { InvalidInputError, parseOrThrow } from './invalid';
import type { ShopifyState } from './state';
import { emptyStats } from './stats';

/** `param` is the id in a path such as orders/<id>/edit. */
type Handler = (state: ShopifyState, body: unknown, param: string) => Reply;

const ROUTES: Record<string, Record<string, Handler>> = {
  orders: {
    GET: (state) => ({ status: 200, body: { orders: state.store.all().map((o) => state.view(o)) } }),
    POST: (state, body) => ({ status: 201, body: state.view(state.createOrder(body)) }),
  },
  // A summary, not the views: 20,000 views would be megabytes.
  'orders/generate': {
    POST: (state, body) => {
      const orders = state.generateOrders(body);
      const ids = orders.map((o) => o.id);
      return { status: 201, body: { count: ids.length, ids, createdFrom: orders[0]?.createdAt, createdTo: orders.at(-1)?.createdAt } };
    },
  },
  webhooks: {
    GET: (state) => ({ status: 200, body: { subscriptions: state.webhooks.list(), queue: state.webhooks.queue() } }),
    POST: (state, body) => ({ status: 201, body: state.webhooks.subscribe(body) }),
  },
  faults: {
    GET: (state) => ({ status: 200, body: state.faults.current() }),
    POST: (state, body) => ({ status: 200, body: state.faults.set(body ?? {}) }),
  },
  bucket: {
    GET: (state) => ({ status: 200, body: state.bucket.status() }),
    POST: (state, body) => {
      state.bucket.set(parseOrThrow(BucketSettings, 'bucket', body));
      return { status: 200, body: state.bucket.status() };
    },
  },
  stats: { GET: (state) => ({ status: 200, body: state.stats }) },
  'stats/reset': {
    POST: (state) => {
      state.stats = emptyStats();
      return { status: 200, body: state.stats };
    },
  },
};

const noOrder = (id: string): Reply => ({ status: 404, body: { error: `No order ${id}` } });

/** orders/<id> and orders/<id>/<action>: an unknown order is 404 before anything else. */
const ORDER_ROUTES: Record<string, Record<string, Handler>> = {
  '': { GET: (state, _, id) => ({ status: 200, body: state.view(state.existingOrder(id)) }) },
  edit: { POST: (state, body, id) => ({ status: 200, body: state.view(state.editOrder(id, body ?? {})) }) },
  cancel: { POST: (state, _, id) => ({ status: 200, body: state.view(state.cancelOrder(id)) }) },
  close: { POST: (state, _, id) => ({ status: 200, body: state.view(state.closeOrder(id)) }) },
  hold: { POST: (state, body, id) => ({ status: 200, body: state.view(state.holdOrder(id, body)) }) },
  release: { POST: (state, body, id) => ({ status: 200, body: state.view(state.releaseHold(id, body)) }) },
  refund: { POST: (state, body, id) => ({ status: 200, body: state.view(state.refundOrder(id, body)) }) },
};

const WEBHOOK_ROUTE: Record<string, Handler> = {
  DELETE: (state, _, id) =>
    state.webhooks.unsubscribe(id)
      ? { status: 200, body: { deleted: id } }
      : { status: 404, body: { error: `No webhook subscription ${id}` } },
};

/** The handlers of a path and the id it names, or null. */
function routeOf(state: ShopifyState, path: string[]): { handlers: Record<string, Handler>; param: string } | Reply | null {
  const fixed = ROUTES[path.join('/')];
  if (fixed) return { handlers: fixed, param: '' };
  if (path[0] === 'webhooks' && path.length === 2) return { handlers: WEBHOOK_ROUTE, param: path[1]! };
  if (path[0] !== 'orders' || path.length < 2 || path.length > 3) return null;
  const handlers = ORDER_ROUTES[path[2] ?? ''];
  if (!handlers) return null;
  return state.store.anyOrder(path[1]!) ? { handlers, param: path[1]! } : noOrder(path[1]!);
}

/** The JSON body, undefined when empty, or the reply that refuses it. */
async function readJson(req: IncomingMessage): Promise<{ ok: true; value: unknown } | { ok: false; reply: Reply }> {
  const raw = await readBody(req, LIMITS.maxBodyBytes);
  if (raw === null) return { ok: false, reply: TOO_LARGE };
  const text = raw.toString('utf8');
  if (text.trim() === '') return { ok: true, value: undefined };
  const json = parseJson(text);
  return json.ok ? json : { ok: false, reply: { status: 400, body: { error: `Body is not valid JSON: ${json.message}` } } };
}

export async function handleAdmin(req: IncomingMessage, method: string, path: string[], state: ShopifyState): Promise<Reply> {
  const route = routeOf(state, path);
  if (route === null) return NOT_FOUND;
  if ('status' in route) return route;
  const { handlers, param } = route;
  const handler = handlers[method];
  if (!handler) return methodNotAllowed(Object.keys(handlers).join(', '));
  const body = method === 'POST' ? await readJson(req) : { ok: true as const, value: undefined };
  if (!body.ok) return body.reply;
  try {
    return handler(state, body.value, param);
  } catch (err) {
    if (err instanceof InvalidInputError) return { status: 400, body: { error: err.message, details: err.details } };
    throw err;
  }
}
