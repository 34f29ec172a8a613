/**
 * Starts the shipment workflow of one shop order. Used by the import script and the tests.
 * The workflow id is derived from the order, and a second start of the same order (running
 * or finished) is refused by the server: it is reported as `already_known`, never as a second
 * workflow.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { z } from 'zod';
import { ExternalId, fieldProblems, type FieldProblem } from '../shipping-api/contract';
import { SA, WORKFLOW_TYPE } from '../workflow-definitions/shipment';
import { canonicalPlatformOrderId } from '../domain/platform-order-id';
import { DEFAULT_SHIPPING_ACCOUNT, shipmentWorkflowId, type OrderIdentity, type ShipmentInput } from '../domain/shipment';
import { orderSpan } from '../tracing/spans';

/**
 * The Temporal server's longest workflow id, in bytes: dynamic config `limit.maxIDLength`,
 * default 1000 (the dev server and the project's cluster keep the default). A longer id is
 * refused by the server with only "Failed to start Workflow".
 */
export const MAX_WORKFLOW_ID_BYTES = 1000;

/** Shop and order id as a start accepts them: valid ids whose workflow id the server takes. */
export const StartableIdentity = z.object({ shop: ExternalId, orderId: ExternalId }).superRefine(workflowIdFits);

/** A zod refinement of any object with shop and orderId: the workflow id fits the server. */
export function workflowIdFits(identity: OrderIdentity, ctx: z.RefinementCtx): void {
  // Refinements run even after a field failed: invalid ids have their own issue (and may not encode).
  if (!ExternalId.safeParse(identity.shop).success || !ExternalId.safeParse(identity.orderId).success) return;
  const problem = workflowIdProblem(identity);
  if (problem) ctx.addIssue({ code: 'custom', path: [problem.field], message: problem.message });
}

/** The field to blame when the order's workflow id would be too long for the server, or undefined. */
export function workflowIdProblem({ shop, orderId }: OrderIdentity): FieldProblem | undefined {
  const bytes = Buffer.byteLength(shipmentWorkflowId({ shop, orderId }));
  if (bytes <= MAX_WORKFLOW_ID_BYTES) return undefined;
  // The order id, unless the shop alone already leaves no room for one.
  const shopOnly = Buffer.byteLength(shipmentWorkflowId({ shop, orderId: '' }));
  return {
    field: shopOnly >= MAX_WORKFLOW_ID_BYTES ? 'shop' : 'orderId',
    message: `makes a workflow id of ${bytes} bytes (shipment-<shop>-<orderId>, percent-encoded); the Temporal server refuses ids over ${MAX_WORKFLOW_ID_BYTES} bytes`,
  };
}

/** An order that cannot be started as given; `problems` name the fields. */
export class InvalidOrderIdentity extends Error {
  override readonly name = 'InvalidOrderIdentity';
  constructor(readonly problems: FieldProblem[]) {
    super(`invalid order identity: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`);
  }
}

/** Throws InvalidOrderIdentity unless the shop and order id can be started. */
export function checkStartableIdentity(identity: OrderIdentity): void {
  const parsed = StartableIdentity.safeParse({ shop: identity.shop, orderId: identity.orderId });
  if (!parsed.success) throw new InvalidOrderIdentity(fieldProblems(parsed.error));
}

export type StartResult =
  | { status: 'started'; workflowId: string; runId: string }
  | { status: 'already_known'; workflowId: string }
  /** The order id belongs to another platform order: a rejection naming both (two orders never collapse into one shipment). */
  | { status: 'taken'; workflowId: string; problem: FieldProblem };

/**
 * `priorityKey`: Temporal task priority of the shipment and its activities (domain/priority.ts); unset: the server's default.
 * With tracing on, the start is the root of the order's trace (tracing/spans.ts orderSpan).
 */
export async function startShipment(client: Client, taskQueue: string, input: ShipmentInput, priorityKey?: number): Promise<StartResult> {
  checkStartableIdentity(input);
  return orderSpan(input, () => start(client, taskQueue, input, priorityKey));
}

async function start(client: Client, taskQueue: string, input: ShipmentInput, priorityKey?: number): Promise<StartResult> {
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
      ...(priorityKey === undefined ? {} : { priority: { priorityKey } }),
      typedSearchAttributes: [
        { key: SA.shop, value: input.shop },
        { key: SA.orderId, value: input.orderId },
        { key: SA.courier, value: labelRequest.courier },
        { key: SA.status, value: 'creating_label' },
      ],
      staticSummary: shipmentSummary(input),
      staticDetails: shipmentDetails(input),
      // Read back when the id is started again: the platform order is part of "already known".
      ...(input.platformOrderId === undefined ? {} : { memo: { platformOrderId: input.platformOrderId } }),
    });
    return { status: 'started', workflowId, runId: handle.firstExecutionRunId };
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    await checkSameOrder(client, workflowId, input);
    const problem = await otherPlatformOrder(client, workflowId, input);
    return problem ? { status: 'taken', workflowId, problem } : { status: 'already_known', workflowId };
  }
}

/**
 * `#5001` and `5001` both map to order id 5001: the shipment started for one must not make the
 * other "already known". The platform order id each shipment was started with is in its memo
 * (shipments started before it was kept there compare by order id alone, as they did).
 */
async function otherPlatformOrder(client: Client, workflowId: string, input: ShipmentInput): Promise<FieldProblem | undefined> {
  if (input.platformOrderId === undefined) return undefined;
  const memo = (await client.workflow.getHandle(workflowId).describe()).memo as { platformOrderId?: unknown } | undefined;
  const theirs = memo?.platformOrderId;
  // Shipments started before ids were normalized may keep Shopify's GraphQL form in their memo.
  if (typeof theirs !== 'string' || canonicalPlatformOrderId(theirs) === canonicalPlatformOrderId(input.platformOrderId)) return undefined;
  return {
    field: 'orderId',
    message: `${input.orderId} already belongs to platform order ${theirs}'s shipment; platform order ${input.platformOrderId} maps to the same id (choose import.mapping.orderId "id", or fix the order's number)`,
  };
}

/**
 * `shipment-<shop>-<orderId>` cannot change for orders already started, and a `-` inside the shop
 * makes it ambiguous: shop "a-b" order "c" and shop "a" order "b-c" share one id. When the id can
 * be read two ways, the existing workflow's shop and orderId search attributes tell whether it
 * is this order; another order's is a failure, never "already known" (which would lose this one).
 */
async function checkSameOrder(client: Client, workflowId: string, { shop, orderId }: OrderIdentity): Promise<void> {
  if (workflowId.split('-').length <= 3) return; // shipment, shop, order: only one reading
  const existing = (await client.workflow.getHandle(workflowId).describe()).typedSearchAttributes;
  const [otherShop, otherOrder] = [existing.get(SA.shop), existing.get(SA.orderId)];
  if (otherShop === undefined || (otherShop === shop && otherOrder === orderId)) return;
  throw new Error(
    `workflow id ${workflowId} already belongs to shop ${JSON.stringify(otherShop)} order ${JSON.stringify(otherOrder)}; ` +
      `shop ${JSON.stringify(shop)} order ${JSON.stringify(orderId)} cannot be started under it`,
  );
}

/** One line for the Web UI's workflow list. */
export function shipmentSummary({ shop, orderId, labelRequest }: ShipmentInput): string {
  const to = labelRequest.shipment.shipTo?.address?.countryCode ?? '?';
  return `Order ${orderId} of ${shop}: ${labelRequest.courier} ${labelRequest.service.productCode} to ${to}`;
}

/** Markdown shown on the workflow page: what was ordered, fixed at start. */
export function shipmentDetails({ shop, orderId, labelRequest, account }: ShipmentInput): string {
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
    ['Shipping account', account ?? DEFAULT_SHIPPING_ACCOUNT],
  ];
  return ['| | |', '|---|---|', ...rows.map(([k, v]) => `| ${k} | ${v.replace(/\|/g, '\\|')} |`)].join('\n');
}
