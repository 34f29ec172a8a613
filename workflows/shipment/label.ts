/**
 * Step 1, the label: the request of the revision the machine asks for (the idempotency key
 * makes any re-send return the same label), and its answer as the machine's event.
 *
 * A shipment a shop pull started also heeds the merchant's changes (shop-changes.ts): the machine
 * stops a call out when a change comes (an attempt already sent finishes first, so a label made
 * meanwhile is known and judged as after the label). The attempt itself checks the order with the
 * shop right before it is sent (shop-import/label-check.ts): a change found there comes back
 * unsent and is fed to the machine like a pulled one.
 */
import { CancellationScope, isCancellation, log } from '@temporalio/workflow';
import type { CreateLabelInput } from '../../activities/shipping-api';
import { recordError, shippingErrorOf, shopChangeOf } from './failures';
import type { MachineCommand, MachineEvent, ShipmentShell } from './shell';
import { applyLabel } from './state';
import { correctionAwaited, labelAsked } from '../../domain/shipment-machine/transitions';

/** Failures an operator can fix by resubmitting label data: the label was not created. */
const CORRECTABLE_KINDS = new Set(['courier_error', 'validation']);

type CreateLabel = Extract<MachineCommand, { type: 'createLabel' }>;

/** A call that ended without a label: its error, thrown again when the machine says the shipment fails. */
export interface LabelRefused {
  err: unknown;
}

/** Sends the machine's label request; returns its answer as the machine's event. */
export async function sendLabel(run: ShipmentShell, c: CreateLabel, refused: LabelRefused): Promise<MachineEvent> {
  const { shop } = run;
  run.labelRequest = c.labelRequest;
  run.correction = null;
  for (;;) {
    const request = nextRequest(run, c.labelRequest, c.revision);
    const reading = shop?.knownReading();
    if (reading) request.input.shopCheck = reading;
    const scope = new CancellationScope();
    run.labelScope = scope;
    try {
      const label = await scope.run(() => run.callApi('createLabel', request.summary, request.input));
      applyLabel(run.state, label);
      return { type: 'labelCreated', revision: c.revision, labelId: label.labelId };
    } catch (err) {
      const found = shopChangeOf(err);
      if (shop && found) {
        run.labelScope = null;
        // One this shipment would not take is re-sent unchecked (it cannot loop on it), unless a
        // change it took meanwhile (a pull's cancel while the attempt was out) stopped the call.
        if (shop.takeFoundBeforeLabel(found) || stoppedByChange(run)) return { type: 'labelCallStopped', revision: c.revision };
        continue;
      }
      return answerOf(run, c.revision, err, refused);
    } finally {
      run.labelScope = null;
    }
  }
}

/** The machine holds a merchant's change the label call was stopped for (it settles it before any label). */
const stoppedByChange = (run: ShipmentShell): boolean => (run.machine.shop?.pending.length ?? 0) > 0;

/**
 * The label's answer to the machine; a change that came while its call was out is judged as after
 * the label (by the machine), and the workflow records it so.
 */
export function labelAnswered(run: ShipmentShell, answer: MachineEvent): void {
  const pending = run.machine.shop?.pending ?? [];
  run.decide(answer);
  if (answer.type === 'labelCreated' && pending.length > 0 && run.machine.labelId === answer.labelId) run.shop?.settleAfterLabel(pending);
}

/** A failed call as the machine's event: stopped by a change, or a rejection (correctable or not). */
function answerOf(run: ShipmentShell, revision: number, err: unknown, refused: LabelRefused): MachineEvent {
  const failure = shippingErrorOf(err);
  // The change stopped the call: it ends cancelled, or, when an attempt was out, with that
  // attempt's failure (the server retries nothing after a cancel request). No label either way.
  const interrupted = stoppedByChange(run);
  if (interrupted && (isCancellation(err) || failure?.retryable === true)) return { type: 'labelCallStopped', revision };
  if (!failure) throw err;
  refused.err = err;
  const correctable = CORRECTABLE_KINDS.has(failure.kind);
  if (correctable) {
    run.state.lastError = recordError(failure);
    run.state.idempotencyKey = failure.idempotencyKey ?? run.state.idempotencyKey;
  }
  return { type: 'labelRejected', revision, correctable, kind: failure.kind };
}

/** The request of a revision, counted and shown as `creating_label` (a relabel names the shop's request). */
export function nextRequest(
  run: ShipmentShell,
  labelRequest = run.labelRequest,
  revision = run.state.revision,
): { summary: string; input: CreateLabelInput } {
  const { state } = run;
  labelAsked(state, revision);
  state.attempts.labelRequests++;
  run.publish();
  return {
    summary: `Create label (revision ${state.revision})`,
    input: {
      shop: state.shop,
      orderId: state.orderId,
      revision: state.revision,
      labelRequest,
      ...run.accountField(),
      // A parcel's key names its location; an order of one location keeps the key it always had.
      ...(state.parcel ? { location: state.parcel.location } : {}),
    },
  };
}

/** The shop hears of the rejection the state recorded. */
export function tellRejected(run: ShipmentShell, refused: LabelRefused): void {
  const failure = shippingErrorOf(refused.err)!;
  run.emit({
    type: 'label.rejected',
    data: {
      revision: run.state.revision,
      kind: failure.kind,
      courierCode: failure.courierCode ?? null,
      courierMessage: failure.courierMessage ?? null,
      message: failure.message,
      ...(failure.fields === undefined ? {} : { fields: failure.fields }),
      awaitingCorrection: true,
    },
  });
}

/** The wait for corrected label data begins: shown, published and logged (the machine's deadline ends it). */
export function correctionWaits(run: ShipmentShell): void {
  const { state } = run;
  if (run.machine.lastError === 'shop_change_rejected' && run.shop)
    state.lastError = {
      kind: 'shop_change_rejected',
      message: 'the order as changed in the shop does not map',
      fields: run.shop.problems,
      at: new Date().toISOString(),
    };
  correctionAwaited(state);
  run.publish();
  // An expected outcome: one line that says what comes next; the rejection is data, not an Error.
  const { kind, code, courierCode, message } = state.lastError ?? {};
  log.warn('label rejected: waiting for corrected label data (npm run cli -- resubmit, or cancel)', {
    orderId: state.orderId,
    shop: state.shop,
    rejection: { kind, code, courierCode, message },
  });
}
