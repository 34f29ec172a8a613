/** Orders for benchmarks: the first sample order of examples/, under a new id each. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ShipmentInput } from '../domain/shipment';

const TEMPLATE = JSON.parse(readFileSync(path.join(__dirname, '..', 'examples', 'orders.ndjson'), 'utf8').split('\n')[0]!) as ShipmentInput;

export function benchOrder(orderId: string, marker = ''): ShipmentInput {
  const { labelRequest } = TEMPLATE;
  return {
    shop: 'bench',
    orderId,
    labelRequest: { ...labelRequest, order: { ...labelRequest.order, customerOrderNumber: `${orderId}${marker}` } },
  };
}
