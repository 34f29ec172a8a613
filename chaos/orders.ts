/** The chaos run's orders and accounts. */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FakeAccount } from '../fake-shipping-api/server';
import type { ShipmentInput } from '../domain/shipment';

export const ROOT = path.join(__dirname, '..');
export const SHOP = 'chaos';

/** Every rejectEvery-th order goes to postal code 00000: the courier rejects it. */
export function chaosOrders(count: number): { orders: ShipmentInput[]; rejected: string[] } {
  const template = JSON.parse(readFileSync(path.join(ROOT, 'examples', 'orders.ndjson'), 'utf8').split('\n')[0]!) as ShipmentInput;
  const rejectEvery = 50;
  const orders: ShipmentInput[] = [];
  const rejected: string[] = [];
  for (let i = 1; i <= count; i += 1) {
    const orderId = `C-${String(i).padStart(4, '0')}`;
    const reject = i % rejectEvery === 7 % rejectEvery || (count < rejectEvery && i === Math.min(count, 3));
    const req = template.labelRequest;
    const shipTo = req.shipment.shipTo!;
    orders.push({
      shop: SHOP,
      orderId,
      labelRequest: {
        ...req,
        shipment: reject ? { ...req.shipment, shipTo: { ...shipTo, address: { ...shipTo.address!, postalCode: '00000' } } } : req.shipment,
        order: { ...req.order, customerOrderNumber: orderId },
      },
    });
    if (reject) rejected.push(orderId);
  }
  return { orders, rejected };
}

export function account(name: string): FakeAccount {
  // Random per run, so finding one in a log can only mean it leaked.
  return { name, apiKey: `${name}-key-${randomBytes(12).toString('hex')}`, apiToken: `${name}-token-${randomBytes(12).toString('hex')}` };
}
