/**
 * An operator's relabel from the shop's data (`resubmit --from-shop`): the shop's offer becomes
 * the label of the next revision. It yields to the merchant: a cancel while its label is made
 * stops the call, and a label that comes back for an order cancelled meanwhile is neither tracked
 * nor told (it is left to void). It clears only the mark it answers: a later change keeps its own.
 */
import { isWithdrawn, type ShopOrderStatus } from '../shop-order';
import type { ShipmentEvent } from './events';
import { CANCELLED_MARKS, type Attention, type MachineState } from './state';
import { leaveAndFinish, type Step } from './step';
import { applyNews, rejoin, trackingBegins } from './tracking';
import { labelAsked, labelMade, markAttention, nextRevision, tracks } from './transitions';

type Relabel = Extract<ShipmentEvent<unknown>, { type: 'relabelRequested' }>;

/** What a relabel's validator reads of a shipment (the machine's state, or the workflow's). */
export interface RelabelView {
  phase: string;
  outcome: string | null;
  labelId: string | null;
  relabelling: boolean;
  watched: boolean;
  shop: { attention: Attention | null; status: ShopOrderStatus; offered: boolean; modifiedAt: string } | null;
}

/** Why a relabel cannot be made now (null: it can). */
export function relabelRefusal<R>(s: MachineState<R>, e: Relabel): string | null {
  return relabelRefusalOf(
    {
      phase: s.phase,
      outcome: s.outcome,
      labelId: s.labelId,
      relabelling: s.relabel !== null,
      watched: s.watching !== null,
      shop: s.shop && {
        attention: s.shop.attention,
        status: s.shop.facts.status,
        offered: s.shop.offer !== null,
        modifiedAt: s.shop.modifiedAt,
      },
    },
    e.modifiedAt,
  );
}

export const RELABEL_IN_FLIGHT = 'a relabel is already being made';

/** Why a relabel from the shop's reading as of `modifiedAt` cannot be made now (null: it can). */
export function relabelRefusalOf(s: RelabelView, modifiedAt: string): string | null {
  const shop = s.shop;
  if (!shop) return 'this shipment was not started by a shop pull, so it has no data from the shop';
  if (s.phase === 'completed') return `the shipment has ended (${s.outcome})`;
  if ((shop.attention !== null && CANCELLED_MARKS.includes(shop.attention)) || isWithdrawn(shop.status))
    return `the order was ${isWithdrawn(shop.status) ? shop.status : 'cancelled'} in the shop`;
  if (s.labelId === null)
    return `the shipment has no label yet (${s.phase}): a change in the shop before the label is taken into it by itself`;
  if (s.relabelling) return RELABEL_IN_FLIGHT;
  if (s.phase !== 'tracking' || !s.watched) return `the shipment is ${s.phase}; try again in a moment`;
  if (!shop.offered) return "the shop offers no other label request: the order's address and lines are the label's";
  if (modifiedAt !== shop.modifiedAt)
    return `the order changed in the shop since it was read (as of ${modifiedAt}, now ${shop.modifiedAt}); run the command again`;
  return null;
}

/**
 * What the relabel's label does once it comes back: for an order the merchant cancelled
 * meanwhile it is left to void (never tracked nor told); else it is followed, and takes the offer
 * (and clears the mark) only when the merchant changed nothing meanwhile.
 */
export function relabelLabelBack(known: {
  status: ShopOrderStatus;
  offerUnchanged: boolean;
  readingUnchanged: boolean;
}): { kind: 'left_to_void'; attention: Attention } | { kind: 'followed'; takesOffer: boolean; clearsMark: boolean } {
  if (isWithdrawn(known.status)) return { kind: 'left_to_void', attention: 'cancelled_label_to_void' };
  return { kind: 'followed', takesOffer: known.offerUnchanged, clearsMark: known.offerUnchanged && known.readingUnchanged };
}

export function relabelRequested<R>(step: Step<R>): void {
  const { s } = step;
  const shop = s.shop!;
  nextRevision(s);
  s.relabel = {
    revision: s.revision,
    offer: shop.offer!,
    offerSeq: shop.offerSeq,
    modifiedAt: shop.modifiedAt,
    replaces: s.labelId!,
    stage: 'labelling',
    labelId: null,
    stopped: false,
  };
  labelAsked(s);
  s.labelRequests++;
  step.out.push({ type: 'createLabel', revision: s.revision, labelRequest: shop.offer!, fromOffer: true });
}

/** The relabel's label came back. */
export function relabelMade<R>(step: Step<R>, labelId: string): void {
  const { s } = step;
  const relabel = s.relabel!;
  const shop = s.shop!;
  // The run ended meanwhile (a Temporal cancellation): nothing follows the label; it is left to void.
  if (s.phase === 'completed') {
    s.labelsToVoid.push(labelId);
    return endedWithRun(step, false);
  }
  const back = relabelLabelBack({
    status: shop.facts.status,
    offerUnchanged: shop.offerSeq === relabel.offerSeq,
    readingUnchanged: shop.modifiedAt === relabel.modifiedAt,
  });
  if (back.kind === 'left_to_void') {
    s.labelsToVoid.push(labelId);
    markAttention(shop, back.attention);
    return notMade(step, 'cancelled_in_shop');
  }
  s.replacedLabels.push(relabel.replaces);
  s.labelId = labelId;
  s.lastError = null;
  s.tracking = { tag: null, subtag: null, subtagMessage: null, trackingNumber: null, checkpoints: 0, lastCheckpointTime: null };
  s.labelRequest = relabel.offer;
  labelMade(s);
  // Taken: unless the merchant changed the order again meanwhile (a newer offer, and its mark, stay for the operator).
  if (back.takesOffer) {
    shop.offer = null;
    shop.changeMark = null;
  }
  if (back.clearsMark) markAttention(shop, null);
  relabel.stage = 'reading';
  relabel.labelId = labelId;
  step.out.push({ type: 'readOrder', labelId });
}

/** The relabel's call ended without a label (refused, or stopped by the merchant's cancel or the run's end). */
export function relabelCallEnded<R>(step: Step<R>, kind: string): void {
  const cancelled = step.s.relabel!.stopped && isWithdrawn(step.s.shop!.facts.status);
  const error = cancelled ? 'cancelled_in_shop' : kind;
  if (step.s.phase !== 'completed') return notMade(step, error);
  step.s.lastError = error;
  endedWithRun(step, false);
}

/** The new label's order was read: tracking moves to it. */
export function relabelOrderRead<R>(step: Step<R>, ok: boolean, trackingNumber?: string | null): void {
  const { s } = step;
  const relabel = s.relabel!;
  if (!ok) s.lastError = 'order_not_read';
  if (trackingNumber != null) s.tracking.trackingNumber = trackingNumber;
  // The run ended meanwhile: the label stays the shipment's, tracking does not move to it and the shop hears nothing.
  if (s.phase === 'completed') return endedWithRun(step, true);
  if (s.watching !== null) step.out.push({ type: 'unwatchTracking', labelId: s.watching });
  s.watching = null;
  s.relabel = null;
  trackingBegins(step, relabel.labelId!, relabel.replaces);
  step.out.push({ type: 'relabelEnded', made: true });
  afterRelabel(step);
}

/**
 * The relabel's answer came after its run ended (a Temporal cancellation, `runEnded`): the
 * relabel ends (its update gets its answer), and nothing else is decided: the shipment stays
 * ended, joins no tracking, tells the shop nothing, and what tracking held back is dropped.
 */
function endedWithRun<R>(step: Step<R>, made: boolean): void {
  step.s.relabel = null;
  step.s.deferred = { news: [], deadline: null, lost: false };
  step.out.push({ type: 'relabelEnded', made });
}

/** No new label tracked: the old one still is (the revision is used up either way). */
function notMade<R>(step: Step<R>, error: string): void {
  const { s } = step;
  s.lastError = error;
  tracks(s);
  s.relabel = null;
  step.out.push({ type: 'relabelEnded', made: false });
  afterRelabel(step);
}

/** What tracking held back while the relabel was made, in the order the tracking loop takes it. */
function afterRelabel<R>(step: Step<R>): void {
  const { s } = step;
  const { news, deadline, lost } = s.deferred;
  s.deferred = { news: [], deadline: null, lost: false };
  if (s.cancelRequested) return leaveAndFinish(step, 'cancelled_by_operator', 'cancelled by operator');
  if (deadline !== null && deadline === s.wait)
    return leaveAndFinish(step, 'tracking_timed_out', 'no terminal tag within the tracking time');
  if (lost) rejoin(step);
  for (const n of news) {
    if (s.phase === 'completed') return;
    applyNews(step, n.labelId, n.change, n.failed);
  }
}
