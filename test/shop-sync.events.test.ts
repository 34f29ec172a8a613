/**
 * The shipment event contract: the derived event id, the zod schemas, and the committed JSON
 * Schema that must be exactly what the script generates.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { makeShipmentEvent, SHIPMENT_EVENT_TYPES, ShipmentEvent, shipmentEventId, type ShipmentEventInput } from '../domain/events';
import { SCHEMA_PATH, shipmentEventJsonSchema } from '../platforms/webhook/event-schema';

const base = { shop: 'acme', orderId: '1001', occurredAt: '2025-01-02T03:04:05.000Z' };

describe('shipmentEventId', () => {
  it('is evt_ + the first 32 hex chars of sha256(shop NUL orderId NUL sequence), the same on every call', () => {
    const expected = `evt_${createHash('sha256').update('acme\u00001001\u00003').digest('hex').slice(0, 32)}`;
    expect(shipmentEventId({ shop: 'acme', orderId: '1001', sequence: 3 })).toBe(expected);
    expect(shipmentEventId({ shop: 'acme', orderId: '1001', sequence: 3 })).toBe(expected);
    // A pinned value: changing the derivation would re-send every event under a new id.
    expect(shipmentEventId({ shop: 'acme', orderId: '1001', sequence: 1 })).toBe('evt_03eebb161c37d02a5687789d01f14c74');
    expect(expected).toMatch(/^evt_[0-9a-f]{32}$/);
  });

  it('differs when any input differs, including across the shop/order and order/sequence boundaries', () => {
    const ids = [
      { shop: 'acme', orderId: '1001', sequence: 1 },
      { shop: 'acme', orderId: '1001', sequence: 2 },
      { shop: 'acme', orderId: '1002', sequence: 1 },
      { shop: 'acme2', orderId: '1001', sequence: 1 },
      { shop: 'ab', orderId: 'c', sequence: 1 },
      { shop: 'a', orderId: 'bc', sequence: 1 },
      { shop: 'a', orderId: 'o1', sequence: 11 },
      { shop: 'a', orderId: 'o11', sequence: 1 },
    ].map(shipmentEventId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('refuses control characters in shop and orderId, which keeps every NUL of the hash input a separator', () => {
    expect(() => shipmentEventId({ shop: 'a\u0000b', orderId: 'c', sequence: 1 })).toThrow(/shop must not contain control characters/);
    expect(() => shipmentEventId({ shop: 'a', orderId: 'b\u0000c', sequence: 1 })).toThrow(/orderId must not contain control characters/);
    expect(() => shipmentEventId({ shop: 'a', orderId: 'b\nc', sequence: 1 })).toThrow(/orderId must not contain control characters/);
    expect(ShipmentEvent.safeParse({ ...makeShipmentEvent(created(1)), shop: 'a\u0000b' }).success).toBe(false);
    expect(ShipmentEvent.safeParse({ ...makeShipmentEvent(created(1)), orderId: 'x\u001b[31m' }).success).toBe(false);
  });

  it('refuses a sequence that is not an integer >= 1 and empty ids', () => {
    for (const sequence of [0, -1, 1.5, Number.NaN]) {
      expect(() => shipmentEventId({ shop: 'a', orderId: 'b', sequence })).toThrow(/sequence must be an integer >= 1/);
    }
    expect(() => shipmentEventId({ shop: '', orderId: 'b', sequence: 1 })).toThrow(/shop/);
    expect(() => shipmentEventId({ shop: 'a', orderId: '', sequence: 1 })).toThrow(/orderId/);
  });
});

function created(sequence: number): ShipmentEventInput {
  return {
    ...base,
    sequence,
    type: 'label.created',
    data: {
      labelId: 'lbl-1',
      revision: 1,
      courier: 'dhl-express',
      customerOrderNumber: 'SO-1',
      courierOrderNumber: null,
      trackingNumber: null,
      labelUrl: 'https://labels.example/lbl-1.pdf',
    },
  };
}

describe('ShipmentEvent schema', () => {
  it('accepts one event of each type and makeShipmentEvent fills in the derived id', () => {
    const events = [
      makeShipmentEvent(created(1)),
      makeShipmentEvent({
        ...base,
        sequence: 2,
        type: 'label.rejected',
        data: {
          revision: 1,
          kind: 'courier_error',
          courierCode: 'COURIER_ERROR',
          courierMessage: 'Postal code 00000 is not served',
          message: 'the courier rejected the label',
          fields: [{ field: 'shipment.shipTo.address.postalCode', message: 'not served' }],
          awaitingCorrection: true,
        },
      }),
      makeShipmentEvent({
        ...base,
        sequence: 3,
        type: 'tracking.updated',
        data: {
          tag: 'InTransit',
          subtag: 'InTransit_001',
          subtagMessage: 'In transit',
          trackingNumber: 'JD0001',
          lastCheckpoint: {
            checkpointTime: '2025-01-02T04:00:00+01:00',
            location: 'Hamburg Hub',
            city: 'Hamburg',
            countryRegion: 'DE',
            message: 'Departed facility',
            tag: 'InTransit',
            subtag: 'InTransit_001',
          },
        },
      }),
      makeShipmentEvent({
        ...base,
        sequence: 4,
        type: 'shipment.completed',
        data: { outcome: 'delivered', reason: null, tag: 'Delivered', trackingNumber: 'JD0001' },
      }),
    ];
    expect(events.map((e) => e.type)).toEqual([...SHIPMENT_EVENT_TYPES]);
    for (const event of events) {
      expect(event.id).toBe(shipmentEventId(event));
      expect(ShipmentEvent.parse(JSON.parse(JSON.stringify(event)))).toEqual(event);
    }
  });

  it('names the field that breaks the schema', () => {
    expect(() => makeShipmentEvent({ ...created(1), data: { ...created(1).data, revision: 0 } } as ShipmentEventInput)).toThrow(
      /data\.revision/,
    );
    expect(() => makeShipmentEvent({ ...created(1), occurredAt: 'yesterday' })).toThrow(/occurredAt/);
    const unknownType = ShipmentEvent.safeParse({ ...makeShipmentEvent(created(1)), type: 'label.deleted' });
    expect(unknownType.success).toBe(false);
    const badOutcome = ShipmentEvent.safeParse({
      ...makeShipmentEvent(created(1)),
      type: 'shipment.completed',
      data: { outcome: 'lost', reason: null, tag: null, trackingNumber: null },
    });
    expect(badOutcome.success).toBe(false);
    expect(ShipmentEvent.safeParse({ ...makeShipmentEvent(created(1)), id: 'evt_XYZ' }).success).toBe(false);
    // awaitingCorrection is the constant true: a rejection always waits for a correction.
    const rejected = ShipmentEvent.safeParse({
      ...makeShipmentEvent(created(1)),
      type: 'label.rejected',
      data: { revision: 1, kind: 'validation', courierCode: null, courierMessage: null, message: 'x', awaitingCorrection: false },
    });
    expect(rejected.success).toBe(false);
  });

  it('ignores unknown fields, so fields can be added within version 1', () => {
    const event = { ...makeShipmentEvent(created(1)), extra: 1 };
    expect(ShipmentEvent.safeParse(event).success).toBe(true);
  });
});

describe('docs/shipment-event.schema.json', () => {
  it('is exactly what npm run shop-sync:schema generates (regenerate it after changing events.ts)', () => {
    expect(readFileSync(SCHEMA_PATH, 'utf8')).toBe(shipmentEventJsonSchema());
  });

  it('lists the four event types and leaves objects open to new fields', () => {
    const schema = JSON.parse(shipmentEventJsonSchema()) as {
      oneOf: Array<{ properties: { type: { const: string } }; additionalProperties?: unknown }>;
    };
    expect(schema.oneOf.map((o) => o.properties.type.const)).toEqual([...SHIPMENT_EVENT_TYPES]);
    expect(shipmentEventJsonSchema()).not.toContain('"additionalProperties": false');
  });
});
