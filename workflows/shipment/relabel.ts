/**
 * After the label, an operator's relabel from the shop's data (`resubmit --from-shop`): the
 * merchant corrected the address (or lines) after the label was made, and the label request the
 * shop now gives (its `offer`, shop-changes.ts) becomes the label of the next revision, with the
 * key of that revision as a correction's would be. Nothing is voided (the API has no void): the
 * old label stays bought and its parcel is the operator's to stop; its tracking is no longer
 * followed. The shipment machine decides each step (domain/shipment-machine/relabel.ts); the
 * update's handler carries out its commands (make the label, read its order, move the shipment's
 * poller membership to it and tell the shop) and feeds back each answer; tracking (tracking.ts)
 * follows the new label from then on.
 */
import { CancellationScope, log } from '@temporalio/workflow';
import type { CreatedLabel } from '../../activities/shipping-api';
import { type RecordedError, type RelabelFromShop, type RelabelResult } from '../../workflow-definitions/shipment';
import { RELABEL_IN_FLIGHT } from '../../domain/shipment-machine/relabel';
import { recordError, shippingErrorOf } from './failures';
import * as label from './label';
import * as order from './order';
import type { Machine, MachineCommand, MachineEvent, ShipmentShell } from './shell';
import { applyLabel } from './state';
import { join, unwatch } from './tracking';

const refused = (why: string) => new Error(`cannot relabel from the shop: ${why}`);

/** The update's validator: refuses (writing nothing to the history) unless a relabel can be made now, as the workflow and its machine know the shipment. */
export function validateRelabel(run: Pick<ShipmentShell, 'refusal' | 'relabelling'>, request: RelabelFromShop): void {
  if (typeof request?.modifiedAt !== 'string' || request.modifiedAt.length > 40)
    throw new Error('invalid relabel: modifiedAt: must be a date');
  if (request.reason !== undefined && (typeof request.reason !== 'string' || request.reason.length > 500))
    throw new Error('invalid relabel: reason: must be a string of at most 500 characters');
  // The machine makes the relabel and refuses from its own state: one it took is one it can make.
  const why = run.refusal({ type: 'relabelRequested', modifiedAt: request.modifiedAt });
  if (why !== null) throw refused(why);
  // Its relabel ended, the handler still moves tracking over: one relabel at a time (in the machine's words).
  if (run.relabelling) throw refused(RELABEL_IN_FLIGHT);
}

/** What the handler learnt carrying out the relabel's commands: the answer it gives. */
interface Relabel {
  replaced: { labelId: string; revision: number; trackingNumber: string | null };
  /** The label bought (followed, or left to void). */
  made: CreatedLabel | null;
  /** The call's failure (stopped by the merchant's cancel, or refused). */
  failed: unknown;
  /** Tracking of the new label began (the shop is told, unless the order was cancelled there). */
  begun: boolean;
  /** The order read failed with something other than the shipping API's error: thrown once tracking moved over. */
  readThrew: { err: unknown } | null;
}

/**
 * The update: the next revision's label from the offer. Answers once the shipment tracks it, or
 * (the label refused, e.g. a courier rejection) with the error, the old label still tracked and
 * the offer kept. The revision is used up either way: its key names exactly one request.
 */
export async function relabelFromShop(run: ShipmentShell, request: RelabelFromShop): Promise<RelabelResult> {
  const { state } = run;
  const replaced = { labelId: state.labelId!, revision: state.revision, trackingNumber: state.trackingNumber };
  log.info('relabel from the shop', { orderId: state.orderId, shop: state.shop, replaces: replaced.labelId, reason: request.reason });
  run.relabelling = true;
  const relabel: Relabel = {
    replaced,
    made: null,
    failed: undefined,
    readThrew: null,
    begun: false,
  };
  try {
    run.decide({ type: 'relabelRequested', modifiedAt: request.modifiedAt });
    for (;;) {
      const commands = run.takeRelabelCommands();
      // The validator asked the machine: it refuses nothing it took.
      if (commands.length === 0) throw refused('the shipment machine did not take it');
      for (const c of commands) {
        const ended = await carryOut(run, c, relabel);
        if (ended) return ended;
      }
    }
  } finally {
    settleThrown(run);
    run.relabelling = false;
  }
}

/** One of the machine's commands for the relabel; its end gives the update's answer. */
async function carryOut(run: ShipmentShell, c: MachineCommand, relabel: Relabel): Promise<RelabelResult | undefined> {
  const { state } = run;
  switch (c.type) {
    case 'createLabel':
      run.decide(await makeLabel(run, c, relabel));
      return undefined;
    case 'readOrder':
      followed(run, relabel);
      run.decide(await readOrder(run, c.labelId, relabel));
      return undefined;
    case 'unwatchTracking':
      // Tracking moves over: the old label's membership ends, the new label's begins (a shard of today's count).
      await unwatch(run);
      state.trackingPoller = undefined;
      return undefined;
    case 'tellShop':
      if (c.event.type === 'label.created') begins(run, c.event.labelId!, relabel);
      return undefined;
    case 'watchTracking': {
      state.trackingPoller = undefined;
      // The machine tells a cancelled order nothing: tracking begins all the same.
      if (!relabel.begun) begins(run, c.labelId, relabel);
      const deadline = Date.parse(state.trackingStartedAt!) + run.policy.maxTrackingMs;
      state.trackingPoller = (await join(run, c.labelId, deadline)).poller;
      return undefined;
    }
    case 'relabelEnded':
      return c.made ? tracked(run, relabel) : notMadeOf(run, relabel);
    default:
      // The deadline is tracking's clock (tracking.ts); nothing else comes before the relabel's end.
      return undefined;
  }
}

/** The label call, cancelled when the merchant cancels the order meanwhile (the machine stops it); its answer as the machine's event. */
async function makeLabel(run: ShipmentShell, c: Extract<MachineCommand, { type: 'createLabel' }>, relabel: Relabel): Promise<MachineEvent> {
  const next = label.nextRequest(run, c.labelRequest, c.revision);
  // An attempt already sent finishes first.
  const scope = new CancellationScope();
  run.relabelScope = scope;
  try {
    relabel.made = await scope.run(() => run.callApi('createLabel', `${next.summary}, from the shop's order`, next.input));
    return { type: 'labelCreated', revision: c.revision, labelId: relabel.made.labelId };
  } catch (err) {
    relabel.failed = err;
    // A stopped or refused call: tracking of the old label goes on (the machine says so).
    return scope.consideredCancelled
      ? { type: 'labelCallStopped', revision: c.revision }
      : { type: 'labelRejected', revision: c.revision, correctable: true, kind: shippingErrorOf(err)?.kind ?? 'failed' };
  } finally {
    run.relabelScope = null;
  }
}

/** The machine follows the new label (it asks for its order): the workflow's state does too. */
function followed(run: ShipmentShell, relabel: Relabel): void {
  const { state } = run;
  forgetTracking(run);
  state.replacedLabels = [...(state.replacedLabels ?? []), { ...relabel.replaced, replacedAt: new Date().toISOString() }];
  applyLabel(state, relabel.made!);
  run.labelRequest = run.machine.labelRequest;
  // Taken: unless the merchant changed the order again meanwhile (a newer offer, and its mark, stay for the operator).
  run.shop!.marksDecided();
}

/** The new label's order: a failure is recorded and tracking moves over all the same. */
async function readOrder(run: ShipmentShell, labelId: string, relabel: Relabel): Promise<MachineEvent> {
  const { state } = run;
  try {
    order.read(run, await run.callApi('readOrder', `Read order ${labelId}`, labelId, ...run.onAccount()));
    return { type: 'orderRead', labelId, ok: true, trackingNumber: state.trackingNumber };
  } catch (err) {
    // Not the API's error: thrown once tracking moved over, so the machine is not left mid-relabel.
    if (shippingErrorOf(err)) order.notRead(run, err);
    else relabel.readThrew = { err };
    return { type: 'orderRead', labelId, ok: false, trackingNumber: state.trackingNumber };
  }
}

/** The revision the relabel used up (its request named it), and the label it replaces. */
function answerOf(run: ShipmentShell, relabel: Relabel): Pick<RelabelResult, 'revision' | 'replaced'> {
  const { labelId, trackingNumber } = relabel.replaced;
  return { revision: run.state.revision, replaced: { labelId, trackingNumber } };
}

function begins(run: ShipmentShell, labelId: string, relabel: Relabel): void {
  relabel.begun = true;
  order.trackingBegins(run, labelId, relabel.replaced);
}

/** The new label is tracked. */
function tracked(run: ShipmentShell, relabel: Relabel): RelabelResult {
  const { state } = run;
  const made = relabel.made!;
  run.publish();
  if (relabel.readThrew) throw relabel.readThrew.err;
  return {
    ...answerOf(run, relabel),
    labelCreated: true,
    labelId: made.labelId,
    idempotencyKey: made.idempotencyKey,
    trackingNumber: state.trackingNumber,
    error: null,
  };
}

/** The machine made no new label: cancelled in the shop meanwhile (a label bought is left to void), or refused. */
function notMadeOf(run: ShipmentShell, relabel: Relabel): RelabelResult {
  const { state } = run;
  const shopOrder = state.shopOrder!;
  const made = relabel.made;
  if (run.machine.lastError === 'cancelled_in_shop' && made) {
    // Bought, but the merchant cancelled the order meanwhile: never tracked, never told to the shop.
    shopOrder.labelsToVoid = [
      ...(shopOrder.labelsToVoid ?? []),
      { labelId: made.labelId, revision: state.revision, idempotencyKey: made.idempotencyKey, at: new Date().toISOString() },
    ];
    run.shop!.marksDecided();
    log.warn('relabel from the shop: the order was cancelled while its label was made; the label is unused', {
      orderId: state.orderId,
      labelId: made.labelId,
    });
    return notMade(run, relabel, made.idempotencyKey, {
      kind: 'cancelled_in_shop',
      message: `the order was ${shopOrder.facts.status} in the shop while the label was being made: label ${made.labelId} was bought and is unused; void it with the courier`,
      at: new Date().toISOString(),
    });
  }
  const failure = shippingErrorOf(relabel.failed);
  // The merchant's cancel stopped the call: it ends cancelled or with the failure of the attempt that was out.
  if (run.machine.lastError === 'cancelled_in_shop')
    return notMade(run, relabel, failure?.idempotencyKey ?? null, {
      kind: 'cancelled_in_shop',
      message: `the order was ${shopOrder.facts.status} in the shop while the label was being made: no label was bought`,
      at: new Date().toISOString(),
    });
  if (!failure) throw relabel.failed;
  log.warn('relabel from the shop refused: the old label is still tracked', { orderId: state.orderId, error: failure.message });
  return notMade(run, relabel, failure.idempotencyKey ?? null, recordError(failure));
}

/** No new label tracked: the old one still is (the revision is used up either way). */
function notMade(run: ShipmentShell, relabel: Relabel, idempotencyKey: string | null, error: RecordedError): RelabelResult {
  run.state.lastError = error;
  order.stillTracks(run);
  run.publish();
  return { ...answerOf(run, relabel), labelCreated: false, labelId: null, idempotencyKey, trackingNumber: null, error };
}

/**
 * The handler threw before the machine's relabel ended: it ends for the machine too (no label
 * followed when the call never answered), so tracking does not wait for it; what it would still
 * carry out is dropped with it.
 */
function settleThrown(run: ShipmentShell): void {
  const inFlight: Machine['relabel'] = run.machine.relabel;
  if (inFlight === null) return;
  run.decide(
    inFlight.stage === 'labelling'
      ? { type: 'labelRejected', revision: inFlight.revision, correctable: true, kind: 'failed' }
      : { type: 'orderRead', labelId: inFlight.labelId!, ok: false, trackingNumber: run.state.trackingNumber },
  );
  run.takeRelabelCommands();
}

/** What the shipment knew of the old label's tracking: the new label starts from nothing. */
function forgetTracking(run: ShipmentShell): void {
  const { state } = run;
  Object.assign(state, { trackingNumber: null, tag: null, subtag: null, subtagMessage: null, lastCheckpoint: null, labelUrl: null });
  state.checkpoints = 0;
  state.lastPolledAt = null;
}
