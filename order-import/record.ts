/**
 * Validation of one import record `{ shop, orderId, labelRequest }` with the contract schemas,
 * and of a corrected label request for `resubmit`. Every problem is a {field, message} with a
 * dotted field path, the shape of the API's own validation error.
 */
import { z } from 'zod';
import { ExternalId, fieldProblems, LabelRequestWithoutKey, type FieldProblem } from '../shipping-api/contract';
import { canonicalPlatformOrderId, isShopifyOrderGid } from '../domain/platform-order-id';
import { PlatformOrderId, ShipmentInput } from '../domain/schemas';
import { workflowIdFits } from './start-shipment';

/**
 * What an import file may hold per order: the workflow input without the per-order tracking
 * override, and nothing else (a misspelt top-level field is an error, not silently dropped).
 * Shop and order ids as a start accepts them (no control characters, a workflow id the server takes).
 */
export const ImportRecord = z
  // The account is the shop's (SHIPPING_ACCOUNTS), never the file's.
  .strictObject({
    ...ShipmentInput.omit({ tracking: true, account: true, parcel: true }).shape,
    shop: ExternalId,
    orderId: ExternalId,
    // Normalized here, at the boundary: a file may name a Shopify order either way, a pull the legacy way.
    platformOrderId: PlatformOrderId.transform(canonicalPlatformOrderId).optional(),
  })
  .superRefine(workflowIdFits);
export type ImportRecord = z.infer<typeof ImportRecord>;

export const IDEMPOTENCY_KEY_MESSAGE = 'must not be supplied: the system derives the idempotency key from shop, orderId and revision';

export type Validated<T> = { ok: true; value: T } | { ok: false; problems: FieldProblem[] };

/** Which platform a shop's connector writes to (shopify, woocommerce), or null for a webhook or none. */
export type PlatformOf = (shop: string) => string | null;

/**
 * Validates one record; all problems at once, each with its dotted path. A shop whose connector
 * is a platform needs the order's id on that platform (`platformOrderId`).
 */
export function validateRecord(value: unknown, platformOf: PlatformOf = () => null): Validated<ImportRecord> {
  const result = validateShape(value);
  if (!isObject(value) || typeof value.shop !== 'string') return result;
  const platform = platformOf(value.shop);
  if (typeof value.platformOrderId === 'string' && isShopifyOrderGid(value.platformOrderId) && platform === 'woocommerce') {
    const problem = {
      field: 'platformOrderId',
      message: `is a Shopify order id: shop ${value.shop} writes to woocommerce, whose order ids are digits`,
    };
    return { ok: false, problems: [...(result.ok ? [] : result.problems), problem] };
  }
  if (value.platformOrderId !== undefined || platform === null) return result;
  const problem = {
    field: 'platformOrderId',
    message: `is required: shop ${value.shop} writes to ${platform} (its connector), which needs the order's id there`,
  };
  return { ok: false, problems: [...(result.ok ? [] : result.problems), problem] };
}

function validateShape(value: unknown): Validated<ImportRecord> {
  if (!isObject(value)) return { ok: false, problems: [{ field: '(root)', message: `expected an object, got ${describe(value)}` }] };
  const labelRequest = value.labelRequest;
  if (isObject(labelRequest) && 'idempotencyKey' in labelRequest) {
    // Reported once, with its reason, instead of the schema's generic "unknown field".
    const { idempotencyKey: _ignored, ...rest } = labelRequest;
    const parsed = ImportRecord.safeParse({ ...value, labelRequest: rest });
    const keyProblem = { field: 'labelRequest.idempotencyKey', message: IDEMPOTENCY_KEY_MESSAGE };
    return { ok: false, problems: [keyProblem, ...(parsed.success ? [] : fieldProblems(parsed.error))] };
  }
  const parsed = ImportRecord.safeParse(value);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, problems: fieldProblems(parsed.error) };
}

/** Validates a corrected label request (resubmit); field paths are relative to the label request. */
export function validateLabelRequest(value: unknown): Validated<LabelRequestWithoutKey> {
  if (!isObject(value)) return { ok: false, problems: [{ field: '(root)', message: `expected an object, got ${describe(value)}` }] };
  if ('idempotencyKey' in value) {
    const { idempotencyKey: _ignored, ...rest } = value;
    const parsed = LabelRequestWithoutKey.safeParse(rest);
    return {
      ok: false,
      problems: [{ field: 'idempotencyKey', message: IDEMPOTENCY_KEY_MESSAGE }, ...(parsed.success ? [] : fieldProblems(parsed.error))],
    };
  }
  const parsed = LabelRequestWithoutKey.safeParse(value);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, problems: fieldProblems(parsed.error) };
}

/** shop and orderId of a record as far as they can be read, for reports of invalid records. */
export function identityOf(value: unknown): { shop: string | null; orderId: string | null } {
  if (!isObject(value)) return { shop: null, orderId: null };
  return {
    shop: typeof value.shop === 'string' && value.shop !== '' ? value.shop : null,
    orderId: typeof value.orderId === 'string' && value.orderId !== '' ? value.orderId : null,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}
