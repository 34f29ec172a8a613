/**
 * Finding one order's shipment workflow, and reading what Temporal knows about it, for the
 * operator commands (status, resubmit, cancel).
 */
import type { Client, WorkflowExecutionDescription, WorkflowHandle } from '@temporalio/client';
import type { TypedSearchAttributes } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { attentionResolutionWorkflowId, SA, type EndedShipmentResolution } from '../../workflow-definitions/shipment';
import { parcelWorkflowId, shipmentWorkflowId } from '../../domain/shipment';
import { CliError, EXIT, isNotFound, noShipment, printable, usageError } from '../cli-support';
import { checkStartableIdentity, InvalidOrderIdentity } from '../../order-import/start-shipment';

export interface FoundShipment {
  workflowId: string;
  handle: WorkflowHandle;
  description: WorkflowExecutionDescription;
}

/**
 * Describes the order's workflow, or with `parcel` (a location id) the workflow of that parcel
 * of an order shipping from several locations; a missing one is "no shipment for shop X order Y" (exit 4).
 */
export async function findShipment(client: Client, shop: string, orderId: string, parcel?: string): Promise<FoundShipment> {
  try {
    checkStartableIdentity({ shop, orderId }); // no shipment could have been started with these ids
  } catch (err) {
    if (err instanceof InvalidOrderIdentity) throw usageError(printable(err.message));
    throw err;
  }
  if (parcel !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(parcel))
    throw usageError(`--parcel must be a location id (1-64 of A-Z a-z 0-9 _ -), as status shows it (got "${printable(parcel)}")`);
  const orderWorkflowId = shipmentWorkflowId({ shop, orderId });
  const workflowId = parcel === undefined ? orderWorkflowId : parcelWorkflowId(orderWorkflowId, parcel);
  const handle = client.workflow.getHandle(workflowId);
  try {
    return { workflowId, handle, description: await handle.describe() };
  } catch (err) {
    if (isNotFound(err)) throw noShipment(shop, parcel === undefined ? orderId : `${orderId} parcel ${parcel}`);
    throw err;
  }
}

/**
 * findShipment, refusing (exit 1) a shipment that has ended: an update or a redelivery needs its
 * workflow running. `refusal` says what the command could not do, e.g. "nothing to relabel".
 */
export async function findRunningShipment(
  client: Client,
  shop: string,
  orderId: string,
  parcel: string | undefined,
  refusal: string,
): Promise<FoundShipment> {
  const found = await findShipment(client, shop, orderId, parcel);
  if (found.description.status.name !== 'RUNNING') {
    throw new CliError(
      `the shipment of shop ${shop} order ${orderId} has already ended (${found.description.status.name}); ${refusal}`,
      EXIT.rejected,
    );
  }
  return found;
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

/**
 * The record of a person's resolve of an ended shipment (`npm run cli -- resolve`), or undefined
 * when there is none: read from its workflow's start, so no worker needs to have run it yet.
 */
export async function readEndedResolution(client: Client, shipmentWorkflowId: string): Promise<EndedShipmentResolution | undefined> {
  try {
    const history = await client.workflow.getHandle(attentionResolutionWorkflowId(shipmentWorkflowId)).fetchHistory();
    const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads;
    return await decodeFromPayloadsAtIndex<EndedShipmentResolution>(client.options.loadedDataConverter, 0, input);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
