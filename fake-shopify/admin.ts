/**
 * The admin routes under /_fake, for a fake in another process (dev server, bench): seed and
 * read orders, set faults and the bucket, read and reset the counters. No authentication,
 * not counted in the stats, and still answering while the fake is `down`.
 */
import type { IncomingMessage } from 'node:http';
import { parseJson, readBody } from '../local-http';
import { NOT_FOUND, TOO_LARGE, methodNotAllowed, type Reply } from './answers';
import { BucketSettings } from './bucket';
import { LIMITS } from './defaults';
import { InvalidInputError, parseOrThrow } from './invalid';
import type { ShopifyState } from './state';
import { emptyStats } from './stats';

type Handler = (state: ShopifyState, body: unknown) => Reply;

const ROUTES: Record<string, Record<string, Handler>> = {
  orders: {
    GET: (state) => ({ status: 200, body: { orders: state.store.all().map((o) => state.view(o)) } }),
    POST: (state, body) => ({ status: 201, body: state.view(state.createOrder(body)) }),
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

function oneOrder(state: ShopifyState, method: string, id: string): Reply {
  if (method !== 'GET') return methodNotAllowed('GET');
  const order = state.store.anyOrder(id);
  return order ? { status: 200, body: state.view(order) } : { status: 404, body: { error: `No order ${id}` } };
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
  if (path[0] === 'orders' && path.length === 2) return oneOrder(state, method, path[1]!);
  const handlers = ROUTES[path.join('/')];
  if (!handlers) return NOT_FOUND;
  const handler = handlers[method];
  if (!handler) return methodNotAllowed(Object.keys(handlers).join(', '));
  const body = method === 'POST' ? await readJson(req) : { ok: true as const, value: undefined };
  if (!body.ok) return body.reply;
  try {
    return handler(state, body.value);
  } catch (err) {
    if (err instanceof InvalidInputError) return { status: 400, body: { error: err.message, details: err.details } };
    throw err;
  }
}
