/**
 * The fake's error answers: the spec's standard error body (a code derived from the status)
 * and its validation body. Every shape is the contract's.
 */
import { STATUS_CODES } from 'node:http';
import type { z } from 'zod';
import type { FieldProblem, StandardErrorBody, ValidationErrorBody } from '../shipping-api/contract';
import type { Answer } from '../local-http';

export type { Answer } from '../local-http';

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
    (STATUS_CODES[status] ?? `HTTP_${status}`)
      .toUpperCase()
      .replace(/[^A-Z0-9]+/g, '_')
      .replace(/^_|_$/g, '')
  );
}

/** The standard error body for a status, with an optional more specific message. */
export function standard(status: number, error?: string, headers?: Record<string, string>): Answer {
  const body: StandardError = { error: error ?? STATUS_CODES[status] ?? `HTTP ${status}`, code: codeOfStatus(status) };
  return { status, body, headers };
}

export function validationFailed(details: FieldProblem[], error = 'Validation failed'): Answer {
  const body: ValidationErrorBody = { error, details };
  return { status: 400, body };
}

/** 405 for a known path; `allow` lists the methods it does take. */
export function methodNotAllowed(method: string, allow: string): Answer {
  return standard(405, `Method ${method} not allowed; allowed: ${allow}`, { allow });
}

/** The body of a request that is not JSON, as POST /labels and the admin faults answer it. */
export function notJson(message: string): Answer {
  return validationFailed([{ field: '(body)', message: `not valid JSON: ${message}` }], 'Request body is not valid JSON');
}
