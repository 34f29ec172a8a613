/**
 * Finding one order's shipment workflow, and reading what Temporal knows about it, for the
 * operator commands (status, resubmit, cancel).
 */
import type { Client, WorkflowExecutionDescription, WorkflowHandle } from '@temporalio/client';
import type { TypedSearchAttributes } from '@temporalio/common';
import { SA } from '../../workflows/definitions';
import { shipmentWorkflowId } from '../../domain/shipment';
import { isNotFound, noShipment, printable, usageError } from '../cli-support';
import { checkStartableIdentity, InvalidOrderIdentity } from '../../order-import/start-shipment';

export interface FoundShipment {
  workflowId: string;
  handle: WorkflowHandle;
  description: WorkflowExecutionDescription;
}

/** Describes the order's workflow; a missing one is "no shipment for shop X order Y" (exit 4). */
export async function findShipment(client: Client, shop: string, orderId: string): Promise<FoundShipment> {
  try {
    checkStartableIdentity({ shop, orderId }); // no shipment could have been started with these ids
  } catch (err) {
    if (err instanceof InvalidOrderIdentity) throw usageError(printable(err.message));
    throw err;
  }
  const workflowId = shipmentWorkflowId({ shop, orderId });
  const handle = client.workflow.getHandle(workflowId);
  try {
    return { workflowId, handle, description: await handle.describe() };
  } catch (err) {
    if (isNotFound(err)) throw noShipment(shop, orderId);
    throw err;
  }
}

/** The shipment search attributes by their short names (shop, orderId, courier, status, ...). */
export function shipmentAttributes(typed: TypedSearchAttributes): Record<keyof typeof SA, string | null> {
  const out = {} as Record<keyof typeof SA, string | null>;
  for (const [name, key] of Object.entries(SA) as Array<[keyof typeof SA, (typeof SA)[keyof typeof SA]]>) {
    out[name] = typed.get(key) ?? null;
  }
  return out;
}

/** A protobuf Timestamp as an ISO string (null when absent). */
export function timestampIso(
  ts: { seconds?: number | { toNumber(): number } | null; nanos?: number | null } | null | undefined,
): string | null {
  if (!ts || ts.seconds === undefined || ts.seconds === null) return null;
  const seconds = typeof ts.seconds === 'number' ? ts.seconds : ts.seconds.toNumber();
  return new Date(seconds * 1000 + Math.floor((ts.nanos ?? 0) / 1e6)).toISOString();
}
