/**
 * A local fake of the shipping API (spec 1.0.0) on plain node:http, for development and
 * tests: authentication, idempotent labels, courier rejections, orders, time-driven tracking,
 * couriers and products, plus injectable faults (rate limit, 500s, latency, hangs, malformed
 * bodies, a deterministic fail-next queue) and admin endpoints to steer and observe it.
 *
 * Every response shape comes from ../shipping-api/contract.ts. Behaviour the spec leaves
 * open is chosen here and documented in docs/fake-shipping-api.md.
 */
import { randomUUID } from 'node:crypto';
import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import {
  COURIER_ERROR_CODE,
  fieldProblems,
  LabelRequest,
  type CourierList,
  type FieldProblem,
  type LabelResult,
  type ProductList,
  type StandardErrorBody,
  type TrackingFailureBody,
  type ValidationErrorBody,
} from '../shipping-api/contract';
import type { z } from 'zod';
import { CATALOG, findCourier } from './catalog';
import {
  cloneFaults,
  DEFAULT_FAULTS,
  FaultsPatch,
  InvalidFaultsError,
  mulberry32,
  TokenBuckets,
  type EndpointKey,
  type Faults,
} from './faults';
import {
  canonicalJson,
  endingOf,
  labelDocument,
  orderDetail,
  trackingRecord,
  type LabelRecord,
} from './records';
import { cancellableDelays } from '../dev-server/local-server';

export type { EndpointKey, FailNextEntry, Faults, RateLimit, RetryAfterRange } from './faults';
export { ENDPOINT_KEYS, FaultsPatch, InvalidFaultsError, normalizeEndpointKey } from './faults';
export { INTEGRATION_CODE } from './catalog';

export interface FakeAccount {
  name: string;
  apiKey: string;
  apiToken: string;
}

/** Stage length of the poll-counted tracking model (only its checkpoint times show it). */
const POLL_STAGE_MS = 60_000;

export interface FakeShippingApiOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (a random free port). */
  port?: number;
  /** Default: one account from SHIPPING_API_KEY / SHIPPING_API_TOKEN, else the dev credentials. */
  accounts?: FakeAccount[];
  /** Length of one tracking stage. Default 60 000 ms. */
  trackingStepMs?: number;
  /**
   * When set, tracking advances by polls instead of time: each stage lasts this many
   * GET /tracking calls of the label (benchmarks of N unchanged polls). Default unset.
   */
  trackingStepPolls?: number;
  /** How many API requests requestLog() keeps (the newest). Default 100 000. */
  requestLogSize?: number;
  /** Destination postal codes the courier rejects. Default ["00000"]. */
  rejectPostalCodes?: string[];
  /** Seed of the PRNG behind every fault rate. Default 1. */
  seed?: number;
  faults?: Partial<Faults>;
}

/** Which fault shaped a request's answer (the `x-fake-fault` header, plus the unanswered ones). */
export type FakeFault = 'fail-next' | 'rate-limit' | 'rate-limited' | 'server-error' | 'malformed' | 'hang' | 'lost-answer';

/** One API request, for tests that check timing (e.g. nothing sent before Retry-After). */
export interface FakeRequest {
  /** When the answer was sent (or, unanswered, when it was decided not to answer). */
  at: number;
  /** When the request arrived (before its body was read). */
  receivedAt: number;
  endpoint: string;
  /** The label, order or tracking id in the path, when there is one. */
  id: string | null;
  /** The authenticated account's name; null for a 401. */
  account: string | null;
  /** POST /labels: the body's idempotencyKey and order.customerOrderNumber, when it has them. */
  idempotencyKey: string | null;
  customerOrderNumber: string | null;
  /** The status sent, or for an unanswered request the one the handler produced. */
  status: number;
  /** False for a hang or a lost answer: the client never saw `status`. */
  answered: boolean;
  fault: FakeFault | null;
  retryAfter: string | null;
}

export interface FakeStats {
  labelsCreated: number;
  labelsRejected: number;
  idempotentReplays: number;
  idempotencyPayloadMismatches: number;
  /** Endpoint key -> status code (or "hang", "lost") -> count. */
  requests: Record<string, Record<string, number>>;
}

export interface FakeLabelSummary {
  idempotencyKey: string;
  id: string;
  status: 'created' | 'failed';
  account: string;
  customerOrderNumber: string;
  createdAt: string;
}

export interface FakeShippingApi {
  baseUrl: string;
  port: number;
  stats(): FakeStats;
  /** API requests, oldest first, hung and lost ones included (admin and unmatched routes are not logged). */
  requestLog(): FakeRequest[];
  labels(): FakeLabelSummary[];
  /** Validates and applies a partial patch; throws InvalidFaultsError naming the field. */
  setFaults(patch: Partial<Faults>): Faults;
  resetStats(): void;
  /** Stops listening and destroys every socket, hanging ones included. */
  close(): Promise<void>;
}

export const DEV_API_KEY = 'dev-api-key';
export const DEV_API_TOKEN = 'dev-api-token';
export const DEFAULTS = {
  host: '127.0.0.1',
  port: 0,
  trackingStepMs: 60_000,
  rejectPostalCodes: ['00000'] as readonly string[],
  seed: 1,
  maxBodyBytes: 1024 * 1024,
} as const;

/** The default account, from the environment or the dev credentials; says which fell back. */
export function defaultAccount(env: NodeJS.ProcessEnv = process.env): {
  account: FakeAccount;
  devKey: boolean;
  devToken: boolean;
} {
  const key = env.SHIPPING_API_KEY;
  const token = env.SHIPPING_API_TOKEN;
  const devKey = key === undefined || key === '';
  const devToken = token === undefined || token === '';
  return {
    account: { name: 'default', apiKey: devKey ? DEV_API_KEY : key!, apiToken: devToken ? DEV_API_TOKEN : token! },
    devKey,
    devToken,
  };
}

// ---------------------------------------------------------------- answers

interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

type StandardError = z.infer<typeof StandardErrorBody>;

const CODE_OF_STATUS: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  422: 'UNPROCESSABLE_ENTITY',
  429: 'RATE_LIMITED',
  500: 'INTERNAL_ERROR',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
  504: 'GATEWAY_TIMEOUT',
};

function codeOfStatus(status: number): string {
  return (
    CODE_OF_STATUS[status] ??
    (STATUS_CODES[status] ?? `HTTP_${status}`).toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_|_$/g, '')
  );
}

/** The standard error body for a status, with an optional more specific message. */
function standard(status: number, error?: string, headers?: Record<string, string>): Answer {
  const body: StandardError = { error: error ?? STATUS_CODES[status] ?? `HTTP ${status}`, code: codeOfStatus(status) };
  return { status, body, headers };
}

function validationFailed(details: FieldProblem[], error = 'Validation failed'): Answer {
  const body: ValidationErrorBody = { error, details };
  return { status: 400, body };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a malformed answer breaks, per endpoint (documented in docs/fake-shipping-api.md). */
function malform(key: EndpointKey, body: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(body ?? {})) as Record<string, unknown>;
  switch (key) {
    case 'POST /labels':
    case 'GET /labels':
      copy.id = 12345;
      break;
    case 'GET /orders':
      if (copy.order && typeof copy.order === 'object') delete (copy.order as Record<string, unknown>).createdAt;
      break;
    case 'GET /tracking':
      copy.checkpoints = 'n/a';
      break;
    case 'GET /couriers':
      copy.couriers = null;
      break;
    case 'GET /products':
      copy.products = null;
      break;
  }
  return copy;
}

type Route = { kind: 'api'; key: EndpointKey; id?: string } | { kind: 'status'; answer: Answer };

function route(method: string, segments: string[]): Route {
  const [first, second, ...rest] = segments;
  const methodNotAllowed = (allow: string): Route => ({
    kind: 'status',
    answer: standard(405, `Method ${method} not allowed; allowed: ${allow}`, { allow }),
  });
  if (rest.length === 0) {
    if (first === 'labels' && second === undefined) return method === 'POST' ? { kind: 'api', key: 'POST /labels' } : methodNotAllowed('POST');
    if ((first === 'couriers' || first === 'products') && second === undefined) {
      return method === 'GET' ? { kind: 'api', key: `GET /${first}` } : methodNotAllowed('GET');
    }
    if ((first === 'labels' || first === 'orders' || first === 'tracking') && second !== undefined) {
      return method === 'GET' ? { kind: 'api', key: `GET /${first}`, id: second } : methodNotAllowed('GET');
    }
  }
  return { kind: 'status', answer: standard(404, 'Resource not found') };
}

function readBody(req: IncomingMessage, limit: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(tooLarge ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The idempotencyKey and customerOrderNumber of a label request body, as far as it has them. */
function identityOf(body: string | null): { idempotencyKey: string | null; customerOrderNumber: string | null } {
  let json: unknown;
  try {
    json = body === null ? null : JSON.parse(body);
  } catch {
    json = null;
  }
  const record = json !== null && typeof json === 'object' ? (json as Record<string, unknown>) : {};
  const order = record.order !== null && typeof record.order === 'object' ? (record.order as Record<string, unknown>) : {};
  return {
    idempotencyKey: typeof record.idempotencyKey === 'string' ? record.idempotencyKey : null,
    customerOrderNumber: typeof order.customerOrderNumber === 'string' ? order.customerOrderNumber : null,
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

// ---------------------------------------------------------------- the server

export async function startFakeShippingApi(options: FakeShippingApiOptions = {}): Promise<FakeShippingApi> {
  const host = options.host ?? DEFAULTS.host;
  const accounts = options.accounts ?? [defaultAccount().account];
  if (accounts.length === 0) throw new Error('startFakeShippingApi: at least one account is needed');
  const trackingStepMs = options.trackingStepMs ?? DEFAULTS.trackingStepMs;
  if (!Number.isFinite(trackingStepMs) || trackingStepMs < 0) throw new Error('startFakeShippingApi: trackingStepMs must be >= 0');
  const trackingStepPolls = options.trackingStepPolls;
  if (trackingStepPolls !== undefined && !(Number.isInteger(trackingStepPolls) && trackingStepPolls >= 1)) {
    throw new Error('startFakeShippingApi: trackingStepPolls must be an integer >= 1');
  }
  const trackingPolls = new Map<string, number>();
  const requestLogSize = options.requestLogSize ?? 100_000;
  let requests: FakeRequest[] = [];
  function logRequest(entry: Omit<FakeRequest, 'at'>): void {
    requests.push({ at: Date.now(), ...entry });
    if (requests.length > requestLogSize * 1.5) requests = requests.slice(-requestLogSize);
  }
  const rejectPostalCodes = new Set(options.rejectPostalCodes ?? DEFAULTS.rejectPostalCodes);
  const random = mulberry32(options.seed ?? DEFAULTS.seed);

  let faults: Faults = cloneFaults(DEFAULT_FAULTS);
  let buckets: TokenBuckets | null = null;

  const labels = new Map<string, LabelRecord>();
  const byIdempotencyKey = new Map<string, LabelRecord>();
  const byCustomerOrderNumber = new Map<string, LabelRecord[]>();
  let generatedOrderNumbers = 0;

  const emptyStats = (): FakeStats => ({
    labelsCreated: 0,
    labelsRejected: 0,
    idempotentReplays: 0,
    idempotencyPayloadMismatches: 0,
    requests: {},
  });
  let stats = emptyStats();

  function count(key: string, status: number | 'hang' | 'lost'): void {
    const perStatus = (stats.requests[key] ??= {});
    perStatus[String(status)] = (perStatus[String(status)] ?? 0) + 1;
  }

  function setFaults(patch: Partial<Faults>): Faults {
    const parsed = FaultsPatch.safeParse(patch);
    if (!parsed.success) throw new InvalidFaultsError(fieldProblems(parsed.error));
    const p = parsed.data;
    faults = cloneFaults({ ...faults, ...(p as Partial<Faults>) });
    if (p.rateLimit !== undefined) buckets = faults.rateLimit === null ? null : new TokenBuckets(faults.rateLimit);
    return cloneFaults(faults);
  }
  if (options.faults) setFaults(options.faults);

  function authenticate(req: IncomingMessage): FakeAccount | null {
    const key = header(req, 'x-rr-apikey');
    const token = header(req, 'x-rr-apitoken');
    if (!key || !token) return null;
    return accounts.find((a) => a.apiKey === key && a.apiToken === token) ?? null;
  }

  // ------------------------------------------------------------ API handlers

  function ownedLabel(account: FakeAccount, id: string, notFound: string): { record: LabelRecord } | { answer: Answer } {
    const record = labels.get(id);
    if (!record) return { answer: standard(404, notFound) };
    if (record.account !== account.name) return { answer: standard(403, 'Forbidden') };
    return { record };
  }

  function createLabel(text: string | null, account: FakeAccount): Answer {
    if (text === null) return standard(413, `Request body larger than ${DEFAULTS.maxBodyBytes} bytes`);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      return validationFailed([{ field: '(body)', message: `not valid JSON: ${(e as Error).message}` }], 'Request body is not valid JSON');
    }
    const parsed = LabelRequest.safeParse(json);
    if (!parsed.success) return validationFailed(fieldProblems(parsed.error));
    const request = parsed.data;

    // From here on nothing awaits: check-and-insert of the idempotency key is atomic.
    const idemKey = `${account.name}\u0000${request.idempotencyKey}`;
    const existing = byIdempotencyKey.get(idemKey);
    const fingerprint = canonicalJson(request);
    if (existing) {
      stats.idempotentReplays += 1;
      const headers: Record<string, string> = { 'idempotent-replayed': 'true' };
      if (existing.fingerprint !== fingerprint) {
        stats.idempotencyPayloadMismatches += 1;
        headers['x-fake-idempotency-mismatch'] = 'true';
      }
      return { status: 200, body: existing.originalResult, headers };
    }

    const courier = findCourier(request.courier);
    if (!courier) {
      return { status: 400, body: { error: `Shipping account not found for courier ${request.courier}`, code: COURIER_ERROR_CODE } };
    }
    if (!courier.products.some((p) => p.code === request.service.productCode)) {
      return validationFailed([
        {
          field: 'service.productCode',
          message: `product ${request.service.productCode} is not offered by courier ${request.courier}; available: ${courier.products
            .map((p) => p.code)
            .join(', ')}`,
        },
      ]);
    }

    const id = randomUUID();
    const createdAtMs = Date.now();
    const address = request.shipment.shipTo?.address;
    const postalCode = address?.postalCode;
    const rejected = postalCode !== undefined && rejectPostalCodes.has(postalCode);
    const customerOrderNumber =
      request.order?.customerOrderNumber ??
      `FAKE-${new Date(createdAtMs).toISOString().slice(0, 10).replace(/-/g, '')}-${String(++generatedOrderNumbers).padStart(6, '0')}`;
    const error = rejected ? { code: COURIER_ERROR_CODE, message: courier.rejection(postalCode, address?.countryCode ?? null) } : null;
    const result: LabelResult = {
      id,
      status: rejected ? 'failed' : 'created',
      courier: request.courier,
      customerOrderNumber,
      courierOrderNumber: rejected ? null : courier.orderNumber(),
      courierTrackingNumber: null,
      error,
    };
    const record: LabelRecord = {
      id,
      account: account.name,
      idempotencyKey: request.idempotencyKey,
      fingerprint,
      request,
      status: result.status,
      courier: result.courier,
      customerOrderNumber,
      courierOrderNumber: result.courierOrderNumber,
      futureTrackingNumber: rejected ? null : courier.trackingNumber(),
      error,
      createdAtMs,
      ending: endingOf(request),
      originalResult: result,
    };
    labels.set(id, record);
    byIdempotencyKey.set(idemKey, record);
    const conKey = `${account.name}\u0000${customerOrderNumber}`;
    byCustomerOrderNumber.set(conKey, [...(byCustomerOrderNumber.get(conKey) ?? []), record]);
    if (rejected) stats.labelsRejected += 1;
    else stats.labelsCreated += 1;
    return { status: 201, body: result };
  }

  function getTracking(account: FakeAccount, id: string): Answer {
    let record = labels.get(id);
    if (!record || record.account !== account.name) {
      const own = byCustomerOrderNumber.get(`${account.name}\u0000${id}`);
      if (own && own.length > 0) record = own[own.length - 1];
    }
    if (!record) {
      const otherAccount = accounts.some((a) => a.name !== account.name && byCustomerOrderNumber.has(`${a.name}\u0000${id}`));
      return otherAccount ? standard(403, 'Forbidden') : standard(404, 'Tracking not found');
    }
    if (record.account !== account.name) return standard(403, 'Forbidden');
    if (record.status === 'failed') {
      const body: z.infer<typeof TrackingFailureBody> = {
        error: 'Tracking unavailable: the label was not created',
        errorCode: record.error?.code ?? COURIER_ERROR_CODE,
        errorMessage: record.error?.message ?? 'The courier rejected the shipment',
      };
      return { status: 422, body };
    }
    let tracking: ReturnType<typeof trackingRecord>;
    if (trackingStepPolls !== undefined) {
      // Stage k after k × trackingStepPolls polls: replayed through the time-based model.
      const polls = trackingPolls.get(record.id) ?? 0;
      trackingPolls.set(record.id, polls + 1);
      const stage = Math.floor(polls / trackingStepPolls);
      tracking = trackingRecord(record, record.createdAtMs + stage * POLL_STAGE_MS, POLL_STAGE_MS);
    } else {
      tracking = trackingRecord(record, Date.now(), trackingStepMs);
    }
    return tracking === null ? standard(404, 'Tracking not found') : { status: 200, body: tracking };
  }

  function handleApi(key: EndpointKey, id: string | undefined, account: FakeAccount, url: URL, body: string | null): Answer {
    const now = Date.now();
    switch (key) {
      case 'POST /labels':
        return createLabel(body, account);
      case 'GET /labels': {
        const found = ownedLabel(account, id!, 'Label not found');
        return 'answer' in found ? found.answer : { status: 200, body: labelDocument(found.record, now, trackingStepMs) };
      }
      case 'GET /orders': {
        if (!UUID.test(id!)) return standard(404, 'Order not found');
        const found = ownedLabel(account, id!.toLowerCase(), 'Order not found');
        return 'answer' in found ? found.answer : { status: 200, body: orderDetail(found.record, now, trackingStepMs) };
      }
      case 'GET /tracking':
        return getTracking(account, id!);
      case 'GET /couriers': {
        const body: z.infer<typeof CourierList> = { couriers: CATALOG.map((c) => ({ ...c.courier })) };
        return { status: 200, body };
      }
      case 'GET /products': {
        const code = url.searchParams.get('courier');
        if (code === null || code === '') {
          return validationFailed([{ field: 'courier', message: 'query parameter is required' }]);
        }
        const courier = findCourier(code);
        if (!courier) return standard(404, `Courier not found: ${code}`);
        const body: z.infer<typeof ProductList> = { products: courier.products.map((p) => ({ ...p })) };
        return { status: 200, body };
      }
    }
  }

  // ------------------------------------------------------------ admin

  function labelSummaries(): FakeLabelSummary[] {
    return [...labels.values()].map((r) => ({
      idempotencyKey: r.idempotencyKey,
      id: r.id,
      status: r.status,
      account: r.account,
      customerOrderNumber: r.customerOrderNumber,
      createdAt: new Date(r.createdAtMs).toISOString(),
    }));
  }

  function snapshotStats(): FakeStats {
    return JSON.parse(JSON.stringify(stats)) as FakeStats;
  }

  async function handleAdmin(req: IncomingMessage, method: string, path: string): Promise<Answer> {
    const routes: Record<string, Record<string, () => Promise<Answer> | Answer>> = {
      stats: { GET: () => ({ status: 200, body: snapshotStats() }) },
      labels: { GET: () => ({ status: 200, body: { labels: labelSummaries() } }) },
      'reset-stats': {
        POST: () => {
          stats = emptyStats();
          return { status: 200, body: snapshotStats() };
        },
      },
      faults: {
        GET: () => ({ status: 200, body: cloneFaults(faults) }),
        POST: async () => {
          const text = await readBody(req, DEFAULTS.maxBodyBytes);
          if (text === null) return standard(413);
          let json: unknown;
          try {
            json = text.trim() === '' ? {} : JSON.parse(text);
          } catch (e) {
            return validationFailed([{ field: '(body)', message: `not valid JSON: ${(e as Error).message}` }], 'Request body is not valid JSON');
          }
          try {
            return { status: 200, body: setFaults(json as Partial<Faults>) };
          } catch (e) {
            if (e instanceof InvalidFaultsError) return validationFailed(e.details, 'Invalid faults patch');
            throw e;
          }
        },
      },
    };
    const handlers = routes[path];
    if (!handlers) return standard(404, 'Unknown admin endpoint');
    const handler = handlers[method];
    if (!handler) {
      const allow = Object.keys(handlers).join(', ');
      return standard(405, `Method ${method} not allowed; allowed: ${allow}`, { allow });
    }
    return handler();
  }

  // ------------------------------------------------------------ plumbing

  let closed = false;
  const sockets = new Set<Socket>();
  const { delay, releaseAll: releaseDelays } = cancellableDelays();

  function send(res: ServerResponse, answer: Answer): void {
    if (closed || res.destroyed || !res.socket || res.socket.destroyed) return;
    const text = answer.body === undefined ? '' : JSON.stringify(answer.body);
    res.writeHead(answer.status, {
      ...(text === '' ? {} : { 'content-type': 'application/json; charset=utf-8' }),
      'content-length': Buffer.byteLength(text),
      ...answer.headers,
    });
    res.end(text);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    const url = new URL(req.url ?? '/', 'http://fake.invalid');
    let segments: string[];
    try {
      segments = url.pathname.split('/').filter((s) => s !== '').map(decodeURIComponent);
    } catch {
      count(`${method} (unmatched)`, 404);
      return send(res, standard(404, 'Resource not found'));
    }

    if (segments[0] === '__admin') {
      return send(res, await handleAdmin(req, method, segments.slice(1).join('/')));
    }

    const r = route(method, segments);
    if (r.kind === 'status') {
      const known = ['labels', 'orders', 'tracking', 'couriers', 'products'].includes(segments[0] ?? '');
      count(known ? `${method} /${segments[0]}` : `${method} (unmatched)`, r.answer.status);
      return send(res, r.answer);
    }

    const key = r.key;
    const receivedAt = Date.now();
    const account = authenticate(req);
    // Read before any fault, so a faulted label request is logged with its key and order.
    const body = account && key === 'POST /labels' ? await readBody(req, DEFAULTS.maxBodyBytes) : null;
    const labelIdentity = identityOf(body);
    const log = (answer: Answer, answered: boolean, fault: FakeFault | null): void =>
      logRequest({
        receivedAt,
        endpoint: key,
        id: r.id ?? null,
        account: account?.name ?? null,
        ...labelIdentity,
        status: answer.status,
        answered,
        fault,
        retryAfter: answer.headers?.['retry-after'] ?? null,
      });
    const reply = (answer: Answer): void => {
      count(key, answer.status);
      log(answer, true, (answer.headers?.['x-fake-fault'] as FakeFault | undefined) ?? null);
      send(res, answer);
    };

    if (!account) return reply(standard(401, 'Unauthorized'));

    // 1. the deterministic fail-next queue
    const queued = faults.failNext.findIndex((e) => e.endpoint === undefined || e.endpoint === key);
    if (queued >= 0) {
      const [entry] = faults.failNext.splice(queued, 1);
      const headers: Record<string, string> = { 'x-fake-fault': 'fail-next' };
      if (entry!.status === 429 && entry!.retryAfter !== null) headers['retry-after'] = entry!.retryAfter ?? '1';
      return reply(standard(entry!.status, undefined, headers));
    }

    const inScope = faults.endpoints === null || faults.endpoints.includes(key);
    // 2. per-account rate limit
    if (inScope && buckets) {
      const wait = buckets.take(account.name, Date.now());
      if (wait > 0) {
        return reply(standard(429, 'Too many requests: rate limit exceeded', { 'retry-after': String(wait), 'x-fake-fault': 'rate-limit' }));
      }
    }
    // 3. random 429s, as from a quota shared with other clients of the account
    if (inScope && faults.rateLimitedRate > 0 && random() < faults.rateLimitedRate) {
      const { minSeconds, maxSeconds } = faults.rateLimitedRetryAfter;
      const wait = minSeconds + Math.floor(random() * (maxSeconds - minSeconds + 1));
      return reply(standard(429, 'Too many requests: rate limit exceeded', { 'retry-after': String(wait), 'x-fake-fault': 'rate-limited' }));
    }
    // 4. random server errors
    if (inScope && faults.serverErrorRate > 0 && random() < faults.serverErrorRate) {
      return reply(standard(500, 'Internal server error', { 'x-fake-fault': 'server-error' }));
    }

    // 5. handle (state changes here)
    const answer = handleApi(key, r.id, account, url, body);

    // 6. malformed body, hang, lost answer, latency
    if (inScope) {
      if (answer.status >= 200 && answer.status < 300 && faults.malformedRate > 0 && random() < faults.malformedRate) {
        answer.body = malform(key, answer.body);
        answer.headers = { ...answer.headers, 'x-fake-fault': 'malformed' };
      }
      if (faults.hangRate > 0 && random() < faults.hangRate) {
        count(key, 'hang');
        log(answer, false, 'hang');
        return; // handled, never answered: the socket stays open until the client gives up
      }
      if (faults.lostAnswerRate > 0 && random() < faults.lostAnswerRate) {
        count(key, 'lost');
        log(answer, false, 'lost-answer');
        res.socket?.destroy(); // handled, then the connection drops: the client sees a reset
        return;
      }
      if (faults.latencyMs > 0) await delay(faults.latencyMs);
    }
    reply(answer);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // A bug in the fake itself: answer 500 rather than leaving the client hanging.
      process.emitWarning(`fake shipping API: unexpected error: ${err instanceof Error ? err.stack : String(err)}`);
      if (!res.headersSent) send(res, standard(500, 'Internal server error (fake bug)'));
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULTS.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('fake shipping API: no TCP address');
  const port = address.port;
  const baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    baseUrl,
    port,
    stats: snapshotStats,
    requestLog: () => requests.slice(-requestLogSize),
    labels: labelSummaries,
    setFaults,
    resetStats: () => {
      stats = emptyStats();
    },
    close: async () => {
      if (closed) return;
      closed = true;
      releaseDelays();
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await done;
    },
  };
}
