/**
 * The merchant's changes (cancel, refund, hold, release, address, lines), by phase. Before the
 * label a change is acted on: the call out is stopped and the label step settles it. After the
 * label nothing is voided (the API has none): the shipment is marked for an operator, a cancelled
 * order is written to no more, and an operator's relabel in flight yields.
 */
import { differences, isWithdrawn, type ShopChangeKind } from '../shop-order';
import type { ShipmentEvent } from './events';
import { silenced, type Attention } from './state';
import { settleBeforeLabel, type Step } from './step';

type ShopChanged<R> = Extract<ShipmentEvent<R>, { type: 'shopChanged' }>;

/** Why a reading is not taken (null: taken): the shipment ended, stale, or nothing that matters differs. */
export function shopChangeRefusal<R>(s: Step<R>['s'], e: ShopChanged<R>): string | null {
  if (!s.shop) return 'this shipment was not started by a shop pull: it has no order facts to compare';
  if (s.phase === 'completed') return 'the shipment has ended';
  if (e.modifiedAt < s.shop.modifiedAt) return `stale: read as of ${e.modifiedAt}, the shipment knows the order as of ${s.shop.modifiedAt}`;
  if (differences(s.shop.facts, e.facts).length === 0) return 'unchanged: nothing that matters to the label differs';
  return null;
}

export function shopChanged<R>(step: Step<R>, e: ShopChanged<R>): void {
  const shop = step.s.shop!;
  const kinds = differences(shop.facts, e.facts);
  shop.facts = { ...e.facts };
  shop.modifiedAt = e.modifiedAt;
  if (step.s.labelId === null) beforeLabel(step, e, kinds);
  else afterLabel(step, kinds, e.labelRequest);
}

function beforeLabel<R>(step: Step<R>, e: ShopChanged<R>, kinds: ShopChangeKind[]): void {
  const { s } = step;
  const shop = s.shop!;
  const status = e.facts.status;
  shop.holdMayBeOurs = status === 'on_hold' && s.config.connector === 'woocommerce' && s.phase === 'awaiting_correction';
  if (shop.holdMayBeOurs && !kinds.includes('address') && !kinds.includes('lines')) return;
  const madeFrom = shop.requestFacts;
  if (e.labelRequest !== undefined && (madeFrom.address !== e.facts.address || madeFrom.lines !== e.facts.lines)) {
    shop.request = e.labelRequest;
    shop.requestFacts = { address: e.facts.address, lines: e.facts.lines };
    shop.problems = false;
  } else if (e.problems && (kinds.includes('address') || kinds.includes('lines'))) {
    shop.problems = true;
  }
  for (const kind of kinds) if (!shop.pending.includes(kind)) shop.pending.push(kind);
  if (s.labelCall !== null) {
    step.out.push({ type: 'stopLabelCall', revision: s.labelCall });
    return;
  }
  // A wait for correction ends at once; a hold ends when the order is released (or withdrawn).
  if (s.phase === 'awaiting_correction') return settleBeforeLabel(step);
  if (s.phase === 'held_in_shop' && status !== 'on_hold') settleBeforeLabel(step);
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
  if (isWithdrawn(status)) {
    attend(step, 'cancelled_in_shop');
    step.out.push({ type: 'dropUntold' });
    // An operator's relabel in flight yields: its label is not bought when the call can still be stopped.
    const relabel = s.relabel;
    if (relabel?.stage === 'labelling' && !relabel.stopped) {
      relabel.stopped = true;
      step.out.push({ type: 'stopLabelCall', revision: relabel.revision });
    }
    return;
  }
  if (kinds.includes('address') || kinds.includes('lines')) {
    shop.changeMark = kinds.includes('address') ? 'address_changed' : 'lines_changed';
    attend(step, shop.changeMark);
  } else if (status === 'on_hold') attend(step, 'held_in_shop');
  // Released after the label: the hold's mark ends with it, and a change it covered shows again.
  else if (shop.attention === 'held_in_shop') shop.attention = shop.changeMark;
}

/** A cancelled order outranks any other mark. */
function attend<R>(step: Step<R>, attention: Attention): void {
  if (!silenced(step.s)) step.s.shop!.attention = attention;
}

export function attentionResolved<R>(step: Step<R>): void {
  const shop = step.s.shop!;
  shop.resolved = { attention: shop.attention!, modifiedAt: shop.modifiedAt };
  // A change a person closed does not show again when a later hold is released.
  if (shop.attention === shop.changeMark) shop.changeMark = null;
}
