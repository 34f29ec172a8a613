/**
 * POST /labels: validates the request, replays a known idempotency key, and otherwise
 * creates a label, or a failed one when the courier rejects the destination postal code.
 */
import { randomUUID } from 'node:crypto';
import { COURIER_ERROR_CODE, fieldProblems, LabelRequest, type LabelResult } from '../../shipping-api/contract';
import { parseJson } from '../../local-http';
import { notJson, standard, validationFailed, type Answer } from '../answers';
import { findCourier } from '../catalog';
import { DEFAULTS } from '../defaults';
import { canonicalJson, endingOf, type LabelRecord } from '../records';
import type { EndpointHandler } from './endpoint';
import type { AnyFakeAccount } from '../types';

export const createLabel: EndpointHandler = ({ account, body: text }, fake): Answer => {
  if (text === null) return standard(413, `Request body larger than ${DEFAULTS.maxBodyBytes} bytes`);
  const json = parseJson(text);
  if (!json.ok) return notJson(json.message);
  const parsed = LabelRequest.safeParse(json.value);
  if (!parsed.success) return validationFailed(fieldProblems(parsed.error));
  const request = parsed.data;
  const stats = fake.traffic.stats;
  const shipper = shipperAccountProblem(account, request.service.shipperAccountId);
  if (shipper) return shipper;

  // From here on nothing awaits: check-and-insert of the idempotency key is atomic.
  const existing = fake.labels.byKey(account.name, request.idempotencyKey);
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
  const rejected = postalCode !== undefined && fake.rejectPostalCodes.has(postalCode);
  const customerOrderNumber =
    request.order?.customerOrderNumber ??
    `FAKE-${new Date(createdAtMs).toISOString().slice(0, 10).replace(/-/g, '')}-${String(fake.labels.nextGeneratedOrderNumber()).padStart(6, '0')}`;
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
  fake.labels.add(record);
  if (rejected) stats.labelsRejected += 1;
  else stats.labelsCreated += 1;
  return { status: 201, body: result };
};

/** The idempotencyKey and customerOrderNumber of a label request body, as far as it has them. */
export function labelIdentityOf(body: string | null): { idempotencyKey: string | null; customerOrderNumber: string | null } {
  const parsed = body === null ? null : parseJson(body);
  const json = parsed?.ok ? parsed.value : null;
  const record = json !== null && typeof json === 'object' ? (json as Record<string, unknown>) : {};
  const order = record.order !== null && typeof record.order === 'object' ? (record.order as Record<string, unknown>) : {};
  return {
    idempotencyKey: typeof record.idempotencyKey === 'string' ? record.idempotencyKey : null,
    customerOrderNumber: typeof order.customerOrderNumber === 'string' ? order.customerOrderNumber : null,
  };
}

/**
 * The Bearer scheme's request carries the account's `service.shipperAccountId` (spec,
 * Authentication 5; how the service answers without it is not shown: a validation error naming
 * the field, and another account's id is a 403). The two-header scheme ignores the field.
 */
function shipperAccountProblem(account: AnyFakeAccount, given: string | undefined): Answer | null {
  if (account.auth !== 'bearer') return null;
  if (given === undefined)
    return validationFailed([{ field: 'service.shipperAccountId', message: 'is required with Bearer authentication' }]);
  return given === account.shipperAccountId ? null : standard(403, 'Forbidden: service.shipperAccountId is not this account');
}
