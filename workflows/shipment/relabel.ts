/**
 * After the label, an operator's relabel from the shop's data (`resubmit --from-shop`): the
 * merchant corrected the address (or lines) after the label was made, and the label request the
 * shop now gives (its `offer`, shop-changes.ts) becomes the label of the next revision, with the
 * key of that revision as a correction's would be. Nothing is voided (the API has no void): the
 * old label stays bought and its parcel is the operator's to stop; its tracking is no longer
 * followed. The update's handler makes the label, reads its order, moves the shipment's poller
 * membership to it and tells the shop; tracking (tracking.ts) follows the new label
 * from then on.
 */
import { CancellationScope, log } from '@temporalio/workflow';
import { type RecordedError, type RelabelFromShop, type RelabelResult } from '../../workflow-definitions/shipment';
import { isWithdrawn } from '../../domain/shop-order';
import { relabelLabelBack, relabelRefusalOf } from '../../domain/shipment-machine/relabel';
import { recordError, shippingErrorOf } from './failures';
import * as label from './label';
import * as order from './order';
import type { ShipmentShell } from './shell';
import { applyLabel } from './state';
import { join, unwatch } from './tracking';
import { markAttention, nextRevision, tracks } from '../../domain/shipment-machine/transitions';

const refused = (why: string) => new Error(`cannot relabel from the shop: ${why}`);

/** The update's validator: refuses (writing nothing to the history) unless a relabel can be made now. */
export function validateRelabel(run: ShipmentShell, request: RelabelFromShop): void {
  if (typeof request?.modifiedAt !== 'string' || request.modifiedAt.length > 40)
    throw new Error('invalid relabel: modifiedAt: must be a date');
  if (request.reason !== undefined && (typeof request.reason !== 'string' || request.reason.length > 500))
    throw new Error('invalid relabel: reason: must be a string of at most 500 characters');
  const { state } = run;
  const shopOrder = state.shopOrder;
  const why = relabelRefusalOf(
    {
      phase: state.phase,
      outcome: state.outcome,
      labelId: state.labelId,
      relabelling: run.relabelling,
      watched: state.trackingPoller !== undefined,
      shop: shopOrder
        ? {
            attention: shopOrder.attention,
            status: shopOrder.facts.status,
            offered: shopOrder.offer !== null,
            modifiedAt: shopOrder.modifiedAt,
          }
        : null,
    },
    request.modifiedAt,
  );
  if (why !== null) throw refused(why);
}

/**
 * The update: the next revision's label from the offer. Answers once the shipment tracks it, or
 * (the label refused, e.g. a courier rejection) with the error, the old label still tracked and
 * the offer kept. The revision is used up either way: its key names exactly one request.
 */
export async function relabelFromShop(run: ShipmentShell, request: RelabelFromShop): Promise<RelabelResult> {
  const { state } = run;
  const shopOrder = state.shopOrder!;
  const offer = shopOrder.offer!;
  const replaced = { labelId: state.labelId!, revision: state.revision, trackingNumber: state.trackingNumber };
  log.info('relabel from the shop', { orderId: state.orderId, shop: state.shop, replaces: replaced.labelId, reason: request.reason });
  run.relabelling = true;
  // The machine hears of the relabel as it goes (its label, its order), so tracking, decided by the
  // machine, follows the new label; the label and the read are made here (all it asks at each step).
  run.decide({ type: 'relabelRequested', modifiedAt: request.modifiedAt }, (commands) => commands.length);
  // The validator read the workflow's state; the machine refusing it too would leave tracking on the old label.
  if (run.machine.relabel === null)
    log.warn('relabel from the shop: the shipment machine refused what the workflow took', { orderId: state.orderId, shop: state.shop });
  let answered = false;
  try {
    nextRevision(state);
    const answer = { revision: state.revision, replaced: { labelId: replaced.labelId, trackingNumber: replaced.trackingNumber } };
    const next = label.nextRequest(run, offer);
    const modifiedAt = shopOrder.modifiedAt;
    // Cancelled when the merchant cancels the order meanwhile (shop-changes.ts): an attempt already sent finishes first.
    const scope = new CancellationScope();
    run.relabelScope = scope;
    let made;
    try {
      made = await scope.run(() => run.callApi('createLabel', `${next.summary}, from the shop's order`, next.input));
    } catch (err) {
      answered = true;
      // A stopped or refused call: tracking of the old label goes on (the machine says so too).
      run.decide(
        scope.consideredCancelled
          ? { type: 'labelCallStopped', revision: state.revision }
          : { type: 'labelRejected', revision: state.revision, correctable: true, kind: shippingErrorOf(err)?.kind ?? 'failed' },
      );
      const failure = shippingErrorOf(err);
      // The merchant's cancel stopped the call: it ends cancelled or with the failure of the attempt that was out.
      if (scope.consideredCancelled && isWithdrawn(shopOrder.facts.status))
        return notMade(run, answer, failure?.idempotencyKey ?? null, {
          kind: 'cancelled_in_shop',
          message: `the order was ${shopOrder.facts.status} in the shop while the label was being made: no label was bought`,
          at: new Date().toISOString(),
        });
      if (!failure) throw err;
      log.warn('relabel from the shop refused: the old label is still tracked', { orderId: state.orderId, error: failure.message });
      return notMade(run, answer, failure.idempotencyKey ?? null, recordError(failure));
    } finally {
      run.relabelScope = null;
    }
    answered = true;
    // The machine reads the order of a label it follows (done below); one left to void goes no further.
    run.decide({ type: 'labelCreated', revision: state.revision, labelId: made.labelId }, (commands) =>
      commands[0]?.type === 'readOrder' ? 1 : 0,
    );
    // What the label does now is the shipment machine's decision (domain/shipment-machine/relabel.ts).
    const back = relabelLabelBack({
      status: shopOrder.facts.status,
      offerUnchanged: shopOrder.offer === offer,
      readingUnchanged: shopOrder.modifiedAt === modifiedAt,
    });
    // Bought, but the merchant cancelled the order meanwhile: never tracked, never told to the shop.
    if (back.kind === 'left_to_void') {
      shopOrder.labelsToVoid = [
        ...(shopOrder.labelsToVoid ?? []),
        { labelId: made.labelId, revision: state.revision, idempotencyKey: made.idempotencyKey, at: new Date().toISOString() },
      ];
      markAttention(shopOrder, back.attention);
      log.warn('relabel from the shop: the order was cancelled while its label was made; the label is unused', {
        orderId: state.orderId,
        labelId: made.labelId,
      });
      return notMade(run, answer, made.idempotencyKey, {
        kind: 'cancelled_in_shop',
        message: `the order was ${shopOrder.facts.status} in the shop while the label was being made: label ${made.labelId} was bought and is unused; void it with the courier`,
        at: new Date().toISOString(),
      });
    }
    forgetTracking(run);
    state.replacedLabels = [...(state.replacedLabels ?? []), { ...replaced, replacedAt: new Date().toISOString() }];
    applyLabel(run.state, made);
    run.labelRequest = offer;
    // Taken: unless the merchant changed the order again meanwhile (a newer offer, and its mark, stay for the operator).
    if (back.takesOffer) {
      shopOrder.offer = null;
      if (shopOrder.changeMark) shopOrder.changeMark = null;
    }
    if (back.clearsMark) markAttention(shopOrder, null);
    let read = true;
    try {
      order.read(run, await run.callApi('readOrder', `Read order ${made.labelId}`, made.labelId, ...run.onAccount()));
    } catch (err) {
      read = false;
      order.notRead(run, err);
    }
    // Tracking moves to the new label: the moves are made below; what the machine held back meanwhile (an operator's stop) is queued for tracking.
    run.decide(
      { type: 'orderRead', labelId: made.labelId, ok: read, trackingNumber: state.trackingNumber },
      (commands) => commands.findIndex((c) => c.type === 'startDeadline') + 1,
    );
    // Tracking moves over: the old label's membership ends, the new label's begins (a shard of today's count).
    await unwatch(run);
    state.trackingPoller = undefined;
    order.trackingBegins(run, made.labelId, replaced);
    const deadline = Date.parse(state.trackingStartedAt!) + run.policy.maxTrackingMs;
    state.trackingPoller = (await join(run, made.labelId, deadline)).poller;
    run.publish();
    return {
      ...answer,
      labelCreated: true,
      labelId: made.labelId,
      idempotencyKey: made.idempotencyKey,
      trackingNumber: state.trackingNumber,
      error: null,
    };
  } finally {
    // A call that ended in a failure the update throws: the relabel is over for the machine too.
    if (!answered) run.decide({ type: 'labelRejected', revision: state.revision, correctable: true, kind: 'failed' });
    run.relabelling = false;
  }
}

/** No new label tracked: the old one still is (the revision is used up either way). */
function notMade(
  run: ShipmentShell,
  answer: Pick<RelabelResult, 'revision' | 'replaced'>,
  idempotencyKey: string | null,
  error: RecordedError,
): RelabelResult {
  const { state } = run;
  state.lastError = error;
  tracks(state);
  run.publish();
  return { ...answer, labelCreated: false, labelId: null, idempotencyKey, trackingNumber: null, error };
}

/** What the shipment knew of the old label's tracking: the new label starts from nothing. */
function forgetTracking(run: ShipmentShell): void {
  const { state } = run;
  Object.assign(state, { trackingNumber: null, tag: null, subtag: null, subtagMessage: null, lastCheckpoint: null, labelUrl: null });
  state.checkpoints = 0;
  state.lastPolledAt = null;
}
