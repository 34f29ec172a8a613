/**
 * The one error taxonomy of the shipping API. Every failure of a call becomes a
 * ShippingApiError with a `kind` and a `retryable` verdict; the retry policy, the workflow
 * and the command line all decide on these, never on raw status codes.
 *
 * Errors carry no request headers and no credentials, only what the service answered.
 */
import type { z } from 'zod';
import {
  COURIER_ERROR_CODE,
  fieldProblems,
  StandardErrorBody,
  TrackingFailureBody,
  ValidationErrorBody,
  type FieldProblem,
} from './contract';
import { RETRYABLE, type ShippingErrorKind } from './error-kinds';
import { MAX_RETRY_AFTER_SECONDS, readRetryAfterMs } from './retry-after';

export { RETRYABLE, type ShippingErrorKind };

/** Used when a 429 carries no Retry-After, or one that is neither an integer >= 1 nor an HTTP-date. */
export const DEFAULT_RETRY_AFTER_SECONDS = 5;

export type Operation = 'createLabel' | 'getOrder' | 'getLabel' | 'getTracking' | 'listCouriers' | 'listProducts';

export interface ShippingApiErrorFields {
  kind: ShippingErrorKind;
  operation: Operation;
  message: string;
  status?: number;
  /** Machine-readable code from the body (`code` or `errorCode`), when the service sent one. */
  code?: string;
  /** 429 only: seconds to wait before the next attempt. */
  retryAfterSeconds?: number;
  /** validation only: the fields the service (or the local pre-send check) named. */
  fields?: FieldProblem[];
  /** courier_error only: the carrier's code and wording, verbatim. */
  courierCode?: string;
  courierMessage?: string;
  /** courier_error from a label result: the id of the failed label. */
  labelId?: string;
  /** contract_violation only: JSON path of the first part of the body that broke the schema. */
  path?: string;
  cause?: unknown;
}

export class ShippingApiError extends Error {
  override readonly name = 'ShippingApiError';
  readonly kind: ShippingErrorKind;
  readonly retryable: boolean;
  readonly operation: Operation;
  readonly status?: number;
  readonly code?: string;
  readonly retryAfterSeconds?: number;
  readonly fields?: FieldProblem[];
  readonly courierCode?: string;
  readonly courierMessage?: string;
  readonly labelId?: string;
  readonly path?: string;

  constructor(f: ShippingApiErrorFields) {
    super(f.message, f.cause === undefined ? undefined : { cause: f.cause });
    this.kind = f.kind;
    this.retryable = RETRYABLE[f.kind];
    this.operation = f.operation;
    this.status = f.status;
    this.code = f.code;
    this.retryAfterSeconds = f.retryAfterSeconds;
    this.fields = f.fields;
    this.courierCode = f.courierCode;
    this.courierMessage = f.courierMessage;
    this.labelId = f.labelId;
    this.path = f.path;
  }

  /** Plain data for logs, activity failure details and CLI output. */
  toJSON(): Omit<ShippingApiErrorFields, 'cause'> & { retryable: boolean } {
    const out: Record<string, unknown> = {
      kind: this.kind,
      retryable: this.retryable,
      operation: this.operation,
      message: this.message,
    };
    for (const key of ['status', 'code', 'retryAfterSeconds', 'fields', 'courierCode', 'courierMessage', 'labelId', 'path'] as const) {
      if (this[key] !== undefined) out[key] = this[key];
    }
    return out as Omit<ShippingApiErrorFields, 'cause'> & { retryable: boolean };
  }
}

/**
 * A 429's Retry-After in whole seconds, from 1 to MAX_RETRY_AFTER_SECONDS (15 min). The spec
 * gives an integer of seconds >= 1; an HTTP-date (the header's other form) counts from now, a past
 * one as 1 s. A larger value is cut to 15 min (it would otherwise hold the whole fleet); a missing,
 * zero or unreadable one counts as DEFAULT_RETRY_AFTER_SECONDS.
 */
export function parseRetryAfter(header: string | string[] | undefined, nowMs: number = Date.now()): number {
  const read = readRetryAfterMs(header, nowMs);
  if (read === undefined || (read.form === 'seconds' && read.ms < 1000)) return DEFAULT_RETRY_AFTER_SECONDS;
  return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil(read.ms / 1000)));
}

function kindOfStatus(status: number): ShippingErrorKind {
  switch (status) {
    case 400:
    case 422:
      return 'validation';
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 429:
      return 'rate_limited';
    default:
      return status >= 500 ? 'server_error' : 'client_error';
  }
}

/**
 * Classifies a non-2xx answer. The body shape decides where the spec ties meaning to it
 * (validation details, COURIER_ERROR); otherwise the status code decides, and an unknown
 * code falls to its class: 4xx not retryable, 5xx retryable.
 */
export function classifyErrorResponse(
  operation: Operation,
  status: number,
  retryAfterHeader: string | string[] | undefined,
  body: unknown,
): ShippingApiError {
  const validation = ValidationErrorBody.safeParse(body);
  const tracking = TrackingFailureBody.safeParse(body);
  const standard = StandardErrorBody.safeParse(body);
  const text = validation.success
    ? validation.data.error
    : tracking.success
      ? `${tracking.data.error}: ${tracking.data.errorMessage}`
      : standard.success
        ? standard.data.error
        : `HTTP ${status} with an unrecognised body`;
  const code = tracking.success ? tracking.data.errorCode : standard.success ? standard.data.code : undefined;
  const base = {
    operation,
    status,
    code: code === undefined ? undefined : cut(code, 100),
    message: `${operation}: ${cut(text)} (HTTP ${status})`,
  };

  // Throttling and server faults are decided by status whatever the body says.
  if (status === 429) return new ShippingApiError({ ...base, kind: 'rate_limited', retryAfterSeconds: parseRetryAfter(retryAfterHeader) });
  if (status >= 500) return new ShippingApiError({ ...base, kind: 'server_error' });

  if (validation.success && status >= 400) {
    const fields = validation.data.details;
    const list = fields.map((f) => `${f.field}: ${f.message}`).join('; ');
    return new ShippingApiError({
      ...base,
      kind: 'validation',
      fields,
      message: `${operation}: ${cut(`${text}${list ? ` (${list})` : ''}`)} (HTTP ${status})`,
    });
  }
  if (code === COURIER_ERROR_CODE) {
    // The carrier's wording verbatim: a tracking failure body carries it in errorMessage.
    const courierMessage = cut(tracking.success ? tracking.data.errorMessage : text);
    return new ShippingApiError({ ...base, kind: 'courier_error', courierCode: code, courierMessage });
  }
  return new ShippingApiError({ ...base, kind: kindOfStatus(status) });
}

/** Error text kept from an answer goes to logs, workflow state and history: the first MAX_ERROR_TEXT characters. */
export const MAX_ERROR_TEXT = 1_000;
function cut(text: string, max = MAX_ERROR_TEXT): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/** A 2xx body that does not match the contract: names the operation and the JSON path that broke. */
export function contractViolation(operation: Operation, error: z.ZodError): ShippingApiError {
  const problems = fieldProblems(error);
  const first = problems[0] ?? { field: '(root)', message: 'invalid' };
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
  return new ShippingApiError({
    kind: 'contract_violation',
    operation,
    path: first.field,
    message: `${operation}: response does not match the contract at ${first.field}: ${first.message}${more}`,
    cause: error,
  });
}

export function networkError(operation: Operation, cause: unknown): ShippingApiError {
  const detail = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
  return new ShippingApiError({ kind: 'network', operation, message: `${operation}: network failure (${detail})`, cause });
}
