/** The operator's cancel: it ends the shipment wherever it waits; a call out returns first. */
import { finish, leaveAndFinish, type Step } from './step';

export function operatorCancelled<R>(step: Step<R>): void {
  const { s } = step;
  if (s.cancelRequested || s.phase === 'completed') return;
  s.cancelRequested = true;
  // A relabel in flight settles first (relabel.ts); a label or order call out answers first.
  if (s.relabel) return;
  if (s.phase === 'awaiting_correction' || s.phase === 'held_in_shop')
    return finish(step, 'cancelled_by_operator', 'cancelled by operator');
  if (s.phase === 'tracking') leaveAndFinish(step, 'cancelled_by_operator', 'cancelled by operator');
}
