/**
 * What needs a person: each reason a shipment waits for someone, as a visibility query on the
 * shipment's search attributes, with the command that acts on it. `npm run cli -- attention` lists
 * them, the worker's `shipments_needing_attention` gauge counts them (alerts fire on it).
 *
 * Extension point: a new reason is one more row here, with the search attribute its workflow
 * sets; the list, the gauge and the alert follow. A reason ends when its attribute moves on:
 * the phase or outcome changes, or ShipmentShopChange becomes `resolved` (the change taken, or
 * closed by a person with `npm run cli -- resolve`).
 * Not imported by workflow code.
 */
import type { Client } from '@temporalio/client';
import {
  ATTENTION_RESOLUTION_WORKFLOW_TYPE,
  relabelCommand,
  resolveCommand,
  resolvedShipmentWorkflowId,
  SA,
  SHOP_SYNC_STOPPED,
  WORKFLOW_TYPE,
  type ShopAttention,
} from './shipment';

export interface AttentionReason {
  /** The gauge's `reason` label and the list's REASON column. */
  reason: string;
  /** What a person reads. */
  title: string;
  /** Visibility query of the shipments with this reason (the workflow type is added by the caller). */
  query: string;
  /**
   * `running`: the workflow waits for the person. `closed`: it ended in a state someone must
   * follow up outside the system (the courier, the customer); listed for a recent window only.
   * `both`: marked for a person while it goes on, and still so for the recent window after it ended.
   */
  when: 'running' | 'closed' | 'both';
  /**
   * `closed` reasons: the shipment's ShipmentStatus once ended with it. A person closes one with
   * `npm run cli -- resolve` (a workflow attentionResolutionWorkflow records it), and it leaves
   * the list and the gauge.
   */
  endedStatus?: string;
  /**
   * `both` reasons: the ShipmentShopChange marks that mean it. A shipment that ended with one
   * still open is closed as an ended one is (`resolve` starts its record).
   */
  marks?: readonly string[];
  /** The command that acts on one, as the `shipments` bin spells it; `parcel`: the location of one parcel of a split order. */
  next(shop: string, orderId: string, parcel?: string): string;
}

/** A `closed` reason: the shipment ended with ShipmentStatus `status`. */
const endedWith = (status: string) => ({ query: `${SA.status.name} = '${status}'`, when: 'closed' as const, endedStatus: status });
const resolved = (shop: string, orderId: string, parcel?: string) => `${resolveCommand(shop, orderId, parcel)} --note "<what was done>"`;
const quoted = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');
/** A parcel's workflow is addressed with its location: the commands refuse the order's workflow without it. */
const parcelOption = (parcel?: string) => (parcel === undefined ? '' : ` --parcel ${parcel}`);

/** Marks of ShipmentShopChange other than a cancellation. */
const SHOP_CHANGES_AFTER_LABEL = ['address_changed', 'lines_changed', 'held_in_shop'] as const satisfies readonly ShopAttention[];

export const ATTENTION_REASONS: readonly AttentionReason[] = [
  {
    reason: 'awaiting_correction',
    title: 'label rejected: waits for corrected data',
    query: `${SA.status.name} = 'awaiting_correction'`,
    when: 'running',
    next: (shop, orderId, parcel) =>
      `npm run cli -- status ${shop} ${orderId}, then npm run cli -- resubmit ${shop} ${orderId}${parcelOption(parcel)} <corrected-label.json>`,
  },
  {
    reason: 'shop_sync_stopped',
    title: 'the shop refused an event, is gone, or the delivery window ran out',
    query: `${SA.shopSync.name} IN (${quoted(SHOP_SYNC_STOPPED)})`,
    when: 'running',
    next: (shop, orderId, parcel) => `fix the shop's side, then npm run cli -- redeliver ${shop} ${orderId}${parcelOption(parcel)}`,
  },
  {
    reason: 'cancelled_in_shop',
    title: 'the order was cancelled or refunded in the shop after its label: the parcel is on its way',
    query: `${SA.shopChange.name} = 'cancelled_in_shop'`,
    when: 'both',
    marks: ['cancelled_in_shop'],
    next: (shop, orderId, parcel) =>
      `npm run cli -- status ${shop} ${orderId}: recall the parcel with the courier (nothing is voided or written to the order), ` +
      `then ${resolved(shop, orderId, parcel)}`,
  },
  {
    reason: 'label_to_void',
    title: "the order was cancelled in the shop while an operator's relabel was made: its label is bought and unused",
    query: `${SA.shopChange.name} = 'cancelled_label_to_void'`,
    when: 'both',
    marks: ['cancelled_label_to_void'],
    next: (shop, orderId, parcel) =>
      `npm run cli -- status ${shop} ${orderId}: void the unused label with the courier and recall the parcel, then ${resolved(shop, orderId, parcel)}`,
  },
  {
    reason: 'changed_in_shop',
    title: 'the merchant changed the address or lines, or held the order, after its label',
    query: `${SA.shopChange.name} IN (${quoted(SHOP_CHANGES_AFTER_LABEL)})`,
    when: 'both',
    marks: SHOP_CHANGES_AFTER_LABEL,
    next: (shop, orderId, parcel) =>
      `npm run cli -- status ${shop} ${orderId}: the parcel goes to the label's address; redirect it with the courier or ship the difference, ` +
      `or label it anew to the shop's address: ${relabelCommand(shop, orderId, parcel)} (handled otherwise: ${resolved(shop, orderId, parcel)})`,
  },
  {
    reason: 'exception',
    title: 'the courier reported an exception',
    ...endedWith('exception'),
    next: (shop, orderId, parcel) =>
      `npm run cli -- status ${shop} ${orderId}: ask the courier, tell the customer, then ${resolved(shop, orderId, parcel)}`,
  },
  {
    reason: 'tracking_timed_out',
    title: 'no terminal tracking state within the tracking time limit',
    ...endedWith('tracking_timed_out'),
    next: (shop, orderId, parcel) =>
      `npm run cli -- status ${shop} ${orderId}: ask the courier where the parcel is, then ${resolved(shop, orderId, parcel)}`,
  },
  {
    reason: 'hold_timed_out',
    title: 'the merchant held the order for longer than SHOP_HOLD_TIMEOUT: no label was made',
    ...endedWith('hold_timed_out'),
    next: (shop, orderId, parcel) =>
      `npm run cli -- status ${shop} ${orderId}: once the shop releases it, import it again (a new label); ` +
      `or, handled otherwise: ${resolved(shop, orderId, parcel)}`,
  },
  {
    reason: 'label_failed',
    title: 'no corrected label data before the correction timeout',
    ...endedWith('label_failed'),
    next: (shop, orderId, parcel) =>
      `npm run cli -- status ${shop} ${orderId}: its shipment has ended; label the order by other means, then ${resolved(shop, orderId, parcel)}`,
  },
];

/** The full visibility query of one reason; closed ones since `closedSince` (ISO time). */
export function attentionQuery(reason: AttentionReason, closedSince: string): string {
  const window = {
    running: ` AND ExecutionStatus = 'Running'`,
    closed: ` AND CloseTime > '${closedSince}'`,
    both: ` AND (ExecutionStatus = 'Running' OR CloseTime > '${closedSince}')`,
  }[reason.when];
  return `WorkflowType = '${WORKFLOW_TYPE}' AND ${reason.query}${window}`;
}

/**
 * What an ended shipment left for a person, if anything: the `closed` reason of its
 * ShipmentStatus, else the `both` reason of a ShipmentShopChange mark still open.
 */
export function endedReasonOf(status: string | null, shopChange: string | null = null): AttentionReason | undefined {
  const ended = status === null ? undefined : ATTENTION_REASONS.find((r) => r.endedStatus === status);
  return ended ?? (shopChange === null ? undefined : ATTENTION_REASONS.find((r) => r.marks?.includes(shopChange)));
}

/** At most this many resolutions are read per list or gauge refresh; the rest stay counted (never hidden). */
export const RESOLUTIONS_READ = 10_000;

/**
 * The ended shipments a person resolved (their workflow ids), of those that may have ended since
 * `closedSince`: a resolution starts after its shipment ended.
 */
export async function resolvedEndedShipments(client: Client, closedSince: string): Promise<Set<string>> {
  const ids = new Set<string>();
  const query = `WorkflowType = '${ATTENTION_RESOLUTION_WORKFLOW_TYPE}' AND StartTime > '${closedSince}'`;
  for await (const info of client.workflow.list({ query })) {
    const shipment = resolvedShipmentWorkflowId(info.workflowId);
    if (shipment !== undefined) ids.add(shipment);
    if (ids.size === RESOLUTIONS_READ) break;
  }
  return ids;
}

/** attentionQuery narrowed to some shipments (by workflow id): for the gauge to count the resolved ones among a reason's. */
export function attentionQueryAmong(reason: AttentionReason, closedSince: string, workflowIds: readonly string[]): string {
  const literal = (v: string) => `'${v.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
  return `${attentionQuery(reason, closedSince)} AND WorkflowId IN (${workflowIds.map(literal).join(', ')})`;
}
