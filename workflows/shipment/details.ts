/** How a shipment presents itself: the Web UI's current details and the summaries of its calls. */
import { openAttention, type ShipmentState, type ShopOrderState } from '../../workflow-definitions/shipment';
import { DEFAULT_SHIPPING_ACCOUNT, type ShopEventDraft } from '../../domain/shipment';

/** The Web UI's "current details" of the workflow (markdown). */
export function currentDetails(state: ShipmentState): string {
  const lines = [
    `**${state.outcome ?? state.phase}**${state.tag ? ` · ${state.tag}${state.subtag ? ` (${state.subtag})` : ''}` : ''}`,
    '',
    `- Label: ${state.labelId ?? '-'} (revision ${state.revision}${state.idempotencyKey ? `, key \`${state.idempotencyKey}\`` : ''})`,
    `- Courier: ${state.courier}, order ${state.courierOrderNumber ?? '-'}, tracking ${state.trackingNumber ?? 'not assigned yet'}`,
    `- Shipping account: ${state.account ?? DEFAULT_SHIPPING_ACCOUNT}`,
  ];
  if (state.parcel) lines.push(`- Parcel: one of its order's, from ${state.parcel.name} (location ${state.parcel.location})`);
  if (state.lastCheckpoint) {
    const c = state.lastCheckpoint;
    lines.push(`- Last checkpoint: ${c.checkpointTime} ${c.location || c.city} — ${c.message}`);
  }
  if (state.lastError) {
    const e = state.lastError;
    lines.push(`- Last error (${e.kind}): ${e.courierMessage ? `${e.courierCode}: ${e.courierMessage}` : e.message}`);
  }
  lines.push(
    `- Polls: ${state.attempts.trackingPolls}${state.lastPolledAt ? ` (last change seen ${state.lastPolledAt})` : ''}, label requests: ${state.attempts.labelRequests}`,
  );
  const sync = state.shopSync;
  if (sync) {
    lines.push(
      sync.status === 'no_connector'
        ? `- Shop: no connector for shop ${state.shop}, ${sync.emitted} event(s) not sent`
        : `- Shop: ${sync.delivered} of ${sync.emitted} event(s) delivered (${sync.status}${sync.failure ? `: event ${sync.failure.sequence}: ${sync.failure.message}` : ''})`,
    );
  }
  const order = state.shopOrder;
  if (order) lines.push(shopOrderLine(order));
  return lines.join('\n');
}

/** The Web UI's details of an order shipping from several locations: each parcel, its workflow and its end. */
export function parcelsDetails(state: ShipmentState): string {
  const parcels = state.parcels ?? [];
  const lines = [
    `**${state.outcome ?? `${parcels.length} parcels`}**`,
    '',
    ...parcels.map(
      (p) =>
        `- From ${p.name} (location ${p.location}): \`${p.workflowId}\` · ${p.outcome ?? 'running'}${p.trackingNumber ? `, tracking ${p.trackingNumber}` : ''}`,
    ),
  ];
  if (state.shopOrder) lines.push(shopOrderLine(state.shopOrder));
  return lines.join('\n');
}

/** The shop's order as the shipment knows it: its status, the hold, and what an operator should look at. */
function shopOrderLine(order: ShopOrderState): string {
  const held = order.heldSince ? `, held since ${order.heldSince}` : '';
  const open = openAttention(order);
  const closed = order.resolutions?.at(-1);
  const attention = open
    ? ` · **needs an operator: ${open}**`
    : closed && order.attention === closed.attention
      ? ` · ${closed.attention} resolved by ${closed.by} at ${closed.at}: ${closed.note}`
      : '';
  const last = order.changes.at(-1);
  const toVoid = order.labelsToVoid?.length ? ` · unused label(s) to void: ${order.labelsToVoid.map((l) => l.labelId).join(', ')}` : '';
  return `- Shop order: ${order.facts.status}${held}${attention}${toVoid}${last ? ` (last change ${last.at}: ${last.action})` : ''}`;
}

/** "event 3" or "events 3-7": a delivery call's summary in the event history. */
export function describeEvents(batch: ShopEventDraft[]): string {
  const first = batch[0]?.sequence;
  const last = batch.at(-1)?.sequence;
  return first === last ? `event ${first}` : `events ${first}-${last}`;
}
