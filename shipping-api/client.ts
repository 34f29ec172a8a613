/**
 * Typed client of the shipping API on undici. One keep-alive pool per client (create one
 * client per account and share it); every request is validated before it is sent and every
 * response after it arrives, and every failure is a ShippingApiError. The account's
 * credentials (credentials.ts) are taken per call, so a rotated key is used from the next call.
 */
import { Pool, type Dispatcher } from 'undici';
import type { z } from 'zod';
import {
  CourierList,
  fieldProblems,
  LabelRequest,
  LabelResult,
  OrderDetail,
  OrderId,
  ProductList,
  TrackingId,
  TrackingRecord,
  type Courier,
  type Product,
} from './contract';
import { authHeaders, fixedCredentials, redact, type CredentialSource, type Credentials } from './credentials';
import { classifyErrorResponse, contractViolation, networkError, ShippingApiError, type Operation } from './errors';
import { callSpan, serverOf, type CallSpan } from '../tracing/spans';

export interface ShippingApiClientOptions {
  /** Sandbox or production base address, e.g. https://sandbox.example/api. */
  baseUrl: string;
  /** Inline credentials of the two-header scheme; or `credentials`, which wins when given. */
  apiKey?: string;
  apiToken?: string;
  /** Where the credentials come from (either scheme, inline or files): see credentials.ts. */
  credentials?: CredentialSource;
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  /** Keep-alive connections in the pool. */
  connections?: number;
  /** Largest answer body read; a longer one is abandoned as a contract violation naming the limit. */
  maxResponseBytes?: number;
  /**
   * A call's whole time, connection to last byte, with or without a caller's signal: the
   * timeouts above are idle limits, and a body that trickles in forever never meets them.
   * Default: connectTimeoutMs + headersTimeoutMs + bodyTimeoutMs.
   */
  totalTimeoutMs?: number;
  /**
   * Name of the query parameter of GET /products that selects the courier. The spec does not
   * show it; `courier` is our default guess, configurable so a real deployment can correct it.
   */
  productsCourierParam?: string;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export const CLIENT_DEFAULTS = {
  connectTimeoutMs: 5_000,
  headersTimeoutMs: 15_000,
  bodyTimeoutMs: 15_000,
  connections: 16,
  maxResponseBytes: 4 * 1024 * 1024,
  productsCourierParam: 'courier',
} as const;

export class ShippingApiClient {
  private readonly pool: Pool;
  private readonly pathPrefix: string;
  /** The API's host and port, for the calls' spans. */
  private readonly server: ReturnType<typeof serverOf>;
  private readonly credentials: CredentialSource;
  private readonly productsCourierParam: string;
  private readonly maxResponseBytes: number;
  private readonly totalTimeoutMs: number;

  constructor(options: ShippingApiClientOptions) {
    const url = new URL(options.baseUrl);
    this.pathPrefix = url.pathname.replace(/\/+$/, '');
    this.server = serverOf(url);
    if (!options.credentials && (!options.apiKey || !options.apiToken)) {
      throw new Error('ShippingApiClient: credentials, or apiKey and apiToken, are required');
    }
    this.credentials = options.credentials ?? fixedCredentials({ scheme: 'headers', apiKey: options.apiKey!, apiToken: options.apiToken! });
    this.productsCourierParam = options.productsCourierParam ?? CLIENT_DEFAULTS.productsCourierParam;
    this.maxResponseBytes = options.maxResponseBytes ?? CLIENT_DEFAULTS.maxResponseBytes;
    const connect = options.connectTimeoutMs ?? CLIENT_DEFAULTS.connectTimeoutMs;
    this.totalTimeoutMs =
      options.totalTimeoutMs ??
      connect + (options.headersTimeoutMs ?? CLIENT_DEFAULTS.headersTimeoutMs) + (options.bodyTimeoutMs ?? CLIENT_DEFAULTS.bodyTimeoutMs);
    this.pool = new Pool(url.origin, {
      connections: options.connections ?? CLIENT_DEFAULTS.connections,
      connect: { timeout: options.connectTimeoutMs ?? CLIENT_DEFAULTS.connectTimeoutMs },
      headersTimeout: options.headersTimeoutMs ?? CLIENT_DEFAULTS.headersTimeoutMs,
      bodyTimeout: options.bodyTimeoutMs ?? CLIENT_DEFAULTS.bodyTimeoutMs,
    });
  }

  /**
   * POST /labels. Resolves with the result only when the label was created; a result with
   * status `failed` is thrown as a `courier_error` carrying the carrier's code and wording.
   */
  async createLabel(request: LabelRequest, options: CallOptions = {}): Promise<LabelResult> {
    const body = checkRequest('createLabel', LabelRequest, request);
    const result = await this.call('createLabel', 'POST', '/labels', LabelResult, options, body);
    if (result.status === 'failed') {
      const code = result.error?.code ?? 'UNKNOWN';
      const wording = result.error?.message ?? '(the service gave no message)';
      throw new ShippingApiError({
        kind: 'courier_error',
        operation: 'createLabel',
        labelId: result.id,
        code,
        courierCode: code,
        courierMessage: wording,
        message: `createLabel: the courier rejected the label: ${code}: ${wording}`,
      });
    }
    return result;
  }

  /** GET /orders/{orderId}: the order with the carrier details supplied at label creation. */
  async getOrder(orderId: string, options: CallOptions = {}) {
    checkRequest('getOrder', OrderId, orderId, ['orderId']);
    return this.call('getOrder', 'GET', `/orders/${encodeURIComponent(orderId)}`, OrderDetail, options);
  }

  /**
   * GET /labels/{id}. The spec does not show this payload, so it is returned as the raw JSON
   * document, unvalidated; callers must not rely on its shape.
   */
  async getLabel(labelId: string, options: CallOptions = {}): Promise<unknown> {
    checkRequest('getLabel', TrackingId, labelId, ['id']);
    return this.call('getLabel', 'GET', `/labels/${encodeURIComponent(labelId)}`, undefined, options);
  }

  /** GET /tracking/{id}, by label id or customerOrderNumber. */
  async getTracking(id: string, options: CallOptions = {}) {
    checkRequest('getTracking', TrackingId, id, ['id']);
    return this.call('getTracking', 'GET', `/tracking/${encodeURIComponent(id)}`, TrackingRecord, options);
  }

  async listCouriers(options: CallOptions = {}): Promise<Courier[]> {
    return (await this.call('listCouriers', 'GET', '/couriers', CourierList, options)).couriers;
  }

  async listProducts(courier: string, options: CallOptions = {}): Promise<Product[]> {
    const query = new URLSearchParams({ [this.productsCourierParam]: courier });
    return (await this.call('listProducts', 'GET', `/products?${query.toString()}`, ProductList, options)).products;
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  /**
   * One call with the account's current credentials. A 401 reads file credentials again once:
   * if they changed (rotated), the call is made again with the new ones before it fails. Error
   * texts lose any credential the answer echoed.
   */
  private async call<S extends z.ZodType | undefined>(
    operation: Operation,
    method: 'GET' | 'POST',
    path: string,
    schema: S,
    options: CallOptions,
    body?: unknown,
  ): Promise<S extends z.ZodType ? z.infer<S> : unknown> {
    let credentials = await this.credentials.current();
    try {
      try {
        return await this.send(operation, method, path, schema, options, credentials, body);
      } catch (err) {
        if (!(err instanceof ShippingApiError) || err.kind !== 'unauthorized') throw err;
        const renewed = await this.credentials.renewedAfter(credentials);
        if (!renewed) throw err;
        credentials = renewed;
        return await this.send(operation, method, path, schema, options, credentials, body);
      }
    } catch (err) {
      throw err instanceof ShippingApiError ? scrubbed(err, this.credentials.secrets()) : err;
    }
  }

  /** One request; in an order's trace, a span named by the operation (no path: it holds ids). */
  private send<S extends z.ZodType | undefined>(
    operation: Operation,
    method: 'GET' | 'POST',
    path: string,
    schema: S,
    options: CallOptions,
    credentials: Credentials,
    body?: unknown,
  ): Promise<S extends z.ZodType ? z.infer<S> : unknown> {
    const attributes = { 'shipping.operation': operation, 'http.request.method': method, ...this.server };
    return callSpan(`shipping-api ${operation}`, attributes, (span) =>
      this.exchange(span, operation, method, path, schema, options, credentials, body),
    );
  }

  private async exchange<S extends z.ZodType | undefined>(
    span: CallSpan,
    operation: Operation,
    method: 'GET' | 'POST',
    path: string,
    schema: S,
    options: CallOptions,
    credentials: Credentials,
    body?: unknown,
  ): Promise<S extends z.ZodType ? z.infer<S> : unknown> {
    let status: number;
    let retryAfter: string | string[] | undefined;
    let text: string;
    const deadline = AbortSignal.timeout(this.totalTimeoutMs);
    let answered: number | undefined;
    const headers: Record<string, string> = { ...authHeaders(credentials), accept: 'application/json' };
    const sent = withShipperAccount(operation, body, credentials);
    try {
      const response = await this.pool.request({
        method,
        path: this.pathPrefix + path,
        headers: sent === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        body: sent === undefined ? undefined : JSON.stringify(sent),
        signal: options.signal ? AbortSignal.any([options.signal, deadline]) : deadline,
      });
      status = response.statusCode;
      span.answered(status);
      retryAfter = response.headers['retry-after'];
      answered = status;
      // An error's body only names the error: a little of it is enough.
      text = await readBounded(
        response.body,
        status >= 200 && status < 300 ? this.maxResponseBytes : Math.min(this.maxResponseBytes, MAX_ERROR_BODY_BYTES),
      );
    } catch (cause) {
      if (cause instanceof ResponseTooLarge && answered !== undefined && (answered < 200 || answered >= 300)) {
        // Decided by its status, as any error whose body is not one of the spec's shapes.
        throw classifyErrorResponse(operation, answered, retryAfter, undefined);
      }
      if (cause instanceof ResponseTooLarge) {
        throw new ShippingApiError({
          kind: 'contract_violation',
          operation,
          path: '(body)',
          message: `${operation}: the answer is larger than the ${cause.limit}-byte limit (SHIPPING_API_MAX_RESPONSE_BYTES); not read`,
        });
      }
      if (deadline.aborted && !options.signal?.aborted) {
        throw networkError(operation, new Error(`no complete answer within ${this.totalTimeoutMs} ms`));
      }
      throw networkError(operation, cause);
    }

    let json: unknown;
    let jsonError: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch (e) {
      jsonError = e;
    }

    if (status < 200 || status >= 300) {
      throw classifyErrorResponse(operation, status, retryAfter, jsonError === undefined ? json : text);
    }
    if (jsonError !== undefined || json === undefined) {
      throw new ShippingApiError({
        kind: 'contract_violation',
        operation,
        status,
        path: '(body)',
        message: `${operation}: HTTP ${status} body is not JSON`,
      });
    }
    if (schema === undefined) return json as never;
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw contractViolation(operation, parsed.error);
    return parsed.data as never;
  }
}

/**
 * The Bearer scheme's label request carries the account's `service.shipperAccountId` (spec,
 * Authentication 5); the two-header scheme's never does.
 */
function withShipperAccount(operation: Operation, body: unknown, credentials: Credentials): unknown {
  if (operation !== 'createLabel' || credentials.scheme !== 'bearer') return body;
  const request = body as LabelRequest;
  return { ...request, service: { ...request.service, shipperAccountId: credentials.shipperAccountId } };
}

/** The error with every text it carries cleared of the account's credentials, old and new. */
function scrubbed(err: ShippingApiError, secrets: readonly string[]): ShippingApiError {
  const clean = (text: string | undefined) => (text === undefined ? undefined : redact(text, secrets));
  const texts = [err.message, err.code, err.courierMessage, ...(err.fields ?? []).map((f) => f.message)];
  if (texts.every((t) => t === clean(t))) return err;
  return new ShippingApiError({
    ...err.toJSON(),
    message: clean(err.message)!,
    code: clean(err.code),
    courierMessage: clean(err.courierMessage),
    fields: err.fields?.map((f) => ({ field: f.field, message: clean(f.message)! })),
    cause: err.cause,
  });
}

/** How much of a non-2xx body is read. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

class ResponseTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`response body over ${limit} bytes`);
  }
}

/** The body as text, abandoning it (and its connection) past `limit` bytes instead of buffering it whole. */
async function readBounded(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      body.destroy();
      throw new ResponseTooLarge(limit);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

/** Validates a request part before sending; a failure names each field like the service would. */
function checkRequest<S extends z.ZodType>(operation: Operation, schema: S, value: unknown, prefix: string[] = []): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const fields = fieldProblems(parsed.error, prefix);
  throw new ShippingApiError({
    kind: 'validation',
    operation,
    fields,
    message: `${operation}: request rejected before sending: ${fields.map((f) => `${f.field}: ${f.message}`).join('; ')}`,
  });
}
