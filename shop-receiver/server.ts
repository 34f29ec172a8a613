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
import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { fieldProblems, type FieldProblem } from '../shipping-api/contract';
import { InvalidFaultsError, mulberry32, TokenBuckets } from '../fake-shipping-api/faults';
import { ShipmentEvent, shipmentEventId } from '../shop-sync/events';
import { WebhookSecrets } from '../shop-sync/webhook';
import { cloneFaults, isGone, NO_FAULTS, ReceiverFaultsPatch, type ReceiverFaults } from './faults';
import { renderOrdersPage } from './page';
import { ReceiverStore, type LoggedEvent, type OrderView } from './store';
import { cancellableDelays } from '../dev-server/local-server';

export type { ReceiverFaults, ReceiverFaultsPatch } from './faults';
export type { LoggedEvent, OrderView } from './store';
export { InvalidFaultsError } from '../fake-shipping-api/faults';

export const RECEIVER_DEFAULTS = {
  host: '127.0.0.1',
  port: 0,
  seed: 1,
  maxBodyBytes: 1024 * 1024,
  /** The standardwebhooks package's own tolerance; checked first here for a clearer message. */
  toleranceSeconds: 5 * 60,
} as const;

export interface ShopReceiverOptions {
  /** whsec_ secrets; a request signed with any of them is accepted. */
  secrets: string[];
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (a random free port). */
  port?: number;
  /** Seed of the PRNG behind errorRate. Default 1. */
  seed?: number;
  faults?: ReceiverFaultsPatch;
  /** Called once each webhook answer has been written to the socket (tests act on "the shop answered"). */
  onWebhookAnswered?: (answer: WebhookAnswer) => void;
}

export interface WebhookAnswer {
  shop: string;
  status: number;
  /** The webhook-id header as sent, when there was one. */
  webhookId: string | null;
}

export interface ShopReceiverStats {
  /** Answers to POST /webhooks/:shop, by status code. */
  answers: Record<string, number>;
  applied: number;
  late: number;
  duplicates: number;
}

export interface ShopReceiverState {
  orders: OrderView[];
  events: LoggedEvent[];
  stats: ShopReceiverStats;
  faults: ReceiverFaults;
}

export interface ShopReceiver {
  /** e.g. http://127.0.0.1:8090 */
  url: string;
  port: number;
  /** Where a shop's connector should point: `${url}/webhooks/<shop>`. */
  webhookUrl(shop: string): string;
  state(): ShopReceiverState;
  /**
   * Validates and applies a partial patch (throws InvalidFaultsError naming the field); resolves
   * once the listening socket matches `down`.
   */
  setFaults(patch: ReceiverFaultsPatch): Promise<ReceiverFaults>;
  /** Forgets orders, events, de-duplication ids and stats (not faults). */
  reset(): void;
  /** Stops listening and destroys every socket. */
  close(): Promise<void>;
}

interface Answer {
  status: number;
  body?: unknown;
  html?: string;
  headers?: Record<string, string>;
}

const error = (status: number, message: string, extra: Record<string, unknown> = {}, headers?: Record<string, string>): Answer => ({
  status,
  body: { error: message, ...extra },
  headers,
});

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > limit ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * Standard Webhooks verification with any of `secrets`: 400 for missing or malformed headers,
 * 401 for a timestamp outside the tolerance or a signature no secret produces.
 */
export function verifyRequest(raw: Buffer, req: IncomingMessage, secrets: readonly string[], nowMs: number): Answer | null {
  const id = header(req, 'webhook-id');
  const timestamp = header(req, 'webhook-timestamp');
  const signature = header(req, 'webhook-signature');
  const absent = [
    ['webhook-id', id],
    ['webhook-timestamp', timestamp],
    ['webhook-signature', signature],
  ].filter(([, v]) => v === undefined || v === '');
  if (absent.length > 0) return error(400, `missing header${absent.length > 1 ? 's' : ''} ${absent.map(([n]) => n).join(', ')}`);
  if (!/^\d+$/.test(timestamp!)) return error(400, 'webhook-timestamp must be integer Unix seconds');
  const skew = Math.floor(nowMs / 1000) - Number(timestamp);
  if (Math.abs(skew) > RECEIVER_DEFAULTS.toleranceSeconds) {
    const which = skew > 0 ? `${skew} s old` : `${-skew} s in the future`;
    return error(401, `webhook-timestamp is ${which}; tolerance is ${RECEIVER_DEFAULTS.toleranceSeconds} s (replayed message, or a clock off)`);
  }
  const headers = { 'webhook-id': id!, 'webhook-timestamp': timestamp!, 'webhook-signature': signature! };
  for (const secret of secrets) {
    try {
      new Webhook(secret).verify(raw, headers, { jsonParse: false });
      return null;
    } catch {
      // try the next secret
    }
  }
  return error(401, 'webhook-signature: no signature matches any configured secret');
}

export async function startShopReceiver(options: ShopReceiverOptions): Promise<ShopReceiver> {
  const parsedSecrets = WebhookSecrets.safeParse(options.secrets);
  if (!parsedSecrets.success) {
    const problems = fieldProblems(parsedSecrets.error, ['secrets']);
    throw new Error(`startShopReceiver: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`);
  }
  const secrets = parsedSecrets.data;
  const host = options.host ?? RECEIVER_DEFAULTS.host;
  const random = mulberry32(options.seed ?? RECEIVER_DEFAULTS.seed);
  const store = new ReceiverStore();

  let faults = cloneFaults(NO_FAULTS);
  let buckets: TokenBuckets | null = null;
  let downTimer: NodeJS.Timeout | null = null;
  const emptyStats = (): ShopReceiverStats => ({ answers: {}, applied: 0, late: 0, duplicates: 0 });
  let stats = emptyStats();

  /** Validates and applies a patch to the fault state; the socket follows in syncListening. */
  function updateFaults(patch: unknown, overHttp: boolean): ReceiverFaults {
    const parsed = ReceiverFaultsPatch.safeParse(patch);
    const problems: FieldProblem[] = parsed.success ? [] : fieldProblems(parsed.error);
    if (parsed.success) {
      const p = parsed.data;
      if (p.down !== undefined && p.downForMs !== undefined) problems.push({ field: 'down', message: 'give down or downForMs, not both' });
      if (overHttp && p.down === true) {
        problems.push({ field: 'down', message: 'down: true over HTTP would take this admin endpoint down with it; use downForMs' });
      }
    }
    if (!parsed.success || problems.length > 0) throw new InvalidFaultsError(problems);
    const { down, downForMs, ...rest } = parsed.data;
    faults = cloneFaults({ ...faults, ...(rest as Partial<ReceiverFaults>) });
    if (rest.rateLimit !== undefined) buckets = faults.rateLimit === null ? null : new TokenBuckets(faults.rateLimit);
    if (down !== undefined || downForMs !== undefined) {
      if (downTimer) clearTimeout(downTimer);
      downTimer = null;
      faults.down = down ?? true;
      if (downForMs !== undefined) {
        // Not unref'd: while down, this timer is what keeps a CLI receiver alive.
        downTimer = setTimeout(() => {
          downTimer = null;
          faults.down = false;
          void syncListening();
        }, downForMs);
      }
    }
    return cloneFaults(faults);
  }

  // ------------------------------------------------------------ webhooks

  async function handleWebhook(req: IncomingMessage, shop: string): Promise<Answer> {
    const raw = await readBody(req, RECEIVER_DEFAULTS.maxBodyBytes);
    if (raw === null) return error(413, `body larger than ${RECEIVER_DEFAULTS.maxBodyBytes} bytes`);

    // Faults first: a failing shop does not get as far as reading the event.
    const queued = faults.failNext.shift();
    if (queued) {
      const retryAfter = queued.retryAfter === undefined ? (queued.status === 429 ? '1' : null) : queued.retryAfter;
      return error(queued.status, `injected failure (failNext)`, {}, { 'x-fault': 'fail-next', ...(retryAfter === null ? {} : { 'retry-after': retryAfter }) });
    }
    if (isGone(faults, shop)) return error(410, `shop ${shop} no longer accepts webhooks (injected: gone)`, {}, { 'x-fault': 'gone' });
    if (buckets) {
      const wait = buckets.take('webhooks', Date.now());
      if (wait > 0) return error(429, 'too many requests (injected: rateLimit)', {}, { 'retry-after': String(wait), 'x-fault': 'rate-limit' });
    }
    if (faults.errorRate > 0 && random() < faults.errorRate) return error(500, 'internal error (injected: errorRate)', {}, { 'x-fault': 'error-rate' });

    const refused = verifyRequest(raw, req, secrets, Date.now());
    if (refused) return refused;

    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      return error(400, 'body is not JSON');
    }
    const parsed = ShipmentEvent.safeParse(json);
    if (!parsed.success) return error(400, 'body is not a valid shipment event', { details: fieldProblems(parsed.error) });
    const event = parsed.data;
    const webhookId = header(req, 'webhook-id')!;
    if (event.id !== webhookId) return error(400, 'id: does not equal the webhook-id header');
    if (event.shop !== shop) return error(400, `shop: "${event.shop}" does not match the URL's shop "${shop}"`);
    // Receivers need not do this; the reference receiver does, to catch a sender bug.
    if (event.id !== shipmentEventId(event)) return error(400, 'id: is not the id derived from shop, orderId and sequence');

    const { status } = store.apply(webhookId, event);
    if (status === 'duplicate') stats.duplicates += 1;
    else stats[status] += 1;
    return { status: 200, body: { status, id: event.id, sequence: event.sequence } };
  }

  // ------------------------------------------------------------ admin

  async function handleAdmin(req: IncomingMessage, res: ServerResponse, method: string, path: string): Promise<Answer> {
    const allow = (methods: string) => error(405, `method ${method} not allowed; allowed: ${methods}`, {}, { allow: methods });
    switch (path) {
      case 'stats':
        return method === 'GET' ? { status: 200, body: structuredClone(stats) } : allow('GET');
      case 'reset':
        if (method !== 'POST') return allow('POST');
        store.clear();
        stats = emptyStats();
        return { status: 200, body: structuredClone(stats) };
      case 'faults': {
        if (method === 'GET') return { status: 200, body: cloneFaults(faults) };
        if (method !== 'POST') return allow('GET, POST');
        const raw = await readBody(req, RECEIVER_DEFAULTS.maxBodyBytes);
        if (raw === null) return error(413, 'body too large');
        let json: unknown;
        try {
          json = raw.length === 0 ? {} : JSON.parse(raw.toString('utf8'));
        } catch {
          return error(400, 'body is not JSON');
        }
        try {
          const applied = updateFaults(json, true);
          // Going down closes every socket, this one included: answer first.
          res.once('finish', () => void syncListening());
          return { status: 200, body: applied };
        } catch (e) {
          if (e instanceof InvalidFaultsError) return error(400, 'invalid faults patch', { details: e.details });
          throw e;
        }
      }
      default:
        return error(404, 'unknown admin endpoint');
    }
  }

  // ------------------------------------------------------------ plumbing

  let closed = false;
  const sockets = new Set<Socket>();
  const { delay, releaseAll: releaseDelays } = cancellableDelays();

  function send(res: ServerResponse, answer: Answer): void {
    if (res.destroyed || res.headersSent) return;
    const isHtml = answer.html !== undefined;
    const text = isHtml ? answer.html! : answer.body === undefined ? '' : JSON.stringify(answer.body);
    res.writeHead(answer.status, {
      'content-type': isHtml ? 'text/html; charset=utf-8' : 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      'cache-control': 'no-store',
      ...answer.headers,
    });
    res.end(text);
  }

  function describeFaults(): string {
    const f = faults;
    const on = [
      f.slowMs > 0 ? `slowMs ${f.slowMs}` : '',
      f.errorRate > 0 ? `errorRate ${f.errorRate}` : '',
      f.rateLimit ? `rateLimit ${f.rateLimit.perSecond}/s burst ${f.rateLimit.burst}` : '',
      f.gone === true ? 'gone (all shops)' : Array.isArray(f.gone) && f.gone.length > 0 ? `gone (${f.gone.join(', ')})` : '',
      f.failNext.length > 0 ? `failNext ${f.failNext.map((e) => e.status).join(',')}` : '',
    ].filter(Boolean);
    return on.length > 0 ? on.join(', ') : 'none';
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    const url = new URL(req.url ?? '/', 'http://receiver.invalid');
    let segments: string[];
    try {
      segments = url.pathname.split('/').filter((s) => s !== '').map(decodeURIComponent);
    } catch {
      return send(res, error(404, 'not found'));
    }
    const [first, second, ...rest] = segments;

    if (first === 'webhooks' && second !== undefined && rest.length === 0) {
      const answer = method === 'POST' ? await handleWebhook(req, second) : error(405, 'use POST', {}, { allow: 'POST' });
      if (faults.slowMs > 0) await delay(faults.slowMs);
      const key = String(answer.status);
      stats.answers[key] = (stats.answers[key] ?? 0) + 1;
      const onAnswered = options.onWebhookAnswered;
      if (onAnswered) res.once('finish', () => onAnswered({ shop: second, status: answer.status, webhookId: header(req, 'webhook-id') ?? null }));
      return send(res, answer);
    }
    if (first === '__admin' && second !== undefined && rest.length === 0) return send(res, await handleAdmin(req, res, method, second));
    if (method !== 'GET' && (first === undefined || first === 'api')) return send(res, error(405, 'use GET', {}, { allow: 'GET' }));
    if (first === undefined) {
      const orders = store.orderViews();
      const events = store.events().length;
      return send(res, { status: 200, html: renderOrdersPage(orders, { events, duplicates: stats.duplicates, faults: describeFaults() }) });
    }
    if (first === 'api' && second === 'orders' && rest.length === 0) return send(res, { status: 200, body: { orders: store.orderViews() } });
    if (first === 'api' && second === 'events' && rest.length === 0) return send(res, { status: 200, body: { events: store.events() } });
    return send(res, error(404, `not found; webhooks go to POST /webhooks/<shop>`));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      process.emitWarning(`shop receiver: unexpected error: ${err instanceof Error ? err.stack : String(err)}`);
      if (!res.headersSent) send(res, error(500, `internal error (receiver bug): ${STATUS_CODES[500]}`));
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  function listen(port: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  }

  function stopListening(): Promise<void> {
    const done = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    return done;
  }

  await listen(options.port ?? RECEIVER_DEFAULTS.port);
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('shop receiver: no TCP address');
  const port = address.port;
  const baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let listening = true;

  /**
   * "Down" means what a stopped shop looks like to the sender: the listening socket is closed
   * (new connections are refused) and open keep-alive connections are destroyed, so no request
   * reaches the receiver. Clearing `down` listens again on the same port.
   */
  let transition: Promise<void> = Promise.resolve();
  function syncListening(): Promise<void> {
    transition = transition.then(async () => {
      if (closed) return;
      if (faults.down && listening) {
        listening = false;
        await stopListening();
      } else if (!faults.down && !listening) {
        try {
          await listen(port);
          listening = true;
        } catch (e) {
          faults.down = true;
          process.emitWarning(`shop receiver: could not listen again on port ${port}: ${(e as Error).message}`);
        }
      }
    });
    return transition;
  }

  if (options.faults) {
    updateFaults(options.faults, false);
    await syncListening();
  }

  return {
    url: baseUrl,
    port,
    webhookUrl: (shop) => `${baseUrl}/webhooks/${encodeURIComponent(shop)}`,
    state: () => ({ orders: store.orderViews(), events: store.events(), stats: structuredClone(stats), faults: cloneFaults(faults) }),
    setFaults: async (patch) => {
      updateFaults(patch, false);
      await syncListening();
      return cloneFaults(faults);
    },
    reset: () => {
      store.clear();
      stats = emptyStats();
    },
    close: async () => {
      if (closed) return;
      closed = true;
      if (downTimer) clearTimeout(downTimer);
      releaseDelays();
      await transition;
      if (listening) await stopListening();
    },
  };
}
