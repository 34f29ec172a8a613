/**
 * What needs a person: each reason a shipment waits for someone, as a visibility query on the
 * shipment's search attributes, with the command that acts on it. `shipments attention` lists
 * them, the worker's `shipments_needing_attention` gauge counts them (alerts fire on it).
 *
 * Extension point: a new reason (e.g. an order cancelled or changed in the shop) is one more
 * row here, with the search attribute its workflow sets; the list, the gauge and the alert follow.
 * Not imported by workflow code.
 */
import { SA, SHOP_SYNC_STOPPED, WORKFLOW_TYPE } from './definitions';

export interface AttentionReason {
  /** The gauge's `reason` label and the list's REASON column. */
  reason: string;
  /** What a person reads. */
  title: string;
  /** Visibility query of the shipments with this reason (the workflow type is added by the caller). */
  query: string;
  /**
   * Running: the workflow waits for the person. Closed: it ended in a state someone must follow
   * up outside the system (the courier, the customer); listed for a recent window only.
   */
  running: boolean;
  /** The command that acts on one, as the `shipments` bin spells it. */
  next(shop: string, orderId: string): string;
}

const quoted = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

export const ATTENTION_REASONS: readonly AttentionReason[] = [
  {
    reason: 'awaiting_correction',
    title: 'label rejected: waits for corrected data',
    query: `${SA.status.name} = 'awaiting_correction' AND ExecutionStatus = 'Running'`,
    running: true,
    next: (shop, orderId) => `shipments status ${shop} ${orderId}, then shipments resubmit ${shop} ${orderId} <corrected-label.json>`,
  },
  {
    reason: 'shop_sync_stopped',
    title: 'the shop refused an event, is gone, or the delivery window ran out',
    query: `${SA.shopSync.name} IN (${quoted(SHOP_SYNC_STOPPED)}) AND ExecutionStatus = 'Running'`,
    running: true,
    next: (shop, orderId) => `fix the shop's side, then shipments redeliver ${shop} ${orderId}`,
  },
  {
    reason: 'exception',
    title: 'the courier reported an exception',
    query: `${SA.status.name} = 'exception'`,
    running: false,
    next: (shop, orderId) => `shipments status ${shop} ${orderId}: ask the courier, tell the customer`,
  },
  {
    reason: 'tracking_timed_out',
    title: 'no terminal tracking state within the tracking time limit',
    query: `${SA.status.name} = 'tracking_timed_out'`,
    running: false,
    next: (shop, orderId) => `shipments status ${shop} ${orderId}: ask the courier where the parcel is`,
  },
  {
    reason: 'label_failed',
    title: 'no corrected label data before the correction timeout',
    query: `${SA.status.name} = 'label_failed'`,
    running: false,
    next: (shop, orderId) => `shipments status ${shop} ${orderId}: its shipment has ended; label the order by other means`,
  },
];

/** The full visibility query of one reason; closed ones since `closedSince` (ISO time). */
export function attentionQuery(reason: AttentionReason, closedSince: string): string {
  const window = reason.running ? '' : ` AND CloseTime > '${closedSince}'`;
  return `WorkflowType = '${WORKFLOW_TYPE}' AND ${reason.query}${window}`;
}
