/**
 * The error kinds and their retry verdicts, apart from the schemas in errors.ts: workflow code
 * imports these, and keeping zod out of the workflow bundle keeps each cached workflow small.
 */
export type ShippingErrorKind =
  | 'rate_limited'
  | 'server_error'
  | 'network'
  | 'validation'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'courier_error'
  | 'contract_violation'
  | 'client_error';

/** Whether retrying the same request can help, per kind. */
export const RETRYABLE: Readonly<Record<ShippingErrorKind, boolean>> = {
  rate_limited: true,
  server_error: true,
  network: true,
  validation: false,
  unauthorized: false,
  forbidden: false,
  not_found: false,
  courier_error: false,
  contract_violation: false,
  client_error: false,
};
