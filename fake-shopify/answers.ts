/** The fake's fixed answers, shaped like Shopify's (JSON `errors` strings, an HTML 503 page). */
import type { ThrottleStatus } from './bucket';

export interface Reply {
  status: number;
  /** JSON body; `html` instead for an HTML page. */
  body?: unknown;
  html?: string;
  headers?: Record<string, string>;
}

export const NOT_FOUND: Reply = { status: 404, body: { errors: 'Not Found' } };
export const TOO_LARGE: Reply = { status: 413, body: { errors: 'Request Entity Too Large' } };
export const BAD_REQUEST: Reply = { status: 400, body: { errors: { query: 'Required parameter missing or invalid' } } };
export const SERVER_ERROR: Reply = { status: 500, body: { errors: 'Internal Server Error' } };

export const UNAVAILABLE: Reply = {
  status: 503,
  html:
    '<!DOCTYPE html><html><head><title>Service Unavailable</title></head>' +
    '<body><h1>Service Unavailable</h1><p>This store is temporarily unavailable. Please try again in a moment.</p></body></html>',
};

export function methodNotAllowed(allow: string): Reply {
  return { status: 405, body: { errors: 'Method Not Allowed' }, headers: { allow } };
}

export interface CostExtension {
  requestedQueryCost: number;
  actualQueryCost: number | null;
  throttleStatus: ThrottleStatus;
}

/**
 * THROTTLED: HTTP 200 with no data, as Shopify answers it, or 429 with Retry-After: 1.0 when
 * the fake is set to behave as forum posts claim.
 */
export function throttled(as: 'graphql-200' | 'http-429', requested: number, throttleStatus: ThrottleStatus): Reply {
  const body = {
    errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED', documentation: 'https://shopify.dev/api/usage/rate-limits' } }],
    extensions: { cost: { requestedQueryCost: requested, actualQueryCost: null, throttleStatus } satisfies CostExtension },
  };
  return as === 'http-429' ? { status: 429, body, headers: { 'retry-after': '1.0' } } : { status: 200, body };
}
