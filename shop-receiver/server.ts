/**
 * A reference shop receiver on plain node:http, for tests and the demo: it accepts shipment
 * events at POST /webhooks/:shop the way a careful shop integration should (verify the
 * Standard Webhooks signature with the `standardwebhooks` package, refuse stale timestamps,
 * validate the body with the event schema, de-duplicate on webhook-id, never let a late event
 * downgrade an order), shows the orders at GET /, and injects faults on request.
 *
 * Routes: GET / (HTML), GET /api/orders, GET /api/events, POST /webhooks/:shop,
 * GET /__admin/stats, GET|POST /__admin/faults, POST /__admin/reset. See docs/shop-sync.md.
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import {
  baseUrlOf,
  cancellableDelays,
  header,
  HTML_TYPE,
  JSON_TYPE,
  jsonText,
  LocalHttpServer,
  requestLine,
  writeAnswer,
} from '../local-http';
import { handleAdmin } from './admin-route';
import { EventJournal } from './journal';
import { error, type ReceiverAnswer } from './answers';
import { cloneFaults, describeFaults } from './faults';
import { DownSwitch } from './listening';
import { renderOrdersPage } from './page';
import { ReceiverState } from './receiver-state';
import { RECEIVER_DEFAULTS, type ShopReceiver, type ShopReceiverOptions } from './types';
import { handleWebhook } from './webhook-route';

export type { ReceiverFaults, ReceiverFaultsPatch } from './faults';
export type { LoggedEvent, OrderView } from './store';
export { InvalidFaultsError } from '../fake-shipping-api/faults';
export { RECEIVER_DEFAULTS } from './types';
export type { ShopReceiver, ShopReceiverOptions, ShopReceiverState, ShopReceiverStats, WebhookAnswer } from './types';
export { verifyRequest } from './verify';

function send(res: ServerResponse, answer: ReceiverAnswer): void {
  if (res.destroyed || res.headersSent) return;
  const isHtml = answer.html !== undefined;
  const text = isHtml ? answer.html! : jsonText(answer.body);
  writeAnswer(res, answer.status, text, isHtml ? HTML_TYPE : JSON_TYPE, { 'cache-control': 'no-store', ...answer.headers });
}

export async function startShopReceiver(options: ShopReceiverOptions): Promise<ShopReceiver> {
  const host = options.host ?? RECEIVER_DEFAULTS.host;
  // Built first: it refuses bad secrets before anything listens.
  const receiver = new ReceiverState(options, () => void down.sync());
  let closed = false;
  const { delay, releaseAll: releaseDelays } = cancellableDelays();

  if (options.journalFile) {
    const { journal, replayed } = EventJournal.open(options.journalFile, receiver.store, (m) => process.emitWarning(`shop receiver: ${m}`));
    receiver.journal = journal;
    receiver.stats.applied += replayed;
  }

  /** One request; `webhooks` false on the page port, which never takes them. */
  const route = async (req: IncomingMessage, res: ServerResponse, webhooks: boolean): Promise<void> => {
    const { method, segments } = requestLine(req);
    if (segments === null) return send(res, error(404, 'not found'));
    const [first, second, ...rest] = segments;

    if (first === 'webhooks' && second !== undefined && rest.length === 0) {
      if (!webhooks) return send(res, error(404, `not found; webhooks go to ${baseUrl}/webhooks/<shop>`));
      const answer = method === 'POST' ? await handleWebhook(req, second, receiver) : error(405, 'use POST', {}, { allow: 'POST' });
      if (receiver.faults.slowMs > 0) await delay(receiver.faults.slowMs);
      const key = String(answer.status);
      receiver.stats.answers[key] = (receiver.stats.answers[key] ?? 0) + 1;
      const onAnswered = options.onWebhookAnswered;
      if (onAnswered)
        res.once('finish', () => onAnswered({ shop: second, status: answer.status, webhookId: header(req, 'webhook-id') ?? null }));
      return send(res, answer);
    }
    if (first === '__admin' && second !== undefined && rest.length === 0) {
      return send(res, await handleAdmin(req, res, method, second, receiver, () => down.sync()));
    }
    if (method !== 'GET' && (first === undefined || first === 'api')) return send(res, error(405, 'use GET', {}, { allow: 'GET' }));
    if (first === undefined) {
      const page = {
        events: receiver.store.events().length,
        duplicates: receiver.stats.duplicates,
        faults: describeFaults(receiver.faults),
        down: receiver.faults.down ? { until: receiver.downUntil } : null,
      };
      return send(res, { status: 200, html: renderOrdersPage(receiver.store.orderViews(), page) });
    }
    if (first === 'api' && second === 'orders' && rest.length === 0)
      return send(res, { status: 200, body: { orders: receiver.store.orderViews() } });
    if (first === 'api' && second === 'events' && rest.length === 0)
      return send(res, { status: 200, body: { events: receiver.store.events() } });
    return send(res, error(404, `not found; webhooks go to POST /webhooks/<shop>`));
  };
  const internalError = (res: ServerResponse) => send(res, error(500, `internal error (receiver bug): ${STATUS_CODES[500]}`));
  const http: LocalHttpServer = new LocalHttpServer('shop receiver', (req, res) => route(req, res, true), internalError);
  const pageHttp =
    options.pagePort === undefined ? null : new LocalHttpServer('shop page', (req, res) => route(req, res, false), internalError);

  await http.listen(options.port ?? RECEIVER_DEFAULTS.port, host);
  const port = http.port();
  const baseUrl = baseUrlOf(host, port);
  if (pageHttp) await pageHttp.listen(options.pagePort!, host);
  const down: DownSwitch = new DownSwitch(http, host, port, receiver);

  if (options.faults) {
    receiver.updateFaults(options.faults, false);
    await down.sync();
  }

  return {
    url: baseUrl,
    port,
    ...(pageHttp ? { pageUrl: baseUrlOf(host, pageHttp.port()) } : {}),
    webhookUrl: (shop) => `${baseUrl}/webhooks/${encodeURIComponent(shop)}`,
    state: () => receiver.snapshot(),
    setFaults: async (patch) => {
      receiver.updateFaults(patch, false);
      await down.sync();
      return cloneFaults(receiver.faults);
    },
    reset: () => receiver.reset(),
    close: async () => {
      if (closed) return;
      closed = true;
      receiver.stopDownTimer();
      releaseDelays();
      await down.close();
      await pageHttp?.stopListening();
      receiver.journal?.close();
    },
  };
}
