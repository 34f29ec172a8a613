/** The operations every decision shares: ask for a label, tell the shop, start a wait, finish. */
import type { OutcomeKind } from '../shipment';
import { isWithdrawn, type ShopOrderStatus } from '../shop-order';
import type { ShipmentCommand, ShopEventDecision } from './commands';
import type { Deadline } from './events';
import { silenced, type MachineState } from './state';
import { correctionAwaited, ends, heldInShop, labelAsked, nextRevision } from './transitions';

/** One decision in progress: a copy of the state to change and the commands it returns. */
export interface Step<R> {
  s: MachineState<R>;
  out: ShipmentCommand<R>[];
}

/** Tells the shop, unless the merchant cancelled the order after its label. */
export function tell<R>(
  step: Step<R>,
  event: Omit<ShopEventDecision, 'seq' | 'revision' | 'labelId' | 'tag'> & Partial<ShopEventDecision>,
): void {
  const { s } = step;
  if (silenced(s)) return;
  s.told++;
  step.out.push({
    type: 'tellShop',
    event: { seq: s.told, revision: s.revision, labelId: s.labelId, tag: s.tracking.tag, ...event },
  });
}

export function startDeadline<R>(step: Step<R>, deadline: Deadline): void {
  step.s.wait++;
  step.out.push({ type: 'startDeadline', deadline, wait: step.s.wait });
}

export function finish<R>(step: Step<R>, outcome: OutcomeKind, reason: string): void {
  const { s } = step;
  ends(s, outcome);
  s.labelCall = null;
  tell(step, { type: 'shipment.completed', outcome });
  step.out.push({ type: 'finish', outcome, reason });
}

/** Leaves the tracking shard (when it holds a membership) and finishes. */
export function leaveAndFinish<R>(step: Step<R>, outcome: OutcomeKind, reason: string): void {
  const { s } = step;
  if (s.watching !== null) step.out.push({ type: 'unwatchTracking', labelId: s.watching });
  s.watching = null;
  finish(step, outcome, reason);
}

/** The label of the current revision is asked for. */
export function requestLabel<R>(step: Step<R>): void {
  const { s } = step;
  labelAsked(s);
  s.labelRequests++;
  s.labelCall = s.revision;
  step.out.push({ type: 'createLabel', revision: s.revision, labelRequest: s.labelRequest, fromOffer: false });
}

/** Why a parcel whose lines all moved to other locations before its label ends without one. */
export const LINES_LEFT_REASON = 'its lines moved to another location in the shop before its label: no label';

/** What comes before the next label request. */
export type BeforeLabel =
  | 'cancelled_by_operator'
  | 'cancelled_in_shop'
  | 'lines_left'
  | 'wait_for_release'
  | 'wait_for_operator'
  | 'take_changed_order'
  | 'request_label';

/**
 * Before each label request: stops for an operator's cancel or a withdrawn order, waits out a
 * hold, waits for an operator when the changed order does not map, and takes a changed one into
 * the request (a new revision, so the key never names two different requests). The workflow's
 * label step asks the same.
 */
export function nextBeforeLabel(known: {
  cancelRequested: boolean;
  status: ShopOrderStatus | null;
  holdMayBeOurs: boolean;
  problems: boolean;
  changedRequest: boolean;
  /** A parcel of a split order: the merchant moved every line of its location to others (split-parcels.ts). */
  linesLeft?: boolean;
}): BeforeLabel {
  if (known.cancelRequested) return 'cancelled_by_operator';
  if (known.status !== null && isWithdrawn(known.status)) return 'cancelled_in_shop';
  // No label for a parcel whose lines all left: another parcel ships them.
  if (known.linesLeft === true) return 'lines_left';
  if (known.status === 'on_hold' && !known.holdMayBeOurs) return 'wait_for_release';
  if (known.problems) return 'wait_for_operator';
  return known.changedRequest ? 'take_changed_order' : 'request_label';
}

export function settleBeforeLabel<R>(step: Step<R>): void {
  const { s } = step;
  const shop = s.shop;
  if (shop) shop.pending = [];
  const next = nextBeforeLabel({
    cancelRequested: s.cancelRequested,
    status: shop?.facts.status ?? null,
    holdMayBeOurs: shop?.holdMayBeOurs ?? false,
    problems: shop?.problems ?? false,
    changedRequest: shop?.request != null,
    linesLeft: shop?.linesLeft === true,
  });
  switch (next) {
    case 'cancelled_by_operator':
      return finish(step, 'cancelled_by_operator', 'cancelled by operator');
    case 'cancelled_in_shop':
      return finish(step, 'cancelled_in_shop', `the order was ${shop!.facts.status} in the shop before its label`);
    case 'lines_left':
      return finish(step, 'cancelled_in_shop', LINES_LEFT_REASON);
    case 'wait_for_release':
      heldInShop(s);
      if (!shop!.heldSince) {
        shop!.heldSince = true;
        startDeadline(step, 'hold');
      }
      return;
    case 'wait_for_operator':
      shop!.heldSince = false;
      shop!.problems = false;
      s.lastError = 'shop_change_rejected';
      return awaitCorrection(step);
    case 'take_changed_order':
      shop!.heldSince = false;
      s.labelRequest = shop!.request!;
      shop!.request = null;
      nextRevision(s);
      return requestLabel(step);
    case 'request_label':
      if (shop) shop.heldSince = false;
      return requestLabel(step);
  }
}

export function awaitCorrection<R>(step: Step<R>): void {
  correctionAwaited(step.s);
  startDeadline(step, 'correction');
}
