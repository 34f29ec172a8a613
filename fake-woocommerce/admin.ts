/**
 * Admin routes under /_fake/ for out-of-process use (dev server, bench, a browser): seed,
 * generate, edit and read orders, register webhooks, set faults, install or remove the Shipment
 * Tracking extension, read and reset the stats. No authentication, no faults, not counted in
 * the stats. Errors are `{error, details?}` (this is the fake's own API, not WordPress's).
 */
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { fieldProblems } from '../shipping-api/contract';
import { parseJson, readBody } from '../local-http';
import { DEFAULTS } from './defaults';
import { InvalidWooFaultsError } from './faults';
import { generateOrders } from './generate';
import { GenerateOrdersSchema, InvalidWooInputError, OrderEditSchema, parseInput, WebhookInputSchema } from './inputs';
import { editOrder } from './order-actions';
import { ok, type Reply } from './replies';
import { InvalidSeedError, parseSeed } from './seed';
import type { WooState } from './state';
import { orderView } from './views';

const fail = (status: number, error: string, details?: unknown): Reply => ({
  status,
  body: details === undefined ? { error } : { error, details },
});

const TrackingSwitch = z.strictObject({ installed: z.boolean() });

async function jsonBody(req: IncomingMessage): Promise<{ ok: true; value: unknown } | { ok: false; reply: Reply }> {
  const raw = await readBody(req, DEFAULTS.maxBodyBytes);
  if (raw === null) return { ok: false, reply: fail(413, 'body too large') };
  const text = raw.toString('utf8');
  if (text.trim() === '') return { ok: true, value: {} };
  const parsed = parseJson(text);
  return parsed.ok ? parsed : { ok: false, reply: fail(400, `body is not valid JSON: ${parsed.message}`) };
}

/** Runs `apply` on the JSON body, turning the fake's validation errors into 400s. */
async function withBody(req: IncomingMessage, apply: (value: unknown) => Reply | Promise<Reply>): Promise<Reply> {
  const body = await jsonBody(req);
  if (!body.ok) return body.reply;
  try {
    return await apply(body.value);
  } catch (e) {
    if (e instanceof InvalidSeedError || e instanceof InvalidWooFaultsError || e instanceof InvalidWooInputError)
      return fail(400, e.message, e.details);
    throw e;
  }
}

function switchTracking(state: WooState, value: unknown): Reply {
  const parsed = TrackingSwitch.safeParse(value);
  if (!parsed.success) return fail(400, 'expected {"installed": true|false}', fieldProblems(parsed.error));
  state.shipmentTracking = parsed.data.installed;
  return ok({ installed: state.shipmentTracking });
}

/** /_fake/orders/:id (GET) and /_fake/orders/:id/edit (POST); null when the path is neither. */
function orderRoute(state: WooState, req: IncomingMessage, method: string, path: string[]): Promise<Reply> | null {
  const id = path[0] === 'orders' && /^\d+$/.test(path[1] ?? '') ? Number(path[1]) : NaN;
  const edit = path.length === 3 && path[2] === 'edit' && method === 'POST';
  if (Number.isNaN(id) || !(edit || (path.length === 2 && method === 'GET'))) return null;
  const order = state.store.orders.get(id);
  if (!order) return Promise.resolve(fail(404, `no order ${path[1]}`));
  if (!edit) return Promise.resolve(ok(orderView(order)));
  return withBody(req, (value) => {
    editOrder(state.actions(), order, parseInput(OrderEditSchema, value, 'order edit'));
    return ok(orderView(order));
  });
}

/** /_fake/webhooks/:id (DELETE); null when the path is not that. */
function webhookRoute(state: WooState, method: string, path: string[]): Reply | null {
  if (path[0] !== 'webhooks' || path.length !== 2 || method !== 'DELETE') return null;
  const removed = /^\d+$/.test(path[1]!) ? state.webhooks.remove(Number(path[1])) : null;
  return removed ? ok({ deleted: removed }) : fail(404, `no webhook ${path[1]}`);
}

export async function handleAdmin(state: WooState, req: IncomingMessage, method: string, path: string[]): Promise<Reply> {
  const route = `${method} ${path.join('/')}`;
  const byId = orderRoute(state, req, method, path) ?? webhookRoute(state, method, path);
  if (byId) return byId;
  switch (route) {
    case 'GET orders':
      return ok([...state.store.orders.values()].map(orderView));
    case 'POST orders':
      return withBody(req, (value) => ok(orderView(state.store.createOrder(parseSeed(value))), 201));
    case 'POST orders/generate':
      return withBody(req, (value) => ok(generateOrders(state.store, parseInput(GenerateOrdersSchema, value, 'generate options')), 201));
    case 'GET webhooks':
      return ok(state.webhooks.list());
    case 'POST webhooks':
      return withBody(req, async (value) => ok(await state.webhooks.create(parseInput(WebhookInputSchema, value, 'webhook')), 201));
    case 'GET faults':
      return ok(state.faults.current());
    case 'POST faults':
      return withBody(req, (value) => ok(state.faults.set(value)));
    case 'POST shipment-tracking':
      return withBody(req, (value) => switchTracking(state, value));
    case 'GET stats':
      return ok(state.traffic.snapshot());
    case 'POST stats/reset':
      state.traffic.reset();
      return ok(state.traffic.snapshot());
    default:
      return fail(404, `unknown admin route ${method} /_fake/${path.join('/')}`);
  }
}
