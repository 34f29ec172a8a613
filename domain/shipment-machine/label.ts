/**
 * The label and the order read: one label per revision, a rejection waits for corrected data,
 * a change of the merchant while the call is out settles once it returns.
 */
import type { ShipmentEvent } from './events';
import { relabelCallEnded, relabelMade, relabelOrderRead } from './relabel';
import { afterLabel } from './shop';
import { awaitCorrection, finish, requestLabel, settleBeforeLabel, tell, type Step } from './step';
import { trackingBegins } from './tracking';
import { fails, labelMade, nextRevision } from './transitions';

type Ev<R, T extends ShipmentEvent<R>['type']> = Extract<ShipmentEvent<R>, { type: T }>;

export function started<R>(step: Step<R>): void {
  if (step.s.labelCall !== null || step.s.labelRequests > 0 || step.s.phase !== 'creating_label') return;
  if (step.s.shop) settleBeforeLabel(step);
  else requestLabel(step);
}

export function labelCreated<R>(step: Step<R>, e: Ev<R, 'labelCreated'>): void {
  const { s } = step;
  if (s.relabel?.stage === 'labelling' && e.revision === s.relabel.revision) return relabelMade(step, e.labelId);
  // Late or repeated: only the answer of the call out now counts.
  if (s.labelCall !== e.revision || s.labelId !== null) return;
  s.labelCall = null;
  s.labelId = e.labelId;
  s.lastError = null;
  labelMade(s);
  // A change that came while the call was out is judged as after the label.
  const shop = s.shop;
  if (shop) delete shop.taken;
  if (shop && shop.pending.length > 0) {
    const kinds = shop.pending;
    const request = shop.request;
    shop.pending = [];
    shop.request = null;
    shop.problems = false;
    afterLabel(step, kinds, request ?? undefined);
  }
  if (s.cancelRequested) return finish(step, 'cancelled_by_operator', 'cancelled by operator');
  step.out.push({ type: 'readOrder', labelId: e.labelId });
}

export function labelRejected<R>(step: Step<R>, e: Ev<R, 'labelRejected'>): void {
  const { s } = step;
  if (s.relabel?.stage === 'labelling' && e.revision === s.relabel.revision) return relabelCallEnded(step, e.kind);
  if (s.labelCall !== e.revision || s.labelId !== null) return;
  s.labelCall = null;
  if (!e.correctable) {
    fails(s);
    step.out.push({ type: 'fail', kind: e.kind });
    return;
  }
  s.lastError = e.kind;
  // A change that came meanwhile is settled first, untold: the rejection was of a request it
  // replaced, and a cancelled order is written to no more (WooCommerce would get a note).
  if (s.shop && s.shop.pending.length > 0) return settleBeforeLabel(step);
  tell(step, { type: 'label.rejected' });
  awaitCorrection(step);
  // An operator's cancel that came while the call was out ends the wait it would begin (the workflow's order: told, then ended).
  if (s.cancelRequested) finish(step, 'cancelled_by_operator', 'cancelled by operator');
}

export function labelCallStopped<R>(step: Step<R>, e: Ev<R, 'labelCallStopped'>): void {
  const { s } = step;
  if (s.relabel?.stage === 'labelling' && e.revision === s.relabel.revision) return relabelCallEnded(step, 'stopped');
  if (s.labelCall !== e.revision || s.labelId !== null) return;
  s.labelCall = null;
  if (s.shop && s.shop.pending.length > 0) return settleBeforeLabel(step);
  fails(s);
  step.out.push({ type: 'fail', kind: 'stopped' });
}

export function orderRead<R>(step: Step<R>, e: Ev<R, 'orderRead'>): void {
  const { s } = step;
  if (s.relabel?.stage === 'reading' && e.labelId === s.relabel.labelId) return relabelOrderRead(step, e.ok, e.trackingNumber);
  if (s.phase !== 'reading_order' || s.relabel || e.labelId !== s.labelId) return;
  if (!e.ok) s.lastError = 'order_not_read';
  knowsTrackingNumber(step, e.trackingNumber);
  trackingBegins(step, e.labelId);
  if (s.cancelRequested) {
    step.out.push({ type: 'unwatchTracking', labelId: e.labelId });
    s.watching = null;
    finish(step, 'cancelled_by_operator', 'cancelled by operator');
  }
}

/** Tracking starts from the number the label and its order brought (news is judged against it). */
export function knowsTrackingNumber<R>(step: Step<R>, trackingNumber: string | null | undefined): void {
  if (trackingNumber != null) step.s.tracking.trackingNumber = trackingNumber;
}

export function resubmitted<R>(step: Step<R>, e: Ev<R, 'resubmitted'>): void {
  const { s } = step;
  s.labelRequest = e.labelRequest;
  nextRevision(s);
  if (s.shop) settleBeforeLabel(step);
  else requestLabel(step);
}

export function correctionTimedOut<R>(step: Step<R>): void {
  finish(step, 'label_failed', 'no corrected label data before the correction timeout');
}

export function holdTimedOut<R>(step: Step<R>): void {
  finish(step, 'hold_timed_out', 'held in the shop for longer than the hold timeout');
}
