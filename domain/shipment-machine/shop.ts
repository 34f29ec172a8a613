/**
 * The merchant's changes (cancel, refund, hold, release, address, lines), by phase. Before the
 * label a change is acted on: the call out is stopped and the label step settles it. After the
 * label nothing is voided (the API has none): the shipment is marked for an operator, a cancelled
 * order is written to no more, and an operator's relabel in flight yields.
 */
import { canonicalPlatformOrderId } from '../platform-order-id';
import { differences, isWithdrawn, readBefore, type ShopChangeKind, type ShopOrderSeen, type ShopOrderStatus } from '../shop-order';
import type { ShipmentEvent } from './events';
import { CANCELLED_MARKS, type Attention, type ChangeTaken } from './state';
import { settleBeforeLabel, type Step } from './step';
import { markAttention } from './transitions';

type ShopChanged<R> = Extract<ShipmentEvent<R>, { type: 'shopChanged' }>;

/** Why a reading is not taken (null: taken): the shipment ended, another order's, stale, or nothing that matters differs. */
export function shopChangeRefusal<R>(s: Step<R>['s'], e: ShopChanged<R>): string | null {
  if (!s.shop) return 'this shipment was not started by a shop pull: it has no order facts to compare';
  const mine = s.shop.platformOrderId;
  return shopChangeRefusalOf(
    { ended: s.phase === 'completed', ...(mine !== undefined ? { platformOrderId: mine } : {}), known: s.shop },
    e,
  );
}

/**
 * Why a reading of the order is not taken (null: taken): the shipment ended, it is another
 * platform order's (two can map to one order id; compared as one identity, a shipment started
 * from a file may hold Shopify's GraphQL form), it is older than the one known, or nothing that
 * matters to the label differs.
 */
export function shopChangeRefusalOf(
  shipment: { ended: boolean; platformOrderId?: string; known: ShopOrderSeen },
  change: ShopOrderSeen & { platformOrderId?: string },
): string | null {
  if (shipment.ended) return 'the shipment has ended';
  const mine = shipment.platformOrderId;
  if (
    change.platformOrderId !== undefined &&
    mine !== undefined &&
    canonicalPlatformOrderId(change.platformOrderId) !== canonicalPlatformOrderId(mine)
  )
    return `another order: read from platform order ${change.platformOrderId}, this shipment is platform order ${mine}'s`;
  const known = shipment.known;
  if (change.modifiedAt < known.modifiedAt)
    return `stale: read as of ${change.modifiedAt}, the shipment knows the order as of ${known.modifiedAt}`;
  // Modified times are to the second: of two readings within one second, the one read earlier is stale.
  if (readBefore(change, known))
    return `stale: read at ${change.readAt}, the shipment knows a reading of the same second (${known.modifiedAt}) read at ${known.readAt}`;
  if (differences(known.facts, change.facts).length === 0) return 'unchanged: nothing that matters to the label differs';
  return null;
}

export function shopChanged<R>(step: Step<R>, e: ShopChanged<R>): void {
  const shop = step.s.shop!;
  const kinds = differences(shop.facts, e.facts);
  shop.facts = { ...e.facts };
  shop.modifiedAt = e.modifiedAt;
  if (e.readAt !== undefined) shop.readAt = e.readAt;
  // Only a reading of an order to ship names its locations (a held or cancelled one says nothing of them).
  if (e.facts.status === 'open') shop.linesLeft = e.linesLeft === true;
  if (step.s.labelId === null) beforeLabel(step, e, kinds);
  else {
    afterLabel(step, kinds, e.labelRequest);
    // No second label for lines that left: the shop offers none for this location any more.
    if (shop.linesLeft === true && shop.offer !== null) {
      shop.offer = null;
      shop.offerSeq++;
    }
  }
}

function beforeLabel<R>(step: Step<R>, e: ShopChanged<R>, kinds: ShopChangeKind[]): void {
  const { s } = step;
  const shop = s.shop!;
  const taken = changeBeforeLabel(
    { connector: s.config.connector, phase: s.phase, madeFrom: shop.requestFacts },
    { facts: e.facts, kinds, mapped: e.labelRequest !== undefined, problems: e.problems === true },
  );
  shop.holdMayBeOurs = taken.holdMayBeOurs;
  shop.taken = taken;
  if (taken.ignored) return;
  if (taken.request === 'take') {
    shop.request = e.labelRequest!;
    shop.requestFacts = { address: e.facts.address, lines: e.facts.lines };
    shop.problems = false;
  } else if (taken.request === 'does_not_map') shop.problems = true;
  for (const kind of kinds) if (!shop.pending.includes(kind)) shop.pending.push(kind);
  if (s.labelCall !== null) {
    step.out.push({ type: 'stopLabelCall', revision: s.labelCall });
    return;
  }
  // A wait for correction ends at once; a hold ends when the order is released (or withdrawn).
  if (s.phase === 'awaiting_correction') return settleBeforeLabel(step);
  if (s.phase === 'held_in_shop' && e.facts.status !== 'on_hold') settleBeforeLabel(step);
}

/**
 * How a change before the label is taken. WooCommerce's `on-hold` read while a rejected label
 * awaits correction is most likely the connector's own write: it holds nothing (`ignored`, unless
 * the address or lines changed too). A changed address or lines becomes the next request when it
 * maps (`take`), or waits for an operator when it does not (`does_not_map`).
 */
export function changeBeforeLabel(
  shipment: { connector: string | null; phase: string; madeFrom: { address: string; lines: string } },
  change: {
    facts: { status: ShopOrderStatus; address: string; lines: string };
    kinds: readonly ShopChangeKind[];
    mapped: boolean;
    problems: boolean;
  },
): ChangeTaken {
  const { facts, kinds } = change;
  const holdMayBeOurs = facts.status === 'on_hold' && shipment.connector === 'woocommerce' && shipment.phase === 'awaiting_correction';
  const edited = kinds.includes('address') || kinds.includes('lines');
  if (holdMayBeOurs && !edited) return { holdMayBeOurs, ignored: true, request: null };
  const madeFrom = shipment.madeFrom;
  if (change.mapped && (madeFrom.address !== facts.address || madeFrom.lines !== facts.lines))
    return { holdMayBeOurs, ignored: false, request: 'take' };
  return { holdMayBeOurs, ignored: false, request: change.problems && edited ? 'does_not_map' : null };
}

/** After the label: an operator decides; nothing more is written to a cancelled order. */
export function afterLabel<R>(step: Step<R>, kinds: ShopChangeKind[], labelRequest: R | undefined): void {
  const { s } = step;
  const shop = s.shop!;
  const status = shop.facts.status;
  if (kinds.includes('address') || kinds.includes('lines')) {
    shop.offer = labelRequest ?? null;
    shop.offerSeq++;
  }
  leaveMarksAfterLabel(shop, kinds, status);
  if (isWithdrawn(status)) {
    step.out.push({ type: 'dropUntold' });
    // An operator's relabel in flight yields: its label is not bought when the call can still be stopped.
    const relabel = s.relabel;
    if (relabel?.stage === 'labelling' && !relabel.stopped) {
      relabel.stopped = true;
      step.out.push({ type: 'stopLabelCall', revision: relabel.revision });
    }
  }
}

/** The marks an operator reads: the current one, and the address or lines change not answered yet. */
export interface Marks {
  attention: Attention | null;
  changeMark?: Attention | null;
}

/**
 * The mark a merchant's change after the label leaves. A cancelled order outranks any other
 * mark; an address or lines change is marked until a relabel takes it or a person resolves it;
 * a hold's mark ends with the release, and the change it covered shows again.
 */
export function markAfterLabel(marks: Marks, kinds: readonly ShopChangeKind[], status: ShopOrderStatus): Required<Marks> {
  const silenced = marks.attention !== null && CANCELLED_MARKS.includes(marks.attention);
  const changeMark = kinds.includes('address') ? 'address_changed' : kinds.includes('lines') ? 'lines_changed' : (marks.changeMark ?? null);
  const next = (attention: Attention | null) => ({ attention: silenced ? marks.attention : attention, changeMark });
  if (isWithdrawn(status)) return next('cancelled_in_shop');
  if (kinds.includes('address') || kinds.includes('lines')) return next(changeMark);
  if (status === 'on_hold') return next('held_in_shop');
  return { attention: marks.attention === 'held_in_shop' ? changeMark : marks.attention, changeMark };
}

/** Leaves the marks of a change after the label (a state that never had a change mark gets one only once a change sets it). */
export function leaveMarksAfterLabel(marks: Marks, kinds: readonly ShopChangeKind[], status: ShopOrderStatus): void {
  const { attention, changeMark } = markAfterLabel(marks, kinds, status);
  markAttention(marks, attention);
  if (changeMark !== null || marks.changeMark !== undefined) marks.changeMark = changeMark;
}

/** A person closed the open mark: a change it names does not show again when a later hold is released. */
export function changeMarkAfterResolve(marks: Marks): Attention | null {
  return marks.attention === marks.changeMark ? null : (marks.changeMark ?? null);
}

export function attentionResolved<R>(step: Step<R>): void {
  const shop = step.s.shop!;
  shop.resolved = { attention: shop.attention!, modifiedAt: shop.modifiedAt };
  shop.changeMark = changeMarkAfterResolve(shop);
}
