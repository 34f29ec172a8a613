/**
 * The shipment's decisions as they were before the three fixes of issue 45, transcribed from the
 * workflow code of that time, behind the machine's interface, so the model-based test can show
 * that it finds each defect. Test-only: nothing in the product imports it.
 *
 * 1. relabel.ts without RELABEL_YIELDS_TO_SHOP: the merchant's cancel does not stop the
 *    relabel's call, and the label that comes back is tracked and told; when the offer it took is
 *    still the shop's, the mark is cleared whatever the merchant did meanwhile.
 * 2. fleet-tracking.ts without TERMINAL_ANSWER_ENDS_TRACKING: only news by checkpoint count is applied.
 * 3. fleet-tracking.ts without TRACKING_REJOINS: the reconciler's word is ignored.
 *
 * And two the model test found in today's workflow code (fixed in the machine only):
 * 4. label.ts `makeLabel`: a courier rejection of an attempt already out when the merchant
 *    cancelled is told to the shop (`label.rejected`) before the cancel is settled.
 * 5. shop-changes.ts `afterLabel`: a release clears `held_in_shop`, and with it the mark of an
 *    address or lines change the hold had covered (the offer stays, unmarked).
 *
 * And one of issue 45 fixed after them:
 * 6. shop.ts `shopChangeRefusalOf` without the read order: only an older `modifiedAt` is stale,
 *    so of two readings within one second (the platforms' times are to the second) the one read
 *    earlier is taken when it arrives last.
 */
import { outcomeOfTag } from '../../domain/shipment';
import { isNews } from '../../domain/tracking';
import { handlers, machineOf, refusals, type Handlers, type ShipmentMachine } from '../../domain/shipment-machine';
import type { Step } from '../../domain/shipment-machine/step';
import { awaitCorrection, finish, settleBeforeLabel, tell } from '../../domain/shipment-machine/step';
import { differences } from '../../domain/shop-order';
import { shopChangeRefusal } from '../../domain/shipment-machine/shop';

export type Defect =
  | 'relabel erases cancel'
  | 'terminal answer ignored'
  | 'shard loss ignored'
  | 'rejection told to a cancelled order'
  | 'release erases a change mark'
  | 'same-second reading out of order';

export function machineBefore<R>(defects: readonly Defect[]): ShipmentMachine<R> {
  const rules: Handlers<R> = { ...handlers<R>() };
  const today = handlers<R>();
  if (defects.includes('relabel erases cancel')) {
    rules.shopChanged = (step, e) => {
      const relabel = step.s.relabel;
      const stopped = relabel?.stopped ?? false;
      today.shopChanged(step, e);
      // `afterLabel` without the patch: the relabel's call in flight is not cancelled.
      if (relabel && step.s.relabel) {
        step.s.relabel.stopped = stopped;
        step.out = step.out.filter((c) => !(c.type === 'stopLabelCall' && c.revision === relabel.revision));
      }
    };
    rules.labelCreated = (step, e) => {
      const relabel = step.s.relabel;
      if (relabel?.stage === 'labelling' && e.revision === relabel.revision) return relabelMadeBefore(step, e.labelId);
      today.labelCreated(step, e);
    };
  }
  if (defects.includes('terminal answer ignored')) {
    rules.trackingNews = (step, e) => {
      const { s } = step;
      if (s.relabel) return void s.deferred.news.push({ labelId: e.labelId, change: e.change, failed: e.failed });
      if (s.phase !== 'tracking' || e.labelId !== s.labelId) return;
      if (e.failed) return void (s.lastError = 'tracking_failed');
      if (!e.change || !isNews(s.tracking, e.change)) return;
      applyChangeBefore(step, e.change);
    };
  }
  if (defects.includes('shard loss ignored')) rules.trackingLost = () => undefined;
  if (defects.includes('rejection told to a cancelled order')) {
    // label.ts `makeLabel`: `rejected(run, err)` tells the shop, then `awaitCorrection` returns at once for the change.
    rules.labelRejected = (step, e) => {
      const { s } = step;
      if (s.relabel || !e.correctable || s.labelCall !== e.revision || s.labelId !== null) return today.labelRejected(step, e);
      s.labelCall = null;
      s.lastError = e.kind;
      tell(step, { type: 'label.rejected' });
      if (s.shop && s.shop.pending.length > 0) return settleBeforeLabel(step);
      awaitCorrection(step);
    };
  }
  if (defects.includes('release erases a change mark')) {
    // shop-changes.ts `afterLabel`: `else if (attention === 'held_in_shop') attention = null`.
    rules.shopChanged = (step, e) => {
      const shop = step.s.shop;
      const kinds = shop ? differences(shop.facts, e.facts) : [];
      const released =
        step.s.labelId !== null &&
        shop?.attention === 'held_in_shop' &&
        e.facts.status === 'open' &&
        !kinds.includes('address') &&
        !kinds.includes('lines');
      today.shopChanged(step, e);
      if (released) step.s.shop!.attention = null;
    };
  }
  const validators = refusals<R>();
  if (defects.includes('same-second reading out of order')) {
    // shopChangeRefusalOf before `readAt`: stale only when `modifiedAt` is older.
    validators.shopChanged = (s, e) => shopChangeRefusal(s, withoutReadOrder(e));
  }
  return machineOf(rules, validators);
}

/** The reading as the rule before the fix saw it: no read order. */
function withoutReadOrder<E extends { readAt?: string }>(e: E): E {
  const { readAt: _readAt, ...rest } = e;
  return rest as E;
}

/** relabel.ts after its label came back, before the fix. */
function relabelMadeBefore<R>(step: Step<R>, labelId: string): void {
  const { s } = step;
  const relabel = s.relabel!;
  const shop = s.shop!;
  s.replacedLabels.push(relabel.replaces);
  s.labelId = labelId;
  s.lastError = null;
  s.tracking = { tag: null, subtag: null, subtagMessage: null, trackingNumber: null, checkpoints: 0, lastCheckpointTime: null };
  s.labelRequest = relabel.offer;
  s.phase = 'reading_order';
  // `if (shopOrder.offer === offer) { offer = null; attention = null }`
  if (shop.offerSeq === relabel.offerSeq) {
    shop.offer = null;
    shop.changeMark = null;
    shop.attention = null;
  }
  relabel.stage = 'reading';
  relabel.labelId = labelId;
  step.out.push({ type: 'readOrder', labelId });
}

function applyChangeBefore<R>(
  step: Step<R>,
  change: NonNullable<Extract<Parameters<Handlers<R>['trackingNews']>[1], object>['change']>,
): void {
  const { s } = step;
  const before = { tag: s.tracking.tag, subtag: s.tracking.subtag, trackingNumber: s.tracking.trackingNumber };
  s.tracking = {
    tag: change.tag,
    subtag: change.subtag,
    subtagMessage: change.subtagMessage ?? null,
    trackingNumber: change.trackingNumber ?? before.trackingNumber,
    checkpoints: change.checkpoints,
    lastCheckpointTime: change.lastCheckpointTime ?? s.tracking.lastCheckpointTime,
  };
  const now = s.tracking;
  if (now.tag !== before.tag || now.subtag !== before.subtag || (before.trackingNumber === null && now.trackingNumber !== null))
    tell(step, { type: 'tracking.updated' });
  if (now.tag !== null && s.config.terminalTags.includes(now.tag)) {
    s.watching = null;
    finish(step, outcomeOfTag(now.tag), `tracking reached ${now.tag}`);
  }
}
