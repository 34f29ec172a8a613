/**
 * The contract schemas themselves: open enumerations, the exceptionState rule, request
 * strictness and the dotted field paths of validation problems.
 */
import { describe, expect, it } from 'vitest';
import { fieldProblems, LabelRequest, LabelResult, Order, OrderDetail, TrackingRecord } from '../shipping-api/contract';
import { parseRetryAfter, DEFAULT_RETRY_AFTER_SECONDS } from '../shipping-api/errors';
import { MAX_RETRY_AFTER_SECONDS } from '../shipping-api/retry-after';
import { sampleLabelRequest } from './helpers/api';

const order = {
  id: '3f1c2b9e-8a4d-4c3e-9f7a-1b2c3d4e5f60',
  status: 'created',
  exceptionState: null,
  exceptionStateAt: null,
  exceptionReason: null,
  courier: 'dhl-express',
  customerOrderNumber: 'SO-1',
  courierOrderNumber: null,
  courierTrackingNumber: null,
  serviceProductCode: 'EXPRESS_WORLDWIDE',
  shipToCountryCode: 'NL',
  shipToPostalCode: '1015 CS',
  shipFromCountryCode: 'DE',
  parcelMeasurements: null,
  maskedRecipientName: null,
  error: null,
  createdAt: '2025-03-01T10:00:00.000Z',
};

const tracking = {
  id: 'x',
  trackingNumber: null,
  tag: 'Pending',
  subtag: 'Pending_001',
  subtagMessage: 'pending',
  slug: 'ups',
  checkpoints: [],
};

describe('contract schemas', () => {
  it('accepts unknown order status and exceptionState values', () => {
    const parsed = Order.parse({
      ...order,
      status: 'teleported_to_moon',
      exceptionState: 'held_by_aliens',
      exceptionStateAt: '2025-03-02T10:00:00+02:00',
    });
    expect(parsed.status).toBe('teleported_to_moon');
    expect(parsed.exceptionState).toBe('held_by_aliens');
  });

  it('accepts unknown tracking tags, on the record and on checkpoints', () => {
    const checkpoint = {
      checkpointTime: '2025-03-01T10:00:00+01:00',
      city: 'Leipzig',
      state: 'Saxony',
      countryRegion: 'DE',
      location: 'Leipzig, DE',
      message: 'hm',
      tag: 'Teleported',
      subtag: 'Teleported_042',
      subtagMessage: 'new',
      slug: 'ups',
    };
    const parsed = TrackingRecord.parse({ ...tracking, tag: 'Teleported', subtag: 'Teleported_001', checkpoints: [checkpoint] });
    expect(parsed.tag).toBe('Teleported');
    expect(parsed.checkpoints[0]!.tag).toBe('Teleported');
  });

  it('enforces: exceptionStateAt is null exactly when exceptionState is null', () => {
    expect(Order.safeParse(order).success).toBe(true);
    const missingAt = Order.safeParse({ ...order, exceptionState: 'hold', exceptionStateAt: null });
    expect(missingAt.success).toBe(false);
    expect(fieldProblems(missingAt.error!).map((p) => p.field)).toEqual(['exceptionStateAt']);
    const strayAt = Order.safeParse({ ...order, exceptionState: null, exceptionStateAt: '2025-03-01T10:00:00Z' });
    expect(strayAt.success).toBe(false);
    expect(Order.safeParse({ ...order, exceptionState: 'hold', exceptionStateAt: '2025-03-01T10:00:00Z' }).success).toBe(true);
  });

  it('order detail has no additional properties and every field present', () => {
    const extra = Order.safeParse({ ...order, surprise: 1 });
    expect(extra.success).toBe(false);
    const { createdAt: _dropped, ...withoutCreatedAt } = order;
    const missing = OrderDetail.safeParse({ order: withoutCreatedAt, carrierDetails: {} });
    expect(missing.success).toBe(false);
    expect(fieldProblems(missing.error!).map((p) => p.field)).toContain('order.createdAt');
  });

  it('label result requires a uuid id and a known status', () => {
    const ok = {
      id: order.id,
      status: 'created',
      courier: 'ups',
      customerOrderNumber: 'A',
      courierOrderNumber: 'B',
      courierTrackingNumber: null,
      error: null,
    };
    expect(LabelResult.safeParse(ok).success).toBe(true);
    expect(fieldProblems(LabelResult.safeParse({ ...ok, id: 12345 }).error!)[0]!.field).toBe('id');
    expect(LabelResult.safeParse({ ...ok, status: 'pending' }).success).toBe(false);
  });

  it('label request: dotted paths for nested problems, unknown fields named', () => {
    const request = sampleLabelRequest();
    const bad = LabelRequest.safeParse({
      ...request,
      service: {},
      shipment: { ...request.shipment, shipTo: { address: { postcode: '1' } }, parcels: [{ weight: 'heavy' }] },
    });
    expect(bad.success).toBe(false);
    const fields = fieldProblems(bad.error!).map((p) => p.field);
    expect(fields).toEqual(
      expect.arrayContaining(['service.productCode', 'shipment.shipTo.address.postcode', 'shipment.parcels[0].weight']),
    );
    expect(LabelRequest.safeParse(request).success).toBe(true);
  });

  it('Retry-After: integer >= 1 or an HTTP-date, within 1 s to 15 min, else the default', () => {
    const now = Date.parse('2026-11-24T10:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7);
    expect(parseRetryAfter(' 3 ', now)).toBe(3);
    expect(parseRetryAfter(['2', '9'], now)).toBe(2);
    // A server that names decades holds the fleet for at most 15 minutes (it held it until 2058).
    for (const absurd of ['999999999', '100000000000000000000000', '901', '2030'])
      expect(parseRetryAfter(absurd, now)).toBe(MAX_RETRY_AFTER_SECONDS);
    expect(MAX_RETRY_AFTER_SECONDS).toBe(900);
    // The header's other form (RFC 9110): an HTTP-date, counted from now; a past one is 1 s.
    expect(parseRetryAfter('Tue, 24 Nov 2026 10:00:42 GMT', now)).toBe(42);
    expect(parseRetryAfter('Tue, 24 Nov 2026 09:00:00 GMT', now)).toBe(1);
    expect(parseRetryAfter('Fri, 01 Jan 2100 00:00:00 GMT', now)).toBe(MAX_RETRY_AFTER_SECONDS);
    for (const bad of [undefined, '', '0', '-1', '-5', '1.5', '1e3', '1e23', 'soon', 'Sun, 99 Foo']) {
      expect(parseRetryAfter(bad, now)).toBe(DEFAULT_RETRY_AFTER_SECONDS);
    }
  });
});
