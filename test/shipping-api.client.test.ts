/**
 * ShippingApiClient against the fake over real loopback HTTP: every operation, and every
 * error status and body shape of the spec mapped to its kind and retryable verdict.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ShippingApiClient } from '../shipping-api/client';
import { COURIER_ERROR_CODE, LabelResult, OrderDetail } from '../shipping-api/contract';
import { DEFAULT_RETRY_AFTER_SECONDS, RETRYABLE } from '../shipping-api/errors';
import { startFakeShippingApi, type FakeAccount, type FakeShippingApi } from '../fake-shipping-api/server';
import { rawRequest, authHeaders, sampleLabelRequest, shippingError } from './helpers/api';

const main: FakeAccount = { name: 'main', apiKey: 'key-main', apiToken: 'token-main' };
const other: FakeAccount = { name: 'other', apiKey: 'key-other', apiToken: 'token-other' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let api: FakeShippingApi;
let client: ShippingApiClient;
let otherClient: ShippingApiClient;

const clientFor = (account: FakeAccount, baseUrl = api.baseUrl) =>
  new ShippingApiClient({ baseUrl, apiKey: account.apiKey, apiToken: account.apiToken });

beforeAll(async () => {
  // A long tracking step: labels stay "not registered" (404) for the whole file.
  api = await startFakeShippingApi({ accounts: [main, other], trackingStepMs: 60_000 });
  client = clientFor(main);
  otherClient = clientFor(other);
});

afterAll(async () => {
  await client.close();
  await otherClient.close();
  await api.close();
});

beforeEach(() => {
  api.setFaults({ failNext: [], rateLimit: null, serverErrorRate: 0, hangRate: 0, malformedRate: 0, latencyMs: 0, endpoints: null });
  api.resetStats();
});

describe('operations', () => {
  it('createLabel creates a label (201) with the supplied customerOrderNumber', async () => {
    const request = sampleLabelRequest();
    const result = await client.createLabel(request);
    expect(LabelResult.parse(result)).toEqual(result);
    expect(result.id).toMatch(UUID);
    expect(result).toMatchObject({
      status: 'created',
      courier: 'dhl-express',
      customerOrderNumber: request.order!.customerOrderNumber,
      courierTrackingNumber: null,
      error: null,
    });
    expect(result.courierOrderNumber).toMatch(/^DHL\d{9}$/);
    expect(api.stats()).toMatchObject({ labelsCreated: 1, labelsRejected: 0, requests: { 'POST /labels': { '201': 1 } } });
    expect(api.labels().find((l) => l.id === result.id)).toMatchObject({
      idempotencyKey: request.idempotencyKey,
      status: 'created',
      account: 'main',
      customerOrderNumber: request.order!.customerOrderNumber,
    });
  });

  it('createLabel generates a customerOrderNumber when none is supplied', async () => {
    const a = await client.createLabel(sampleLabelRequest({ order: undefined }));
    const b = await client.createLabel(sampleLabelRequest({ order: undefined }));
    expect(a.customerOrderNumber).toMatch(/^FAKE-\d{8}-\d{6}$/);
    expect(b.customerOrderNumber).not.toBe(a.customerOrderNumber);
  });

  it('a replayed idempotencyKey returns the original result with 200 and creates nothing', async () => {
    const request = sampleLabelRequest();
    const first = await client.createLabel(request);
    const again = await client.createLabel(request);
    expect(again).toEqual(first);
    expect(api.stats()).toMatchObject({
      labelsCreated: 1,
      idempotentReplays: 1,
      idempotencyPayloadMismatches: 0,
      requests: { 'POST /labels': { '201': 1, '200': 1 } },
    });
    expect(api.labels().filter((l) => l.idempotencyKey === request.idempotencyKey)).toHaveLength(1);
  });

  it('a replay with a different payload still answers the original, and is counted', async () => {
    const request = sampleLabelRequest();
    const first = await client.createLabel(request);
    const changed = await client.createLabel({ ...request, courier: 'ups', service: { productCode: 'UPS_STANDARD' } });
    expect(changed).toEqual(first);
    expect(api.stats()).toMatchObject({ labelsCreated: 1, idempotentReplays: 1, idempotencyPayloadMismatches: 1 });
  });

  it('idempotency keys are scoped per account', async () => {
    const request = sampleLabelRequest();
    const mine = await client.createLabel(request);
    const theirs = await otherClient.createLabel(request);
    expect(theirs.id).not.toBe(mine.id);
    expect(api.stats().labelsCreated).toBe(2);
  });

  it('getOrder returns the order detail built from the request', async () => {
    const request = sampleLabelRequest({
      customs: { taxNumber: 'DE123456789', ioss: 'IM2760000001', vat: null, eori: 'DE987654321000' },
      serviceOptions: [{ code: 'SIGNATURE', value: 'true' }],
      courierOptions: { 'fake-integration': { sourceCode: 'SHOP', sensitiveType: 'NONE', packageCount: 2 } },
    });
    const label = await client.createLabel(request);
    const detail = await client.getOrder(label.id);
    expect(OrderDetail.parse(detail)).toEqual(detail);
    expect(detail.order).toEqual({
      id: label.id,
      status: 'created',
      exceptionState: null,
      exceptionStateAt: null,
      exceptionReason: null,
      courier: 'dhl-express',
      customerOrderNumber: request.order!.customerOrderNumber,
      courierOrderNumber: label.courierOrderNumber,
      courierTrackingNumber: null,
      serviceProductCode: 'EXPRESS_WORLDWIDE',
      shipToCountryCode: 'NL',
      shipToPostalCode: '1015 CS',
      shipFromCountryCode: 'DE',
      parcelMeasurements: {
        weightUnit: 'kg',
        dimensionUnit: 'cm',
        parcels: [{ parcelId: expect.any(String), weight: 1.25, dimension: { length: 30, width: 20, height: 10 } }],
      },
      maskedRecipientName: 'J** d* V****',
      error: null,
      createdAt: expect.any(String),
    });
    expect(detail.carrierDetails).toMatchObject({
      integration: 'fake-integration',
      orderNumbers: {
        platformOrderNumber: request.order!.orderNumbers!.platformOrderNumber,
        trackingNumber: null,
        referenceNumbers: request.order!.orderNumbers!.referenceNumbers,
      },
      customs: { taxNumber: 'DE123456789', ioss: 'IM2760000001', vat: null, eori: 'DE987654321000' },
      iossApplied: 'IM2760000001',
      serviceOptions: [{ code: 'SIGNATURE', value: 'true', cost: null }],
      courierOptions: { sourceCode: 'SHOP', sensitiveType: 'NONE', packageCount: 2, labelUrl: null },
    });
  });

  it('getLabel returns the label document with createdAt', async () => {
    const label = await client.createLabel(sampleLabelRequest());
    const doc = (await client.getLabel(label.id)) as Record<string, unknown>;
    expect(doc).toEqual({ ...label, createdAt: expect.any(String) });
    expect(Date.parse(doc.createdAt as string)).toBeLessThanOrEqual(Date.now());
  });

  it('getTracking by label id and by customerOrderNumber', async () => {
    const fast = await startFakeShippingApi({ accounts: [main], trackingStepMs: 0 });
    const fastClient = clientFor(main, fast.baseUrl);
    try {
      const request = sampleLabelRequest({ order: { customerOrderNumber: 'SO/2025/äöü 17' } });
      const label = await fastClient.createLabel(request);
      const byId = await fastClient.getTracking(label.id);
      const byNumber = await fastClient.getTracking('SO/2025/äöü 17');
      expect(byNumber).toEqual(byId);
      expect(byId).toMatchObject({ id: label.id, tag: 'Delivered', subtag: 'Delivered_001', slug: 'dhl-express' });
      expect(byId.trackingNumber).toMatch(/^\d{10}$/);
      expect(byId.checkpoints.map((c) => c.tag)).toEqual(['InfoReceived', 'InTransit', 'Delivered']);
    } finally {
      await fastClient.close();
      await fast.close();
    }
  });

  it('listCouriers and listProducts', async () => {
    const couriers = await client.listCouriers();
    expect(couriers.map((c) => c.code)).toEqual(['dhl-express', 'ups', 'postnl', 'dpd-de']);
    expect(couriers.every((c) => c.name.length > 0)).toBe(true);
    const products = await client.listProducts('ups');
    expect(products.map((p) => p.code)).toEqual(['UPS_STANDARD', 'UPS_EXPRESS_SAVER', 'UPS_EXPRESS']);
    // Every product of every courier is accepted as service.productCode.
    for (const courier of couriers) {
      const [product] = await client.listProducts(courier.code);
      const label = await client.createLabel(sampleLabelRequest({ courier: courier.code, service: { productCode: product!.code } }));
      expect(label.courier).toBe(courier.code);
    }
  });
});

describe('error statuses and bodies', () => {
  it('401: missing or unknown credentials', async () => {
    const wrong = new ShippingApiClient({ baseUrl: api.baseUrl, apiKey: main.apiKey, apiToken: 'wrong' });
    try {
      const e = await shippingError(wrong.listCouriers());
      expect(e).toMatchObject({ kind: 'unauthorized', retryable: false, status: 401, code: 'UNAUTHORIZED', operation: 'listCouriers' });
      expect(JSON.stringify(e.toJSON())).not.toContain(main.apiKey);
    } finally {
      await wrong.close();
    }
    const raw = await rawRequest(api.baseUrl, 'GET', '/couriers');
    expect(raw.status).toBe(401);
    expect(raw.json).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' });
  });

  it("403: another account's label, order and tracking", async () => {
    const label = await client.createLabel(sampleLabelRequest());
    for (const call of [
      otherClient.getOrder(label.id),
      otherClient.getLabel(label.id),
      otherClient.getTracking(label.id),
      otherClient.getTracking(label.customerOrderNumber),
    ]) {
      const e = await shippingError(call);
      expect(e).toMatchObject({ kind: 'forbidden', retryable: false, status: 403, code: 'FORBIDDEN' });
    }
    const raw = await rawRequest(api.baseUrl, 'GET', `/orders/${label.id}`, { headers: authHeaders(other) });
    expect(raw.json).toEqual({ error: 'Forbidden', code: 'FORBIDDEN' });
  });

  it('404: unknown order, label, tracking, courier; tracking not registered yet', async () => {
    const unknown = '0b9e8f2a-1c3d-4e5f-8a9b-0c1d2e3f4a5b';
    const label = await client.createLabel(sampleLabelRequest());
    const cases = [
      client.getOrder(unknown),
      client.getLabel(unknown),
      client.getTracking('no-such-order'),
      client.listProducts('pigeon-post'),
      client.getTracking(label.id),
    ];
    for (const call of cases) {
      const e = await shippingError(call);
      expect(e).toMatchObject({ kind: 'not_found', retryable: false, status: 404, code: 'NOT_FOUND' });
    }
    const raw = await rawRequest(api.baseUrl, 'GET', `/tracking/${label.id}`, { headers: authHeaders(main) });
    expect(raw.json).toEqual({ error: 'Tracking not found', code: 'NOT_FOUND' });
  });

  it('429: Retry-After parsed; missing or invalid header gives the default', async () => {
    const cases: Array<[string | null | undefined, number]> = [
      ['7', 7],
      [undefined, 1],
      [null, DEFAULT_RETRY_AFTER_SECONDS],
      ['soon', DEFAULT_RETRY_AFTER_SECONDS],
      ['0', DEFAULT_RETRY_AFTER_SECONDS],
    ];
    for (const [retryAfter, expected] of cases) {
      api.setFaults({ failNext: [retryAfter === undefined ? { status: 429 } : { status: 429, retryAfter }] });
      const e = await shippingError(client.listCouriers());
      expect(e).toMatchObject({ kind: 'rate_limited', retryable: true, status: 429, retryAfterSeconds: expected });
    }
    expect(api.stats().requests['GET /couriers']).toEqual({ '429': 5 });
    // The queue is drained: the next call succeeds.
    await expect(client.listCouriers()).resolves.toHaveLength(4);
  });

  it('500 and 503 are retryable server errors; 418 is a non-retryable client error', async () => {
    api.setFaults({ failNext: [{ status: 500 }, { status: 503 }, { status: 418 }] });
    const e500 = await shippingError(client.listCouriers());
    expect(e500).toMatchObject({ kind: 'server_error', retryable: true, status: 500, code: 'INTERNAL_ERROR' });
    const e503 = await shippingError(client.listCouriers());
    expect(e503).toMatchObject({ kind: 'server_error', retryable: true, status: 503 });
    const e418 = await shippingError(client.listCouriers());
    expect(e418).toMatchObject({ kind: 'client_error', retryable: false, status: 418 });
  });

  it('failNext entries only match their endpoint', async () => {
    api.setFaults({ failNext: [{ endpoint: 'POST /labels', status: 503 }] });
    await expect(client.listCouriers()).resolves.toHaveLength(4);
    const e = await shippingError(client.createLabel(sampleLabelRequest()));
    expect(e).toMatchObject({ kind: 'server_error', operation: 'createLabel', status: 503 });
    expect(api.stats().labelsCreated).toBe(0);
  });

  it('400 validation body: product not offered by the courier names service.productCode', async () => {
    const e = await shippingError(
      client.createLabel(sampleLabelRequest({ courier: 'ups', service: { productCode: 'EXPRESS_WORLDWIDE' } })),
    );
    expect(e).toMatchObject({ kind: 'validation', retryable: false, status: 400 });
    expect(e.fields!.map((f) => f.field)).toEqual(['service.productCode']);
    expect(e.message).toContain('service.productCode');
  });

  it('400 validation body: GET /products without a courier names the courier parameter', async () => {
    const e = await shippingError(client.listProducts(''));
    expect(e).toMatchObject({ kind: 'validation', retryable: false, status: 400 });
    expect(e.fields).toEqual([{ field: 'courier', message: expect.any(String) }]);
  });

  it('400 COURIER_ERROR standard body: no shipping account for the courier', async () => {
    const e = await shippingError(client.createLabel(sampleLabelRequest({ courier: 'pigeon-post' })));
    expect(e).toMatchObject({
      kind: 'courier_error',
      retryable: false,
      status: 400,
      code: COURIER_ERROR_CODE,
      courierCode: COURIER_ERROR_CODE,
      courierMessage: 'Shipping account not found for courier pigeon-post',
    });
    expect(api.stats().labelsCreated + api.stats().labelsRejected).toBe(0);
  });

  it('label result with status failed: courier_error with the carrier wording verbatim and the label id', async () => {
    const request = sampleLabelRequest();
    request.shipment.shipTo!.address!.postalCode = '00000';
    const e = await shippingError(client.createLabel(request));
    expect(e).toMatchObject({ kind: 'courier_error', retryable: false, code: COURIER_ERROR_CODE, courierCode: COURIER_ERROR_CODE });
    expect(e.labelId).toMatch(UUID);
    expect(api.stats()).toMatchObject({ labelsCreated: 0, labelsRejected: 1 });
    expect(api.labels().find((l) => l.id === e.labelId)?.status).toBe('failed');

    // The wording is exactly what the service stored (read back through the order and the raw label).
    const detail = await client.getOrder(e.labelId!);
    expect(detail.order).toMatchObject({ status: 'failed', courierOrderNumber: null, courierTrackingNumber: null });
    expect(detail.order.error).toEqual({ code: COURIER_ERROR_CODE, message: e.courierMessage });
    expect(e.courierMessage).toContain('00000');
    expect(e.courierMessage).toMatch(/postal code/i);
    const raw = await rawRequest(api.baseUrl, 'POST', '/labels', { headers: authHeaders(main), body: request });
    expect(raw.status).toBe(200); // replay of the failed result
    expect(raw.json).toEqual({
      id: e.labelId,
      status: 'failed',
      courier: 'dhl-express',
      customerOrderNumber: request.order!.customerOrderNumber,
      courierOrderNumber: null,
      courierTrackingNumber: null,
      error: { code: COURIER_ERROR_CODE, message: e.courierMessage },
    });
  });

  it('tracking failure body (422) of a failed label: courier_error with the carrier wording verbatim', async () => {
    const fast = await startFakeShippingApi({ accounts: [main], trackingStepMs: 0, rejectPostalCodes: ['99999'] });
    const fastClient = clientFor(main, fast.baseUrl);
    try {
      const request = sampleLabelRequest();
      request.shipment.shipTo!.address!.postalCode = '99999';
      const created = await shippingError(fastClient.createLabel(request));
      const raw = await rawRequest(fast.baseUrl, 'GET', `/tracking/${created.labelId}`, { headers: authHeaders(main) });
      expect(raw.status).toBe(422);
      expect(raw.json).toEqual({ error: expect.any(String), errorCode: COURIER_ERROR_CODE, errorMessage: created.courierMessage });

      const e = await shippingError(fastClient.getTracking(created.labelId!));
      expect(e).toMatchObject({
        kind: 'courier_error',
        retryable: false,
        status: 422,
        code: COURIER_ERROR_CODE,
        courierMessage: created.courierMessage,
      });
    } finally {
      await fastClient.close();
      await fast.close();
    }
  });

  it('invalid requests are rejected before sending: the fake sees nothing', async () => {
    const request = sampleLabelRequest();
    const noProduct = { ...request, service: {} } as never;
    const e1 = await shippingError(client.createLabel(noProduct));
    expect(e1).toMatchObject({ kind: 'validation', retryable: false, operation: 'createLabel', status: undefined });
    expect(e1.fields!.map((f) => f.field)).toEqual(['service.productCode']);

    const e2 = await shippingError(client.createLabel({ ...request, idempotencyKey: 'k'.repeat(101) }));
    expect(e2.fields!.map((f) => f.field)).toEqual(['idempotencyKey']);

    const e3 = await shippingError(client.createLabel({ ...request, shipment: { shipTo: { address: { postcode: '1' } } } } as never));
    expect(e3.fields!.map((f) => f.field)).toEqual(['shipment.shipTo.address.postcode']);

    const e4 = await shippingError(client.getOrder('not-a-uuid'));
    expect(e4).toMatchObject({ kind: 'validation', operation: 'getOrder' });
    expect(e4.fields!.map((f) => f.field)).toEqual(['orderId']);

    const e5 = await shippingError(client.getTracking(''));
    expect(e5.fields!.map((f) => f.field)).toEqual(['id']);

    expect(api.stats().requests).toEqual({});
    expect(api.labels().some((l) => l.idempotencyKey === request.idempotencyKey)).toBe(false);
  });

  it('every kind carries the retryable verdict of the taxonomy', () => {
    expect(
      Object.entries(RETRYABLE)
        .filter(([, r]) => r)
        .map(([k]) => k)
        .sort(),
    ).toEqual(['network', 'rate_limited', 'server_error']);
  });
});
