/**
 * Platform orders → the import pipeline's records (order-import/engine.ts), so an order pulled
 * from a shop is validated, preflighted, started and reported exactly like a line of a file. An
 * order the mapping cannot handle becomes a record with its problems (a rejection naming the
 * field and the platform's order id), and so does an order the reader refused; an order that
 * needs no label from us is counted as skipped.
 */
import type { SourceRecord } from '../order-import/source';
import { seenOf } from './facts';
import { mapOrder } from './mapping';
import { isRefused, type PlatformOrder, type ReadOrder, type RefusedOrder } from '../domain/platform-order';
import type { ImportMapping } from '../config/shop-import';

export interface PlatformRecord extends SourceRecord {
  platformOrderId: string;
}

export interface PageRecords {
  records: PlatformRecord[];
  skipped: PlatformOrder[];
}

/** `firstLine` numbers the records of a pull one after another (the reports' "line"). */
export function pageRecords(shop: string, orders: readonly ReadOrder[], mapping: ImportMapping, firstLine: number): PageRecords {
  const records: PlatformRecord[] = [];
  const skipped: PlatformOrder[] = [];
  for (const order of orders) {
    if (isRefused(order)) {
      records.push(refusedRecord(order, firstLine + records.length));
      continue;
    }
    if (order.skip !== null) {
      skipped.push(order);
      continue;
    }
    const line = firstLine + records.length;
    // The raw text names the order, not its customer: the rejects file and logs need no address.
    const raw = JSON.stringify({ platformOrderId: order.platformOrderId, name: order.name, modifiedAt: order.modifiedAt });
    const mapped = mapOrder(shop, order, mapping);
    // The order as read now goes with the shipment: later changes are compared with it.
    if (mapped.ok)
      records.push({
        line,
        raw,
        value: { ...mapped.record, shopOrder: seenOf(order) },
        problems: [],
        platformOrderId: order.platformOrderId,
      });
    else {
      // No value: the pipeline would add its own "labelRequest is required" to the mapping's problems.
      records.push({
        line,
        raw,
        problems: mapped.problems.map((p) => ({
          field: p.field,
          message: `${p.message} (order ${order.name}, platform id ${order.platformOrderId})`,
        })),
        platformOrderId: order.platformOrderId,
      });
    }
  }
  return { records, skipped };
}

/** A refused order as a record with its one problem; its raw text names it by id only (the rest may be what was wrong). */
function refusedRecord(order: RefusedOrder, line: number): PlatformRecord {
  const named = order.name === null ? '' : `order ${order.name}, `;
  return {
    line,
    raw: JSON.stringify({ platformOrderId: order.platformOrderId }),
    problems: [{ field: order.problem.field, message: `${order.problem.message} (${named}platform id ${order.platformOrderId})` }],
    platformOrderId: order.platformOrderId,
  };
}
