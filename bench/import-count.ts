/**
 * Missed and doubled orders after an import: the orders that need a label (from the store's own
 * view at the end of the run) against the shipments started for them, which the worker's side
 * reads from Temporal visibility (every shipment workflow of the shop) and each one's input (its
 * platformOrderId), not from workflow ids.
 */
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { WORKFLOW_TYPE } from '../workflow-definitions/shipment';
import { type ShipmentInput } from '../domain/shipment';
import { sleep } from './stack';

export interface ImportCounts {
  /** Orders that needed a label at the end of the run. */
  needingLabel: number;
  /** Shipments started (workflows, or the plain script's starts). */
  shipments: number;
  /** Orders that needed a label without a shipment. */
  missed: number;
  /** Orders with more than one shipment. */
  doubled: number;
  /** Shipments beyond one per order. */
  extraShipments: number;
  /** Orders that needed no label (picked up, on hold) but got a shipment. */
  unneeded: number;
}

export function countImport(needing: ReadonlySet<string>, shipmentsPerOrder: ReadonlyMap<string, number>): ImportCounts {
  let missed = 0;
  for (const id of needing) if (!shipmentsPerOrder.has(id)) missed++;
  let doubled = 0;
  let extraShipments = 0;
  let unneeded = 0;
  let shipments = 0;
  for (const [id, n] of shipmentsPerOrder) {
    shipments += n;
    if (n > 1) doubled++;
    extraShipments += n - 1;
    if (!needing.has(id)) unneeded++;
  }
  return { needingLabel: needing.size, shipments, missed, doubled, extraShipments, unneeded };
}

/** The shop's shipment workflows, counted per platformOrderId of their start input. */
export async function shipmentsPerPlatformOrder(client: Client, shop: string): Promise<Map<string, number>> {
  const query = `WorkflowType = '${WORKFLOW_TYPE}' AND ShipmentShop = '${shop}'`;
  await settledCount(client, query);
  const executions: Array<{ workflowId: string; runId: string }> = [];
  for await (const w of client.workflow.list({ query })) executions.push({ workflowId: w.workflowId, runId: w.runId });
  const perOrder = new Map<string, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < executions.length) {
        const id = (await startInput(client, executions[next++]!)).platformOrderId ?? '(none)';
        perOrder.set(id, (perOrder.get(id) ?? 0) + 1);
      }
    }),
  );
  return perOrder;
}

/** Visibility is eventually consistent: wait until the count stops moving. */
async function settledCount(client: Client, query: string): Promise<number> {
  let last = -1;
  for (;;) {
    const { count } = await client.workflow.count(query);
    if (count === last) return count;
    last = count;
    await sleep(2000);
  }
}

/** The first history event only: the start, with the input as the pull started it. */
async function startInput(client: Client, execution: { workflowId: string; runId: string }): Promise<ShipmentInput> {
  const history = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution,
    maximumPageSize: 1,
  });
  const payload = history.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload) throw new Error(`no start input in the history of ${execution.workflowId}`);
  return defaultPayloadConverter.fromPayload<ShipmentInput>(payload);
}
