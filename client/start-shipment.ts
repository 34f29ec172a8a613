/**
 * Starts the shipment workflow of one shop order. Used by the import script and the tests.
 * The workflow id is derived from the order, and a second start of the same order (running
 * or finished) is refused by the server: it is reported as `already_known`, never as a second
 * workflow.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import {
  SA,
  shipmentWorkflowId,
  WORKFLOW_TYPE,
  type ShipmentInput,
} from '../workflows/definitions';

export type StartResult =
  | { status: 'started'; workflowId: string; runId: string }
  | { status: 'already_known'; workflowId: string };

export async function startShipment(client: Client, taskQueue: string, input: ShipmentInput): Promise<StartResult> {
  const workflowId = shipmentWorkflowId(input);
  const { labelRequest } = input;
  try {
    const handle = await client.workflow.start(WORKFLOW_TYPE, {
      workflowId,
      taskQueue,
      args: [input],
      // Neither a running nor a finished workflow of this order may be started again.
      workflowIdConflictPolicy: 'FAIL',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      typedSearchAttributes: [
        { key: SA.shop, value: input.shop },
        { key: SA.orderId, value: input.orderId },
        { key: SA.courier, value: labelRequest.courier },
        { key: SA.status, value: 'creating_label' },
      ],
      staticSummary: shipmentSummary(input),
      staticDetails: shipmentDetails(input),
    });
    return { status: 'started', workflowId, runId: handle.firstExecutionRunId };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return { status: 'already_known', workflowId };
    throw err;
  }
}

/** One line for the Web UI's workflow list. */
export function shipmentSummary({ shop, orderId, labelRequest }: ShipmentInput): string {
  const to = labelRequest.shipment.shipTo?.address?.countryCode ?? '?';
  return `Order ${orderId} of ${shop}: ${labelRequest.courier} ${labelRequest.service.productCode} to ${to}`;
}

/** Markdown shown on the workflow page: what was ordered, fixed at start. */
export function shipmentDetails({ shop, orderId, labelRequest }: ShipmentInput): string {
  const parcels = labelRequest.shipment.parcels ?? [];
  const items = parcels.reduce((n, p) => n + (p.items?.length ?? 0), 0);
  const to = labelRequest.shipment.shipTo?.address;
  const from = labelRequest.shipment.shipFrom?.address;
  const rows: Array<[string, string]> = [
    ['Shop', shop],
    ['Order', orderId],
    ['Courier', labelRequest.courier],
    ['Product', labelRequest.service.productCode],
    ['From', [from?.city, from?.countryCode].filter(Boolean).join(', ') || '-'],
    ['To', [to?.city, to?.postalCode, to?.countryCode].filter(Boolean).join(', ') || '-'],
    ['Parcels', `${parcels.length} (${items} item lines)`],
    ['Customs', labelRequest.customs ? 'declared' : '-'],
  ];
  return ['| | |', '|---|---|', ...rows.map(([k, v]) => `| ${k} | ${v.replace(/\|/g, '\\|')} |`)].join('\n');
}
