/** The import's pure parts: a platform order → a label request, and the cursor's arithmetic. */
import { describe, expect, it } from 'vitest';
import { advanceCursor, firstChangesPosition, MAX_RETRY } from '../workflow-definitions/shop-pull-cursor';
import { mapOrder } from '../shop-import/mapping';
import { convertWeight, type PlatformOrder } from '../domain/platform-order';
import { modifiedTime } from '../domain/platform-order-checks';
import { ImportMapping } from '../config/shop-import';
import { changesQuery } from '../platforms/shopify/read';
import { LabelRequestWithoutKey } from '../shipping-api/contract';

function order(patch: Partial<PlatformOrder> = {}): PlatformOrder {
  return {
    platformOrderId: '5500000042',
    name: '#1042',
    number: '1042',
    modifiedAt: '2026-11-20T10:00:00Z',
    shippingMethod: { title: 'Express', code: 'express' },
    currency: 'EUR',
    email: 'ana@example.org',
    shipTo: {
      firstName: 'Ana',
      lastName: 'Silva',
      company: null,
      streetLines: ['Rua Nova 3'],
      city: 'Lisboa',
      state: null,
      postalCode: '1100-001',
      countryCode: 'PT',
      phone: '+351 21 555 0000',
    },
    shipFrom: {
      firstName: null,
      lastName: null,
      company: 'Warehouse',
      streetLines: ['Lagerstraße 1'],
      city: 'Hamburg',
      state: null,
      postalCode: '20095',
      countryCode: 'DE',
      phone: null,
    },
    lines: [
      { sku: 'TENT-2', title: 'Tent', quantity: 1, unitPrice: 189, unitWeight: { value: 5, unit: 'lb' } },
      { sku: 'MAT-1', title: 'Mat', quantity: 2, unitPrice: 20, unitWeight: { value: 500, unit: 'g' } },
    ],
    skip: null,
    problem: null,
    merchant: { status: 'open', platformStatus: 'PAID', lines: [{ item: 'TENT-2', quantity: 1, location: 'Warehouse' }] },
    ...patch,
  };
}

const mapping = (patch: Record<string, unknown> = {}) =>
  ImportMapping.parse({ shippingMethods: { EXPRESS: { courier: 'dhl-express', productCode: 'EXPRESS_WORLDWIDE' } }, ...patch });

describe('mapOrder', () => {
  it('makes a label request the contract accepts: method by title (any case), weights converted, the location as ship-from', () => {
    const mapped = mapOrder('oslo', order(), mapping({ packagingWeight: 0.3, customs: { incoterm: 'DAP' } }));
    if (!mapped.ok) throw new Error(JSON.stringify(mapped.problems));
    const { record } = mapped;
    expect(record).toMatchObject({ shop: 'oslo', orderId: '1042', platformOrderId: '5500000042' });
    expect(LabelRequestWithoutKey.safeParse(record.labelRequest).success).toBe(true);
    const parcel = record.labelRequest.shipment.parcels![0]!;
    expect(parcel.items![0]!.unitWeight).toBe(2.268); // 5 lb
    expect(parcel.weight).toBe(3.568); // 2.268 + 2 × 0.5 + 0.3 packaging
    expect(record.labelRequest.shipment.shipFrom?.address?.countryCode).toBe('DE');
    expect(record.labelRequest.customs).toEqual({ incoterm: 'DAP' }); // DE → PT is cross-border
    expect(record.labelRequest.order).toEqual({ customerOrderNumber: '#1042', orderNumbers: { platformOrderNumber: '5500000042' } });
  });

  it('customs only across a border unless "always"; order values and prefix as configured', () => {
    const domestic = order({ shipTo: { ...order().shipTo!, countryCode: 'DE' } });
    const mapped = mapOrder(
      'oslo',
      domestic,
      mapping({ customs: { incoterm: 'DAP' }, orderId: 'id', orderIdPrefix: 'OO-', platformOrderNumber: null }),
    );
    expect(mapped.ok && mapped.record.labelRequest.customs).toBeUndefined();
    expect(mapped.ok && mapped.record.orderId).toBe('OO-5500000042');
    expect(mapped.ok && mapped.record.labelRequest.order).toEqual({ customerOrderNumber: '#1042' });
    const always = mapOrder('oslo', domestic, mapping({ customs: { incoterm: 'DAP' }, customsWhen: 'always' }));
    expect(always.ok && always.record.labelRequest.customs).toEqual({ incoterm: 'DAP' });
  });

  it('names every problem of an order at once: unknown method, no country, a line without weight, no ship-from', () => {
    const broken = order({
      shippingMethod: { title: 'Pigeon', code: null },
      shipTo: { ...order().shipTo!, countryCode: null },
      shipFrom: null,
      lines: [{ sku: 'X', title: 'X', quantity: 1, unitPrice: null, unitWeight: null }],
    });
    const mapped = mapOrder('oslo', broken, mapping());
    expect(mapped.ok).toBe(false);
    expect(!mapped.ok && mapped.problems.map((p) => p.field)).toEqual([
      'shippingMethod',
      'shipFrom',
      'shipTo.countryCode',
      'lines[0].weight',
    ]);
    // A default service covers any method.
    const fallback = mapOrder(
      'oslo',
      order({ shippingMethod: null }),
      mapping({ defaultService: { courier: 'dpd-de', productCode: 'DPD_CLASSIC' } }),
    );
    expect(fallback.ok && fallback.record.labelRequest.courier).toBe('dpd-de');
  });
});

describe('the cursor', () => {
  it('moves forward only; the retry list keeps failures once, drops settled ones, and is capped (oldest dropped and said)', () => {
    const start = { since: '2026-11-20T10:00:00Z', retry: ['1', '2'] };
    const next = advanceCursor(start, { newest: '2026-11-20T09:00:00Z', failed: ['3', '3', '2'], settled: ['1'] });
    expect(next.cursor).toEqual({ since: '2026-11-20T10:00:00Z', retry: ['2', '3'] });
    const full = { since: null, retry: Array.from({ length: MAX_RETRY }, (_, i) => String(i)) };
    const over = advanceCursor(full, { newest: '2026-11-21T00:00:00Z', failed: ['9999'], settled: [] });
    expect(over.cursor.retry).toHaveLength(MAX_RETRY);
    expect(over.droppedFromRetry).toEqual(['0']);
    expect(over.cursor.since).toBe('2026-11-21T00:00:00Z');
  });

  it('a pull starts at the cursor less the overlap, or the first pull back from now; never the wall clock once a cursor exists', () => {
    const settings = { overlap: 10 * 60_000, firstPull: 86_400_000 };
    const now = Date.parse('2026-11-25T12:00:00Z');
    expect(firstChangesPosition('shopify', { since: '2026-11-20T10:00:00Z', retry: [] }, settings, now)).toEqual({
      phase: 'shopify',
      from: '2026-11-20T09:50:00Z',
      after: null,
    });
    // No cursor yet: no shipment of ours can be among the shop's fulfilled orders, so Shopify's first pull leaves them out.
    expect(firstChangesPosition('shopify', { since: null, retry: [] }, settings, now)).toEqual({
      phase: 'shopify',
      from: '2026-11-24T12:00:00Z',
      after: null,
      firstPull: true,
    });
    expect(changesQuery('2026-11-24T12:00:00Z', { fulfilled: false })).not.toMatch(/fulfillment_status:shipped/);
    expect(changesQuery('2026-11-24T12:00:00Z')).toMatch(/ OR fulfillment_status:shipped\) updated_at:>='2026-11-24T12:00:00Z'$/);
    expect(firstChangesPosition('woocommerce', { since: null, retry: [] }, settings, now)).toEqual({
      phase: 'woocommerce',
      after: '2026-11-24T12:00:00Z',
      exclude: [],
    });
  });

  it("reads WooCommerce's zone-less GMT dates as UTC and converts weights", () => {
    const now = Date.parse('2026-11-25T12:00:00Z');
    expect(modifiedTime('2026-11-05T08:30:00', now, true)).toEqual({ ok: true, value: '2026-11-05T08:30:00Z' });
    expect(modifiedTime('2026-11-05T18:30:00+10:00', now)).toEqual({ ok: true, value: '2026-11-05T08:30:00Z' });
    expect(convertWeight(1, 'kg', 'lb')).toBe(2.205);
    expect(convertWeight(16, 'oz', 'lb')).toBe(1);
  });
});
