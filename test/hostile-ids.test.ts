/**
 * Shop and order ids from outside cannot merge two orders, forge output or reach the server
 * unstartable: control characters and unpaired surrogates are refused at every entry point
 * (import record, CLI lookup, startShipment) with their field path, an id whose workflow id is
 * too long for the server is refused before any start, and the idempotencyKey of every order
 * that was valid before is byte-identical.
 */
import { describe, expect, it } from 'vitest';
import { labelIdempotencyKey } from '../activities/shipping-api';
import { printable, table } from '../client/cli-support';
import { validateRecord } from '../order-import/record';
import { checkStartableIdentity, InvalidOrderIdentity, MAX_WORKFLOW_ID_BYTES, startShipment } from '../order-import/start-shipment';
import { findShipment } from '../client/commands/shipment-lookup';
import { shipmentWorkflowId } from '../domain/shipment';
import type { Client } from '@temporalio/client';

const labelRequest = { courier: 'ups', service: { productCode: 'UPS_STANDARD' }, shipment: {} };
const x = 'x'.repeat(100);
/** The finding's pair: the same SHA-256 input (a NUL b NUL c...), so the same key before the fix. */
const colliding = [
  { shop: 'a\u0000b', orderId: `c${x}` },
  { shop: 'a', orderId: `b\u0000c${x}` },
];

describe('the idempotencyKey', () => {
  it('is unchanged for an order that was valid before (value computed on main at dad8937)', () => {
    const orderId = `ORD-2024-${'ü'.repeat(20)}/Ø`;
    expect(validateRecord({ shop: 'nordic-outdoor', orderId, labelRequest }).ok).toBe(true);
    expect(labelIdempotencyKey({ shop: 'nordic-outdoor', orderId, revision: 3 })).toBe(
      'sha256-97e26120c384ba8e35e43cb5802b0aa9f5f131f0b59bd1f253f078ab17e792ac:r3',
    );
    expect(labelIdempotencyKey({ shop: 'acme', orderId: 'A/1', revision: 2 })).toBe('acme:A%2F1:r2');
  });

  it('cannot be shared by two orders: the colliding pair of the finding is refused, each with its field path', () => {
    expect(labelIdempotencyKey({ ...colliding[0]!, revision: 1 })).toBe(labelIdempotencyKey({ ...colliding[1]!, revision: 1 }));
    const [first, second] = colliding.map((ids) => validateRecord({ ...ids, labelRequest }));
    expect(first).toMatchObject({ ok: false, problems: [{ field: 'shop', message: expect.stringMatching(/control characters/) }] });
    expect(second).toMatchObject({ ok: false, problems: [{ field: 'orderId', message: expect.stringMatching(/control characters/) }] });
    for (const ids of colliding) expect(() => checkStartableIdentity(ids)).toThrow(InvalidOrderIdentity);
  });
});

describe('ids from outside', () => {
  it.each([
    ['a newline (a forged log line)', 'A1\nrejected line 9 (shop x order y)'],
    ['an ANSI escape', 'A1\u001b[2K\u001b[1Gok'],
    ['DEL', 'A\u007f'],
    ['a C1 control', 'A\u0085'],
    ['a line separator', 'A\u2028B'],
  ])('refuses %s in orderId with its field path', (_what, orderId) => {
    expect(validateRecord({ shop: 'acme', orderId, labelRequest })).toMatchObject({
      ok: false,
      problems: [{ field: 'orderId', message: expect.stringMatching(/control characters/) }],
    });
  });

  it('refuses an unpaired surrogate (UTF-8 would turn each into the same U+FFFD)', () => {
    expect(validateRecord({ shop: 'acme', orderId: 'A\ud800', labelRequest })).toMatchObject({
      ok: false,
      problems: [{ field: 'orderId', message: expect.stringMatching(/unpaired surrogate/) }],
    });
  });

  it('keeps emoji and other printable text', () => {
    expect(validateRecord({ shop: 'café', orderId: 'Bestellung-😀-Nr. 7', labelRequest }).ok).toBe(true);
  });

  it('refuses, before any start, an id whose workflow id is longer than the server takes (100 emoji: 2,410 bytes)', async () => {
    const emoji = '😀'.repeat(100);
    expect(Buffer.byteLength(shipmentWorkflowId({ shop: emoji, orderId: emoji }))).toBe(2410);
    expect(validateRecord({ shop: 'acme', orderId: emoji, labelRequest })).toMatchObject({
      ok: false,
      problems: [{ field: 'orderId', message: expect.stringMatching(/workflow id of 1214 bytes .* over 1000 bytes/) }],
    });
    expect(validateRecord({ shop: emoji, orderId: emoji, labelRequest })).toMatchObject({ ok: false, problems: [{ field: 'shop' }] });
    // The largest id that fits is accepted.
    const fits = 'o'.repeat(200);
    expect(Buffer.byteLength(shipmentWorkflowId({ shop: 'acme', orderId: fits }))).toBeLessThanOrEqual(MAX_WORKFLOW_ID_BYTES);
    expect(validateRecord({ shop: 'acme', orderId: fits, labelRequest }).ok).toBe(true);
    // startShipment refuses before it talks to the server: this client would throw on any use.
    const client = new Proxy(
      {},
      {
        get: () => {
          throw new Error('the server was called');
        },
      },
    ) as unknown as Client;
    await expect(startShipment(client, 'q', { shop: 'acme', orderId: emoji, labelRequest })).rejects.toThrow(
      /orderId: makes a workflow id of 1214 bytes/,
    );
  });

  it('is refused by the CLI lookup as a usage error, printed escaped', async () => {
    const client = new Proxy(
      {},
      {
        get: () => {
          throw new Error('the server was called');
        },
      },
    ) as unknown as Client;
    await expect(findShipment(client, 'acme', 'A1\u001b[31m')).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/^invalid order identity: orderId: must not contain control characters/),
    });
  });

  it('is printed with control characters escaped in human output', () => {
    expect(printable('A1\nrejected\u001b[2K')).toBe('A1\\u000arejected\\u001b[2K');
    expect(
      table([
        ['shop', 'order'],
        ['acme', 'x\ry'],
      ]),
    ).toBe('shop  order\nacme  x\\u000dy');
  });
});

describe('the import', () => {
  it('does not take two orders that share a workflow id for duplicates: both reach the start, which tells them apart', async () => {
    const { importRecords } = await import('../order-import/engine');
    const started: string[] = [];
    async function* records() {
      for (const [line, shop, orderId] of [
        [1, 'nordic-outdoor', '7'],
        [2, 'nordic', 'outdoor-7'],
        [3, 'nordic', 'outdoor-7'],
      ] as const) {
        yield { line, raw: '', value: { shop, orderId, labelRequest }, problems: [] };
      }
    }
    const result = await importRecords({
      records: records(),
      concurrency: 1,
      start: async (input) => {
        started.push(`${input.shop}/${input.orderId}`);
        return { status: 'started', workflowId: shipmentWorkflowId(input), runId: 'r' };
      },
    });
    expect(started).toEqual(['nordic-outdoor/7', 'nordic/outdoor-7']);
    expect(result.rejections).toEqual([
      {
        line: 3,
        shop: 'nordic',
        orderId: 'outdoor-7',
        reasons: [{ field: 'orderId', message: expect.stringMatching(/duplicate: shop nordic order outdoor-7 already appears at line 2/) }],
      },
    ]);
  });
});
